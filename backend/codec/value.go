package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/wire"
)

// AppendValue appends the encoding of v to dst and returns the extended
// slice. InfMin and InfMax, which are never stored, encode as their type
// byte alone (which [DecodeValue] refuses).
func AppendValue(dst []byte, v tablekit.Value) []byte {
	dst = append(dst, byte(v.Type()))
	switch v.Type() {
	case tablekit.TypeString, tablekit.TypeBinary:
		dst = wire.AppendString(dst, Bytes(v))
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
		b, k := wire.String(s[1:])
		if k <= 0 {
			return tablekit.Value{}, 0, errValueShort
		}
		if t == tablekit.TypeString {
			return tablekit.String(b), 1 + k, nil
		}
		return tablekit.BinaryString(b), 1 + k, nil
	}
	return tablekit.Value{}, 0, errValueType
}

// ValueSize returns the length of [AppendValue]'s encoding of v.
func ValueSize(v tablekit.Value) int {
	switch v.Type() {
	case tablekit.TypeString, tablekit.TypeBinary:
		return 1 + wire.StringLen(Bytes(v))
	case tablekit.TypeInteger, tablekit.TypeDouble:
		return 9
	case tablekit.TypeBoolean:
		return 2
	}
	return 1
}

// Bytes returns the bytes of a String or Binary value, as a string that
// shares v's memory; "" for a value of any other type.
func Bytes(v tablekit.Value) string {
	if s, ok := v.Str(); ok {
		return s
	}
	s, _ := v.BytesString()
	return s
}
