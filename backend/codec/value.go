package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tablekit/tablekit"
)

// AppendValue appends the encoding of v to dst and returns the extended
// slice. InfMin and InfMax, which are never stored, encode as their type
// byte alone (which [DecodeValue] refuses).
func AppendValue(dst []byte, v tablekit.Value) []byte {
	dst = append(dst, byte(v.Type()))
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	case tablekit.TypeBinary:
		s, _ := v.BytesString()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	case tablekit.TypeInteger:
		n, _ := v.Int()
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	case tablekit.TypeDouble:
		f, _ := v.Float()
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	case tablekit.TypeBoolean:
		if b, _ := v.Bool(); b {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	return dst
}

// The errors DecodeValue returns, made once so that decoding never
// allocates, even when it fails.
var (
	errValueShort   = fmt.Errorf("%w: truncated value", ErrCorrupt)
	errValueType    = fmt.Errorf("%w: unknown value type byte", ErrCorrupt)
	errValueBoolean = fmt.Errorf("%w: Boolean byte not 0 or 1", ErrCorrupt)
)

// DecodeValue decodes the value encoded at the start of s (by [AppendValue])
// and returns it and the number of bytes it took; s may go on after it. A
// String or Binary value is a substring of s, not a copy: it keeps s's
// memory alive, and a caller who passes a string viewing bytes that will
// change (a store's iterator buffer) must copy the value, or the bytes,
// first. Bytes that are not a value (a truncated payload, an unknown type
// byte, InfMin or InfMax, a Boolean other than 0 or 1) give an error that
// matches [ErrCorrupt] and n = 0. It never allocates.
//
// It is the one decoder of the format: the file engine's rows and the
// DynamoDB adapter's binary cells both decode their values with it.
func DecodeValue(s string) (v tablekit.Value, n int, err error) {
	if len(s) == 0 {
		return tablekit.Value{}, 0, errValueShort
	}
	switch t := tablekit.Type(s[0]); t {
	case tablekit.TypeInteger, tablekit.TypeDouble:
		if len(s) < 9 {
			return tablekit.Value{}, 0, errValueShort
		}
		u := uint64(s[1])<<56 | uint64(s[2])<<48 | uint64(s[3])<<40 | uint64(s[4])<<32 |
			uint64(s[5])<<24 | uint64(s[6])<<16 | uint64(s[7])<<8 | uint64(s[8])
		if t == tablekit.TypeInteger {
			return tablekit.Integer(int64(u)), 9, nil
		}
		return tablekit.Double(math.Float64frombits(u)), 9, nil
	case tablekit.TypeBoolean:
		if len(s) < 2 {
			return tablekit.Value{}, 0, errValueShort
		}
		if s[1] > 1 {
			return tablekit.Value{}, 0, errValueBoolean
		}
		return tablekit.Boolean(s[1] == 1), 2, nil
	case tablekit.TypeString, tablekit.TypeBinary:
		l, k := uvarint(s[1:])
		if k <= 0 || l > uint64(len(s)-1-k) {
			return tablekit.Value{}, 0, errValueShort
		}
		end := 1 + k + int(l)
		if t == tablekit.TypeString {
			return tablekit.String(s[1+k : end]), end, nil
		}
		return tablekit.BinaryString(s[1+k : end]), end, nil
	}
	return tablekit.Value{}, 0, errValueType
}

// uvarint is binary.Uvarint over a string: the value and the number of
// bytes read, or k <= 0 when s holds no complete, in-range uvarint.
func uvarint(s string) (x uint64, k int) {
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}
