package tablekit

import (
	"cmp"
	"strings"
)

// KeyPart is one named column of a primary key.
type KeyPart struct {
	Name  string
	Value Value
}

// PrimaryKey is a row's key, in schema order: Key("a", v).Add("b", w).
type PrimaryKey []KeyPart

// Key returns a one-column primary key.
func Key(name string, v Value) PrimaryKey { return PrimaryKey{{Name: name, Value: v}} }

// Add returns a new key with one more column; k itself is not changed.
func (k PrimaryKey) Add(name string, v Value) PrimaryKey {
	out := make(PrimaryKey, len(k), len(k)+1)
	copy(out, k)
	return append(out, KeyPart{Name: name, Value: v})
}

// Get returns the value of key column name.
func (k PrimaryKey) Get(name string) (Value, bool) {
	for _, p := range k {
		if p.Name == name {
			return p.Value, true
		}
	}
	return Value{}, false
}

// Equal reports whether two keys have the same names and values.
func (k PrimaryKey) Equal(o PrimaryKey) bool {
	if len(k) != len(o) {
		return false
	}
	for i := range k {
		if k[i] != o[i] {
			return false
		}
	}
	return true
}

// Size is the number of bytes k counts for in size limits: names plus values.
func (k PrimaryKey) Size() int {
	n := 0
	for _, p := range k {
		n += len(p.Name) + p.Value.Size()
	}
	return n
}

// HasInf reports whether any column of k is InfMin or InfMax.
func (k PrimaryKey) HasInf() bool {
	for _, p := range k {
		if p.Value.IsInf() {
			return true
		}
	}
	return false
}

// String formats k as (name=Value, ...).
func (k PrimaryKey) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range k {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name)
		b.WriteByte('=')
		b.WriteString(p.Value.GoString())
	}
	b.WriteByte(')')
	return b.String()
}

// CompareKeys orders two keys of one schema as SPEC §4 does, column by
// column with [Compare] (names not compared; equal infinities end it).
func CompareKeys(a, b PrimaryKey) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if c := Compare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
		if a[i].Value.IsInf() {
			// Both are the same infinity: the columns after it do not matter.
			return 0
		}
	}
	return cmp.Compare(len(a), len(b))
}

// Clone returns a copy of k that shares no memory with it.
func (k PrimaryKey) Clone() PrimaryKey {
	if k == nil {
		return nil
	}
	return append(PrimaryKey(nil), k...)
}

// AutoIncrementIndex returns the index of k's [AutoIncrement] column, or -1.
func (k PrimaryKey) AutoIncrementIndex() int {
	for i, p := range k {
		if p.Value.typ == typeAutoIncrement {
			return i
		}
	}
	return -1
}

// WithAutoIncrement returns a copy of k with its AutoIncrement set to v.
func (k PrimaryKey) WithAutoIncrement(v int64) PrimaryKey {
	out := k.Clone()
	if i := out.AutoIncrementIndex(); i >= 0 {
		out[i].Value = Integer(v)
	}
	return out
}
