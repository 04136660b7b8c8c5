package tablekit

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Type is the type of a [Value]. The zero Type is not a valid type.
type Type uint8

// The value types of SPEC §2.
const (
	TypeString Type = iota + 1
	TypeInteger
	TypeDouble
	TypeBoolean
	TypeBinary

	typeInfMin        // only in range bounds
	typeInfMax        // only in range bounds
	typeAutoIncrement // only in a put's or update's key (SPEC §14)
)

// String returns the name of the type as SPEC.md spells it.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "String"
	case TypeInteger:
		return "Integer"
	case TypeDouble:
		return "Double"
	case TypeBoolean:
		return "Boolean"
	case TypeBinary:
		return "Binary"
	case typeInfMin:
		return "InfMin"
	case typeInfMax:
		return "InfMax"
	case typeAutoIncrement:
		return "AutoIncrement"
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// IsKeyType reports whether t may be the type of a primary-key column.
func (t Type) IsKeyType() bool { return t == TypeString || t == TypeInteger || t == TypeBinary }

// Value is an immutable typed cell or key value, made by [String],
// [Integer], [Double], [Boolean] or [Binary]; the zero Value is invalid.
type Value struct {
	typ Type
	num uint64 // Integer (two's complement), Double (IEEE bits), Boolean (0/1)
	str string // String, and Binary held as immutable bytes
}

// String returns a String value. It must be valid UTF-8 to be stored.
func String(s string) Value { return Value{typ: TypeString, str: s} }

// Integer returns an Integer value.
func Integer(i int64) Value { return Value{typ: TypeInteger, num: uint64(i)} }

// Double returns a Double value. NaN and ±Inf are refused when written.
func Double(f float64) Value { return Value{typ: TypeDouble, num: math.Float64bits(f)} }

// Boolean returns a Boolean value.
func Boolean(b bool) Value {
	v := Value{typ: TypeBoolean}
	if b {
		v.num = 1
	}
	return v
}

// Binary returns a Binary value holding a copy of b (nil is empty).
func Binary(b []byte) Value { return Value{typ: TypeBinary, str: string(b)} }

// BinaryString returns a Binary value of the bytes of s, without a copy.
func BinaryString(s string) Value { return Value{typ: TypeBinary, str: s} }

var (
	InfMin        = Value{typ: typeInfMin}        // below every value; only in range bounds
	InfMax        = Value{typ: typeInfMax}        // above every value; only in range bounds
	AutoIncrement = Value{typ: typeAutoIncrement} // in a put's or update's key: the store assigns it (SPEC §14)
)

// Type returns the type of v; the zero Value has type 0.
func (v Value) Type() Type { return v.typ }

// IsInf reports whether v is [InfMin] or [InfMax].
func (v Value) IsInf() bool { return v.typ == typeInfMin || v.typ == typeInfMax }

// IsInfMin reports whether v is [InfMin].
func (v Value) IsInfMin() bool { return v.typ == typeInfMin }

// IsInfMax reports whether v is [InfMax].
func (v Value) IsInfMax() bool { return v.typ == typeInfMax }

// IsAutoIncrement reports whether v is [AutoIncrement].
func (v Value) IsAutoIncrement() bool { return v.typ == typeAutoIncrement }

// IsValid reports whether v is of one of the five types (no placeholder).
func (v Value) IsValid() bool { return v.typ >= TypeString && v.typ <= TypeBinary }

// Str returns the string of a String value; ok is false for other types.
func (v Value) Str() (s string, ok bool) { return v.str, v.typ == TypeString }

// Int returns the integer of an Integer value; ok is false for other types.
func (v Value) Int() (i int64, ok bool) { return int64(v.num), v.typ == TypeInteger }

// Float returns the float of a Double value; ok is false for other types.
func (v Value) Float() (f float64, ok bool) { return math.Float64frombits(v.num), v.typ == TypeDouble }

// Bool returns the boolean of a Boolean value; ok is false for other types.
func (v Value) Bool() (b bool, ok bool) { return v.num == 1, v.typ == TypeBoolean }

// Bytes returns a copy of a Binary value's bytes; ok is false for other
// types.
func (v Value) Bytes() (b []byte, ok bool) {
	if v.typ != TypeBinary {
		return nil, false
	}
	return []byte(v.str), true
}

// BytesString returns the bytes of a Binary value as a string, without a copy.
func (v Value) BytesString() (s string, ok bool) { return v.str, v.typ == TypeBinary }

// Equal reports whether v and w are of one type and value (Double(-0) ≠ 0).
func (v Value) Equal(w Value) bool { return v == w }

// Size is v's bytes in SPEC's size limits (8 for numbers, 1 for Boolean).
func (v Value) Size() int {
	switch v.typ {
	case TypeString, TypeBinary:
		return len(v.str)
	case TypeInteger, TypeDouble:
		return 8
	case TypeBoolean:
		return 1
	}
	return 0
}

// maxQuoted is how many bytes of a String (half as many of a Binary, which
// doubles in hex) a message quotes; SPEC §12 keeps messages short.
const maxQuoted = 64

// String formats v untyped (7, click, 0x00ff, true), cut at 64 bytes; %#v: typed.
func (v Value) String() string {
	switch v.typ {
	case TypeString:
		if len(v.str) > maxQuoted {
			return cutString(v.str) + "…"
		}
		return v.str
	case TypeInteger:
		return strconv.FormatInt(int64(v.num), 10)
	case TypeDouble:
		return strconv.FormatFloat(math.Float64frombits(v.num), 'g', -1, 64)
	case TypeBoolean:
		return strconv.FormatBool(v.num == 1)
	case TypeBinary:
		if len(v.str) > maxQuoted/2 {
			return fmt.Sprintf("0x%x…", v.str[:maxQuoted/2])
		}
		return fmt.Sprintf("0x%x", v.str)
	case typeInfMin, typeInfMax, typeAutoIncrement:
		return v.typ.String()
	}
	return "invalid"
}

// cutString returns the first maxQuoted bytes of s, never splitting a rune.
func cutString(s string) string {
	cut := s[:maxQuoted]
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut
}

// GoString formats v typed, as %#v and messages do: String("a"), InfMin.
func (v Value) GoString() string {
	switch v.typ {
	case TypeString:
		if len(v.str) > maxQuoted {
			return fmt.Sprintf("String(%s…, %d bytes)", strconv.Quote(cutString(v.str)), len(v.str))
		}
		return "String(" + strconv.Quote(v.str) + ")"
	case TypeInteger:
		return "Integer(" + strconv.FormatInt(int64(v.num), 10) + ")"
	case TypeDouble:
		return "Double(" + strconv.FormatFloat(math.Float64frombits(v.num), 'g', -1, 64) + ")"
	case TypeBoolean:
		return "Boolean(" + strconv.FormatBool(v.num == 1) + ")"
	case TypeBinary:
		if len(v.str) > maxQuoted/2 {
			return fmt.Sprintf("Binary(0x%x…, %d bytes)", v.str[:maxQuoted/2], len(v.str))
		}
		return fmt.Sprintf("Binary(0x%x)", v.str)
	case typeInfMin, typeInfMax, typeAutoIncrement:
		return v.typ.String()
	}
	return "Value(invalid)"
}

// Compare orders values as SPEC §4 and §10 do (numbers numerically,
// String and Binary bytewise, false first, InfMin and InfMax at the ends).
func Compare(a, b Value) int {
	if a.typ == b.typ {
		switch a.typ {
		case TypeString, TypeBinary:
			return cmp.Compare(a.str, b.str)
		case TypeInteger:
			return cmp.Compare(int64(a.num), int64(b.num))
		case TypeDouble:
			return cmp.Compare(math.Float64frombits(a.num), math.Float64frombits(b.num))
		case TypeBoolean:
			return cmp.Compare(a.num, b.num)
		}
		return 0
	}
	switch {
	case a.typ == typeInfMin || b.typ == typeInfMax:
		return -1
	case a.typ == typeInfMax || b.typ == typeInfMin:
		return 1
	}
	return cmp.Compare(a.typ, b.typ)
}

// Column is one cell: name, value, and version in Unix ms (0 in a write:
// now).
type Column struct {
	Name    string
	Value   Value
	Version int64
}

// Row is a row as a read returns it: its key, then its cells in ascending
// column-name order, the versions of one column newest first.
type Row struct {
	Key     PrimaryKey
	Columns []Column
}

// Get returns the newest returned cell of column name.
func (r Row) Get(name string) (Value, bool) {
	for _, c := range r.Columns {
		if c.Name == name {
			return c.Value, true
		}
	}
	return Value{}, false
}

// Versions returns the returned cells of column name, newest first.
func (r Row) Versions(name string) []Column {
	var out []Column
	for _, c := range r.Columns {
		if c.Name == name {
			out = append(out, c)
		} else if len(out) > 0 {
			break
		}
	}
	return out
}

// Size is r's bytes in the 4 MiB page limit (names, values, 8 per version).
func (r Row) Size() int {
	n := r.Key.Size()
	for _, c := range r.Columns {
		n += len(c.Name) + c.Value.Size() + 8
	}
	return n
}

// KeyColumn is one column of a table's primary-key schema.
type KeyColumn struct {
	Name          string
	Type          Type
	AutoIncrement bool `json:",omitempty"` // SPEC §14: the store assigns it (one Integer column, not the first)
}

// KeySchema is a table's primary key: 1–4 columns, first the partition key.
type KeySchema []KeyColumn

// TableOptions are a table's changeable options (SPEC §3), in whole
// seconds; a zero field is the default in CreateTable, unchanged in
// UpdateTable.
type TableOptions struct {
	TTL              time.Duration // cells' lifetime: NoExpiry (default) or ≥ MinTTL
	MaxVersions      int           // versions per column kept visible, ≥ 1
	MaxVersionOffset time.Duration // how far from now a version may be written, ≥ 1 s
}

// Option defaults and limits (SPEC §3).
const (
	NoExpiry                time.Duration = -time.Second // SPEC's TTL -1: never expire
	MinTTL                  time.Duration = 86400 * time.Second
	DefaultMaxVersions                    = 1
	DefaultMaxVersionOffset time.Duration = 86400 * time.Second
	MaxOptionValue                        = 1<<31 - 1 // bounds each option (TTL in s)
)

// seconds returns d in whole seconds and whether it is a whole number of them.
func seconds(d time.Duration) (int64, bool) { return int64(d / time.Second), d%time.Second == 0 }

// TTLSeconds returns the TTL in seconds (NoExpiry is -1).
func (o TableOptions) TTLSeconds() int64 { return int64(o.TTL / time.Second) }

// MaxVersionOffsetSeconds returns MaxVersionOffset in seconds.
func (o TableOptions) MaxVersionOffsetSeconds() int64 { return int64(o.MaxVersionOffset / time.Second) }

// TableMeta describes a table (SPEC §3); Incarnation is "" and Generation 0
// where the store keeps the schema and applies the options itself.
type TableMeta struct {
	Name        string
	Key         KeySchema
	Options     TableOptions
	Incarnation string      // this creation's id, set by CreateTable
	Generation  int64       // 1 when created, +1 per UpdateTable
	Indexes     []IndexSpec `json:",omitempty"` // SPEC §16, kept by the Client (index.go)
}
