package codec

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tablekit/tablekit"
)

// intWidth is the encoded size of an Integer column.
const intWidth = 20

// ErrCorrupt reports bytes that are not an encoding: a key of the schema
// ([DecodeKey]) or a value ([DecodeValue]). Every decoding error matches it
// with errors.Is.
var ErrCorrupt = errors.New("codec: malformed encoding")

// AppendKey appends the encoding of k (which must be valid for schema and
// contain no InfMin/InfMax) to dst.
func AppendKey(dst []byte, k tablekit.PrimaryKey) []byte {
	for _, p := range k {
		dst = appendValue(dst, p.Value)
	}
	return dst
}

// EncodeKey returns the encoding of k.
func EncodeKey(k tablekit.PrimaryKey) []byte { return AppendKey(make([]byte, 0, KeySize(k)), k) }

// EncodeKeyString returns the encoding of k as a string, in one allocation
// of exactly its size (string(EncodeKey(k)) takes two).
func EncodeKeyString(k tablekit.PrimaryKey) string {
	b := EncodeKey(k)
	// b is new and never written again: the string may own it.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// KeySize returns the length of k's encoding.
func KeySize(k tablekit.PrimaryKey) int {
	n := 0
	for _, p := range k {
		switch p.Value.Type() {
		case tablekit.TypeInteger:
			n += intWidth
		default:
			s := raw(p.Value)
			n += len(s) + 2 + strings.Count(s, "\x00") // each 0x00 escaped in two bytes
		}
	}
	return n
}

func raw(v tablekit.Value) string {
	if s, ok := v.Str(); ok {
		return s
	}
	s, _ := v.BytesString()
	return s
}

func appendValue(dst []byte, v tablekit.Value) []byte {
	if i, ok := v.Int(); ok {
		if i >= 0 {
			dst = append(dst, '=')
			return appendPadded(dst, uint64(i))
		}
		dst = append(dst, '-')
		return appendPadded(dst, uint64(i)+(1<<63))
	}
	s := raw(v)
	for {
		j := strings.IndexByte(s, 0)
		if j < 0 {
			dst = append(dst, s...)
			break
		}
		dst = append(dst, s[:j]...)
		dst = append(dst, 0x00, 0xFF)
		s = s[j+1:]
	}
	return append(dst, 0x00, 0x01)
}

// appendPadded appends u (< 10^19) as 19 zero-padded decimal digits.
func appendPadded(dst []byte, u uint64) []byte {
	n := len(dst)
	dst = append(dst, "0000000000000000000"...)
	for i := n + 18; u > 0; i-- {
		dst[i] = byte('0' + u%10)
		u /= 10
	}
	return dst
}

// DecodeKey decodes b as a key of schema. Its String and Binary values share
// one new buffer.
func DecodeKey(schema tablekit.KeySchema, b []byte) (tablekit.PrimaryKey, error) {
	k, _, err := AppendDecodeKey(make(tablekit.PrimaryKey, 0, len(schema)), make([]byte, 0, len(b)), schema, b)
	return k, err
}

// AppendDecodeKey is [DecodeKey] into the caller's memory, for a reader that
// decodes key after key without allocating: it appends the key's parts to
// dst and the bytes of its String and Binary values (at most len(b) bytes)
// to buf, and returns both. The values view buf's bytes: the caller must
// never change the bytes the returned buf holds (it may append after
// them). With fewer than len(b) bytes free in buf, an append may move it to
// a new allocation (the earlier values keep viewing the old one).
func AppendDecodeKey(dst tablekit.PrimaryKey, buf []byte, schema tablekit.KeySchema, b []byte) (tablekit.PrimaryKey, []byte, error) {
	for _, kc := range schema {
		var (
			v   tablekit.Value
			err error
		)
		v, b, buf, err = decodeKeyPart(kc.Type, b, buf)
		if err != nil {
			return nil, buf, fmt.Errorf("%w: column %q: %v", ErrCorrupt, kc.Name, err)
		}
		dst = append(dst, tablekit.KeyPart{Name: kc.Name, Value: v})
	}
	if len(b) != 0 {
		return nil, buf, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(b))
	}
	return dst, buf, nil
}

// decodeKeyPart decodes the value of type t at the start of b, appending
// the bytes of a String or Binary to buf (which it views), and returns the
// rest of b.
func decodeKeyPart(t tablekit.Type, b, buf []byte) (tablekit.Value, []byte, []byte, error) {
	switch t {
	case tablekit.TypeInteger:
		if len(b) < intWidth || (b[0] != '=' && b[0] != '-') {
			return tablekit.Value{}, nil, buf, errors.New("short or unsigned Integer")
		}
		var u uint64
		for _, c := range b[1:intWidth] {
			if c < '0' || c > '9' {
				return tablekit.Value{}, nil, buf, errors.New("non-digit in integer")
			}
			d := uint64(c - '0')
			if u > (1<<64-1-d)/10 {
				return tablekit.Value{}, nil, buf, errors.New("integer out of range")
			}
			u = u*10 + d
		}
		if u > 1<<63-1 {
			return tablekit.Value{}, nil, buf, errors.New("integer out of range")
		}
		if b[0] == '=' {
			return tablekit.Integer(int64(u)), b[intWidth:], buf, nil
		}
		return tablekit.Integer(int64(u - (1 << 63))), b[intWidth:], buf, nil
	case tablekit.TypeString, tablekit.TypeBinary:
		n := len(buf)
		for {
			j := bytes.IndexByte(b, 0)
			if j < 0 || j+1 >= len(b) {
				return tablekit.Value{}, nil, buf, errors.New("unterminated")
			}
			buf = append(buf, b[:j]...)
			switch b[j+1] {
			case 0xFF:
				buf = append(buf, 0)
				b = b[j+2:]
			case 0x01:
				s := unsafe.String(unsafe.SliceData(buf[n:]), len(buf)-n)
				if t == tablekit.TypeString {
					return tablekit.String(s), b[j+2:], buf, nil
				}
				return tablekit.BinaryString(s), b[j+2:], buf, nil
			default:
				return tablekit.Value{}, nil, buf, errors.New("bad escape")
			}
		}
	}
	return tablekit.Value{}, nil, buf, fmt.Errorf("type %v is not a key type", t)
}

// Bound maps a key range bound (a key whose columns may be InfMin/InfMax) to
// bytes. With exact true, b is the encoding of a real key. Otherwise the
// first infinite column decides: for InfMin, every key that SPEC orders above
// the bound encodes to at least b and every key below it to less than b; for
// InfMax, the same holds with b = the prefix's successor, and b nil means
// "above every key". Columns after the first infinite one do not matter.
func Bound(k tablekit.PrimaryKey) (b []byte, exact bool) {
	for i, p := range k {
		if p.Value.IsInfMin() {
			return AppendKey([]byte{}, k[:i]), false
		}
		if p.Value.IsInfMax() {
			return PrefixSuccessor(AppendKey(nil, k[:i])), false
		}
	}
	return EncodeKey(k), true
}

// AppendBound is [Bound] appending b to dst (so that a caller can keep it on
// its stack): it returns dst extended by b, exact as Bound does, and top
// true, with dst unchanged, where Bound returns nil (above every key).
func AppendBound(dst []byte, k tablekit.PrimaryKey) (out []byte, exact, top bool) {
	for i, p := range k {
		if p.Value.IsInfMin() {
			return AppendKey(dst, k[:i]), false, false
		}
		if p.Value.IsInfMax() {
			n := len(dst)
			out = AppendKey(dst, k[:i])
			for j := len(out) - 1; j >= n; j-- { // PrefixSuccessor in place
				if out[j] != 0xFF {
					out[j]++
					return out[:j+1], false, false
				}
			}
			return dst, false, true
		}
	}
	return AppendKey(dst, k), true, false
}

// PrefixSuccessor returns the smallest byte string above every string with
// prefix p, or nil when there is none (p empty or all 0xFF).
func PrefixSuccessor(p []byte) []byte {
	s := append([]byte(nil), p...)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xFF {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}
