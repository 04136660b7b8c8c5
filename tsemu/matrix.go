package tsemu

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// SimpleRowMatrix (DBT_SIMPLE_ROW_MATRIX) is the columnar block GetRange
// answers in when data_block_type_hint asks for it. The layout, as the
// SDKs read it (all integers little-endian):
//
//	int32 version 0x304d5253, int32 data offset, int32 options offset,
//	int32 key column count, int32 attribute column count,
//	field names (int16 length + bytes; key columns, then attributes),
//	options (tag 3 + int32 row count; tag 10 + one byte: whole keys),
//	rows (tag 2, then one value per field: type byte, then 8 bytes for
//	INTEGER and DOUBLE, 1 for BOOLEAN, int32 length + bytes for STRING and
//	BINARY; type 6 with nothing after it for a column the row lacks),
//	tag 1 + the CRC-8 of the rows.
//
// A matrix holds one value per cell and no timestamp: each column's newest
// selected version.
const (
	matrixVersion      = 0x304d5253
	matrixTagChecksum  = 1
	matrixTagRow       = 2
	matrixTagRowCount  = 3
	matrixTagEntireKey = 10
	matrixNull         = 6
)

// matrixRow is one row of a GetRange answer.
type matrixRow struct {
	key  tablekit.PrimaryKey
	cols []tablekit.Column
}

// encodeMatrix encodes rows as a SimpleRowMatrix block. The attribute
// fields are the requested columns (columns_to_get, key columns left out)
// or, when none were requested, every attribute name the rows carry,
// sorted.
func encodeMatrix(meta *tablekit.TableMeta, requested []string, rows []matrixRow) []byte {
	var attrs []string
	if requested != nil {
		for _, c := range requested {
			if !isKeyName(meta, c) && !slices.Contains(attrs, c) {
				attrs = append(attrs, c)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, r := range rows {
			for _, c := range r.cols {
				if !seen[c.Name] {
					seen[c.Name] = true
					attrs = append(attrs, c.Name)
				}
			}
		}
		slices.Sort(attrs)
	}
	le := binary.LittleEndian
	b := le.AppendUint32(nil, matrixVersion)
	b = append(b, make([]byte, 8)...) // data and options offsets, set below
	b = le.AppendUint32(b, uint32(len(meta.Key)))
	b = le.AppendUint32(b, uint32(len(attrs)))
	for _, k := range meta.Key {
		b = le.AppendUint16(b, uint16(len(k.Name)))
		b = append(b, k.Name...)
	}
	for _, a := range attrs {
		b = le.AppendUint16(b, uint16(len(a)))
		b = append(b, a...)
	}
	le.PutUint32(b[8:], uint32(len(b)))
	b = append(b, matrixTagRowCount)
	b = le.AppendUint32(b, uint32(len(rows)))
	b = append(b, matrixTagEntireKey, 1)
	le.PutUint32(b[4:], uint32(len(b)))
	data := len(b)
	for _, r := range rows {
		b = append(b, matrixTagRow)
		for _, p := range r.key {
			b = appendMatrixValue(b, p.Value)
		}
		for _, a := range attrs {
			// Columns come grouped by name, newest version first.
			i := slices.IndexFunc(r.cols, func(c tablekit.Column) bool { return c.Name == a })
			if i < 0 {
				b = append(b, matrixNull)
				continue
			}
			b = appendMatrixValue(b, r.cols[i].Value)
		}
	}
	sum := plainbuffer.Checksum(b[data:])
	return append(b, matrixTagChecksum, sum)
}

func appendMatrixValue(b []byte, v tablekit.Value) []byte {
	pv := fromValue(v)
	b = append(b, byte(pv.Type))
	le := binary.LittleEndian
	switch pv.Type {
	case plainbuffer.TypeInteger:
		return le.AppendUint64(b, uint64(pv.Int))
	case plainbuffer.TypeDouble:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(pv.Float))
	case plainbuffer.TypeBoolean:
		if pv.Bool {
			return append(b, 1)
		}
		return append(b, 0)
	default: // STRING, BINARY
		b = le.AppendUint32(b, uint32(len(pv.Bytes)))
		return append(b, pv.Bytes...)
	}
}
