package plainbuffer

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"
)

// EncodeRows encodes a block: the header, then each row with its checksums.
// Like the SDKs, it writes TAG_ROW_DATA only when a row has columns.
//
// It panics on what no decoder accepts: a Value with an unknown Type, a
// cell Op that is not one of the CellOp constants, or a name or string
// longer than math.MaxInt32 bytes.
func EncodeRows(rows []Row) []byte {
	b := binary.LittleEndian.AppendUint32(nil, Header)
	for i := range rows {
		b = appendRow(b, &rows[i], nil)
	}
	return b
}

// EncodeRow encodes a block holding one row, in one allocation.
func EncodeRow(r Row) []byte {
	b := make([]byte, 0, 4+RowSize(r))
	return appendRow(binary.LittleEndian.AppendUint32(b, Header), &r, nil)
}

// WriteRow writes to w the bytes of r in a block (EncodeRow's answer
// after its 4-byte header), holding only some 40 KiB at a time: STRING
// and BLOB values longer than inlineValue are written from where they
// are, not copied, so the memory it uses does not grow with the row. It
// panics like EncodeRows and returns w's first error.
func WriteRow(w io.Writer, r Row) error {
	return writeRows(w, []Row{r}, false)
}

// WriteRows writes to w what EncodeRows encodes, holding only some 40
// KiB at a time whatever the rows' number and size (see WriteRow): the
// rows are encoded into one buffer, reused, which w gets when it holds
// streamBuffer bytes, so that many small rows make few writes. It panics
// like EncodeRows and returns w's first error.
func WriteRows(w io.Writer, rows []Row) error {
	return writeRows(w, rows, true)
}

func writeRows(w io.Writer, rows []Row, header bool) error {
	bp := streamBufs.Get().(*[]byte)
	var err error
	flush := func(b, value []byte) []byte {
		if err == nil && len(b) > 0 {
			_, err = w.Write(b)
		}
		if err == nil && len(value) > 0 {
			_, err = w.Write(value)
		}
		return b[:0]
	}
	b := (*bp)[:0]
	if header {
		b = binary.LittleEndian.AppendUint32(b, Header)
	}
	for i := range rows {
		b = appendRow(b, &rows[i], flush)
		if len(b) >= streamBuffer {
			b = flush(b, nil)
		}
		if err != nil {
			break
		}
	}
	flush(b, nil)
	if cap(b) <= streamBufSize {
		*bp = b[:0]
		streamBufs.Put(bp)
	}
	return err
}

// streamBuffer is how many bytes appendRow with a flush func lets its
// buffer hold before flushing it. STRING and BLOB values of at most
// inlineValue bytes are copied into the buffer (a write each would cost
// more than the copy); longer ones are passed to flush.
const (
	streamBuffer  = 32 << 10
	inlineValue   = 4 << 10
	streamBufSize = streamBuffer + inlineValue + 4<<10
)

// streamBufs holds writeRows's buffers (*[]byte of cap streamBufSize).
var streamBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, streamBufSize)
	return &b
}}

// RowSize is the number of bytes of r in a block (EncodeRow's answer has
// the 4-byte header too), computed without encoding it.
func RowSize(r Row) int {
	n := 1 + 2 // TAG_ROW_PK; TAG_ROW_CHECKSUM and the checksum
	for i := range r.PrimaryKey {
		n += cellSize(&r.PrimaryKey[i])
	}
	if len(r.Columns) > 0 {
		n++ // TAG_ROW_DATA
		for i := range r.Columns {
			n += cellSize(&r.Columns[i])
		}
	}
	if r.DeleteMarker {
		n++
	}
	if r.Sequence != nil {
		n += 1 + 4 + 1 + 4 + 1 + 4 + 1 + 8 + 1 + 4
	}
	return n
}

// cellSize is the number of bytes appendCell appends for c.
func cellSize(c *Cell) int {
	n := 2 + 4 + len(c.Name) + 2 // TAG_CELL, TAG_CELL_NAME, length, name; TAG_CELL_CHECKSUM and the checksum
	if v := c.Value; v != nil {
		n += 1 + 4 + 1 // TAG_CELL_VALUE, length, type
		switch v.Type {
		case TypeInteger, TypeDouble:
			n += 8
		case TypeBoolean:
			n++
		case TypeString, TypeBlob:
			n += 4 + len(v.Bytes)
		}
	}
	if c.Op != OpPut {
		n += 2
	}
	if c.Timestamp != nil {
		n += 1 + 8
	}
	return n
}

// EncodeValueNoLengthPrefix encodes v as type byte and payload with no
// leading length, the form filters and column conditions use. It panics
// like EncodeRows.
func EncodeValueNoLengthPrefix(v Value) []byte {
	return appendValue(nil, &v)
}

// appendRow appends r to b. With flush set, STRING and BLOB values longer
// than inlineValue are not appended: flush gets the bytes so far and the value, and returns
// the buffer to go on with; it also gets the buffer once it holds
// streamBuffer bytes.
func appendRow(b []byte, r *Row, flush func(b, value []byte) []byte) []byte {
	var crc byte
	b = append(b, tagRowPK)
	for i := range r.PrimaryKey {
		var c byte
		b, c = appendCell(b, &r.PrimaryKey[i], flush)
		crc = crc8Byte(crc, c)
	}
	if len(r.Columns) > 0 {
		b = append(b, tagRowData)
		for i := range r.Columns {
			var c byte
			b, c = appendCell(b, &r.Columns[i], flush)
			if flush != nil && len(b) >= streamBuffer {
				b = flush(b, nil)
			}
			crc = crc8Byte(crc, c)
		}
	}
	del := byte(0)
	if r.DeleteMarker {
		b = append(b, tagDeleteMarker)
		del = 1
	}
	if s := r.Sequence; s != nil {
		b = append(b, tagExtension)
		b = binary.LittleEndian.AppendUint32(b, extensionLen)
		b = append(b, tagSeqInfo)
		b = binary.LittleEndian.AppendUint32(b, seqInfoLen)
		b = append(b, tagSeqInfoEpoch)
		b = binary.LittleEndian.AppendUint32(b, uint32(s.Epoch))
		b = append(b, tagSeqInfoTS)
		b = binary.LittleEndian.AppendUint64(b, uint64(s.Timestamp))
		b = append(b, tagSeqInfoRowIndx)
		b = binary.LittleEndian.AppendUint32(b, uint32(s.RowIndex))
	}
	crc = crc8Byte(crc, del)
	return append(b, tagRowChecksum, crc)
}

// appendCell appends c and returns its checksum too; flush is appendRow's.
func appendCell(b []byte, c *Cell, flush func(b, value []byte) []byte) ([]byte, byte) {
	checkLen(len(c.Name), "cell name")
	if c.Op != OpPut && !c.Op.validOnWire() {
		panic(fmt.Sprintf("plainbuffer: cell %q has invalid op %s", c.Name, c.Op))
	}
	b = append(b, tagCell, tagCellName)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Name)))
	b = append(b, c.Name...)
	crc := crc8Bytes(0, b[len(b)-len(c.Name):])
	if v := c.Value; v != nil && flush != nil && (v.Type == TypeString || v.Type == TypeBlob) && len(v.Bytes) > inlineValue {
		// What appendValue appends, with the bytes passed to flush.
		checkValueLen(len(v.Bytes)+5, v.Type)
		b = append(b, tagCellValue)
		b = binary.LittleEndian.AppendUint32(b, uint32(5+len(v.Bytes)))
		b = append(b, byte(v.Type))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v.Bytes)))
		crc = crc8Bytes(crc8Bytes(crc, b[len(b)-5:]), v.Bytes)
		b = flush(b, v.Bytes)
	} else if c.Value != nil {
		b = append(b, tagCellValue)
		lenAt := len(b)
		b = append(b, 0, 0, 0, 0)
		b = appendValue(b, c.Value)
		body := b[lenAt+4:]
		binary.LittleEndian.PutUint32(b[lenAt:], uint32(len(body)))
		crc = crc8Bytes(crc, body)
	}
	if c.Op != OpPut {
		b = append(b, tagCellType, byte(c.Op))
	}
	if c.Timestamp != nil {
		b = append(b, tagCellTimestamp)
		b = binary.LittleEndian.AppendUint64(b, uint64(*c.Timestamp))
		crc = crc8Int64(crc, *c.Timestamp)
	}
	// Timestamp before op in the checksum; see decoder.cell.
	if c.Op != OpPut {
		crc = crc8Byte(crc, byte(c.Op))
	}
	return append(b, tagCellChecksum, crc), crc
}

// checkValueLen is checkLen for a value of type t, naming it only when
// it panics (not a string built for each value).
func checkValueLen(n int, t ValueType) {
	if n > math.MaxInt32 {
		checkLen(n, t.String()+" value")
	}
}

// appendValue appends the type byte and payload of v. The cell checksum
// covers exactly these bytes.
func appendValue(b []byte, v *Value) []byte {
	b = append(b, byte(v.Type))
	switch v.Type {
	case TypeInteger:
		b = binary.LittleEndian.AppendUint64(b, uint64(v.Int))
	case TypeDouble:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float))
	case TypeBoolean:
		if v.Bool {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case TypeString, TypeBlob:
		// The cell value length (type + int32 + bytes) must fit too.
		checkValueLen(len(v.Bytes)+5, v.Type)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v.Bytes)))
		b = append(b, v.Bytes...)
	case TypeInfMin, TypeInfMax, TypeAutoIncrement:
	default:
		panic(fmt.Sprintf("plainbuffer: cannot encode value of type %s", v.Type))
	}
	return b
}
