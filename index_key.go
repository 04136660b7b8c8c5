package tablekit

import (
	"encoding/binary"
	"slices"
	"strings"
)

// indexKeySchema is ix's key: its columns, then the table's other key
// columns in the table's order (SPEC §16).
func indexKeySchema(m *TableMeta, ix *IndexSpec) KeySchema {
	ks := make(KeySchema, 0, len(ix.Columns)+len(m.Key))
	ks = append(ks, ix.Columns...)
	for _, kc := range m.Key {
		if !slices.ContainsFunc(ix.Columns, func(c KeyColumn) bool { return c.Name == kc.Name }) {
			kc.AutoIncrement = false
			ks = append(ks, kc)
		}
	}
	return ks
}

// appendIndexValue appends v's order-preserving encoding: String and
// Binary with 0x00 escaped as 00 FF and terminated by 00 01, Integer as 8
// bytes big endian with the sign bit flipped. [AutoIncrement] takes the 8
// bytes of the Integer it stands for (those of 0): a placeholder the
// backend fills in ([AssignEntries]).
func appendIndexValue(dst []byte, v Value) []byte {
	if v.typ == TypeInteger || v.typ == typeAutoIncrement {
		return binary.BigEndian.AppendUint64(dst, v.num^(1<<63))
	}
	for i := 0; i < len(v.str); i++ {
		if v.str[i] == 0 {
			dst = append(dst, 0, 0xff)
		} else {
			dst = append(dst, v.str[i])
		}
	}
	return append(dst, 0, 1)
}

// decodeIndexKey decodes an entry key's bytes by schema ks. A String or
// Binary value without an escaped 0x00 is a substring of b (no copy).
func decodeIndexKey(ks KeySchema, b string) (PrimaryKey, bool) {
	k := make(PrimaryKey, len(ks))
	return k, decodeIndexKeyInto(k, ks, b)
}

// decodeIndexKeyInto is decodeIndexKey into k, of len(ks) parts.
func decodeIndexKeyInto(k PrimaryKey, ks KeySchema, b string) bool {
	for i, kc := range ks {
		if kc.Type == TypeInteger {
			if len(b) < 8 {
				return false
			}
			k[i] = KeyPart{Name: kc.Name, Value: Value{typ: TypeInteger, num: bigEndian64(b) ^ (1 << 63)}}
			b = b[8:]
			continue
		}
		n := strings.IndexByte(b, 0)
		if n < 0 || n+1 >= len(b) {
			return false
		}
		if b[n+1] == 1 { // no escape: the value is b[:n]
			k[i] = KeyPart{Name: kc.Name, Value: Value{typ: kc.Type, str: b[:n]}}
			b = b[n+2:]
			continue
		}
		var s []byte
		for {
			if len(b) < 1 {
				return false
			}
			if b[0] != 0 {
				s = append(s, b[0])
				b = b[1:]
				continue
			}
			if len(b) < 2 {
				return false
			}
			if b[1] == 1 {
				b = b[2:]
				break
			}
			if b[1] != 0xff {
				return false
			}
			s = append(s, 0)
			b = b[2:]
		}
		k[i] = KeyPart{Name: kc.Name, Value: Value{typ: kc.Type, str: string(s)}}
	}
	return len(b) == 0
}

// bigEndian64 reads b's first 8 bytes as a big-endian number.
func bigEndian64(b string) uint64 {
	_ = b[7]
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// entryChunks cuts an encoded index key into an entry table's key.
func entryChunks(b []byte) PrimaryKey {
	return appendEntryChunks(make(PrimaryKey, 0, len(entryKey)), b)
}

// appendEntryChunks appends entryChunks(b)'s parts to k; the pieces share
// one string.
func appendEntryChunks(k PrimaryKey, b []byte) PrimaryKey {
	s := string(b)
	for i := range entryKey {
		n := min(len(s), MaxKeyValueSize)
		k = append(k, KeyPart{Name: entryKey[i].Name, Value: BinaryString(s[:n])})
		s = s[n:]
	}
	return k
}

// entryBytes is the encoded index key of an entry table's key (its first
// piece itself when the others are empty, as they are for keys of up to
// 1,024 bytes).
func entryBytes(k PrimaryKey) string {
	n, last := 0, 0
	for i, p := range k {
		if len(p.Value.str) > 0 {
			n += len(p.Value.str)
			last = i
		}
	}
	if last == 0 && len(k) > 0 {
		return k[0].Value.str
	}
	return string(appendEntryBytes(make([]byte, 0, n), k))
}

// appendEntryBytes appends entryBytes(k) to dst.
func appendEntryBytes(dst []byte, k PrimaryKey) []byte {
	for _, p := range k {
		dst = append(dst, p.Value.str...)
	}
	return dst
}

// entryTop is the entry key above every other.
var entryTop = PrimaryKey{{Name: "k0", Value: InfMax}, {Name: "k1", Value: InfMax}, {Name: "k2", Value: InfMax}, {Name: "k3", Value: InfMax}}

// indexBound turns a bound over the index key (InfMin and InfMax allowed)
// into an entry-table bound holding the same entries.
func indexBound(k PrimaryKey) PrimaryKey {
	var b []byte
	for _, p := range k {
		switch {
		case p.Value.IsInfMin():
			return entryChunks(b)
		case p.Value.IsInfMax():
			// Above every key starting with b: b's prefix successor.
			for len(b) > 0 && b[len(b)-1] == 0xff {
				b = b[:len(b)-1]
			}
			if len(b) == 0 {
				return entryTop
			}
			b[len(b)-1]++
			return entryChunks(b)
		}
		b = appendIndexValue(b, p.Value)
	}
	return entryChunks(b)
}

// checkIndexKey checks a key (or, with bound, a range bound) against an
// index's key schema.
func checkIndexKey(ks KeySchema, k PrimaryKey, bound bool) *Error {
	if len(k) != len(ks) {
		return Errorf(ErrInvalidPrimaryKey, "index key %v has %d columns, the index has %d", k, len(k), len(ks))
	}
	for i, kc := range ks {
		if k[i].Name != kc.Name {
			return Errorf(ErrInvalidPrimaryKey, "index key column %d is named %q, the index says %q", i+1, k[i].Name, kc.Name)
		}
		if err := checkKeyValue(kc, k[i].Value, bound); err != nil {
			return err
		}
	}
	return nil
}
