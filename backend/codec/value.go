// Package valuecodec is the one binary encoding of a tablekit.Value that
// tablekit's stores and tools share: the DynamoDB adapter's stored cells,
// the file engine's rows and the CLI's row checksums.
//
// A value is one type byte (its tablekit.Type: 1 String, 2 Integer,
// 3 Double, 4 Boolean, 5 Binary) followed by its payload: Integer and
// Double 8 bytes big endian (Double as its IEEE 754 bits), Boolean one byte
// (0 or 1), String and Binary a uvarint length then the bytes. The format
// is stored on disk and in DynamoDB items: it never changes.
package codec

import (
	"encoding/binary"
	"math"

	"github.com/tablekit/tablekit"
)

// Append appends the encoding of v to dst and returns the extended slice.
// InfMin and InfMax, which are never stored, encode as their type byte
// alone.
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
