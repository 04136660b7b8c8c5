package plainbuffer

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DecodeRows decodes a whole block: the header and every row, verifying
// every cell and row checksum. A block holding only the header yields no
// rows and no error. Zero bytes after the last row are padding and are
// ignored: the Node.js SDK sizes its buffer from an upper bound and sends
// the unused tail (1 byte for a key with INF_MIN/INF_MAX, 22 for an update
// with an explicit timestamp, 5 for deleting one version). No row can start
// with a zero byte, so the padding is unambiguous.
func DecodeRows(b []byte) ([]Row, error) {
	return decodeRows(b, true)
}

// decodeRows is DecodeRows; verify=false skips checksum comparisons so that
// fuzzing can reach past them.
func decodeRows(b []byte, verify bool) ([]Row, error) {
	d := decoder{b: b, noVerify: !verify}
	h, err := d.u32("header")
	if err != nil {
		return nil, err
	}
	if h != Header {
		return nil, d.errAt(0, "Invalid header from plain buffer: 0x%08x", h)
	}
	var rows []Row
	for d.off < len(d.b) && !zeros(d.b[d.off:]) {
		r, err := d.row()
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// zeros reports whether b holds only zero bytes.
func zeros(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// DecodeRow decodes a block that must hold exactly one row.
func DecodeRow(b []byte) (Row, error) {
	rows, err := DecodeRows(b)
	if err != nil {
		return Row{}, err
	}
	if len(rows) != 1 {
		return Row{}, &DecodeError{Offset: len(b),
			Msg: fmt.Sprintf("expect exactly one row in plain buffer, got %d", len(rows))}
	}
	return rows[0], nil
}

// DecodeValueNoLengthPrefix decodes a single value written as type byte and
// payload with no leading length, as filters and column conditions carry it
// (SDK: ColumnValue.WriteCellValueWithoutLengthPrefix). b must hold exactly
// one value.
func DecodeValueNoLengthPrefix(b []byte) (Value, error) {
	d := decoder{b: b}
	v, err := d.value(len(b), "value")
	if err != nil {
		return Value{}, err
	}
	if d.off != len(b) {
		return Value{}, d.errAt(d.off, "invalid value: %d trailing bytes after %s value", len(b)-d.off, v.Type)
	}
	return v, nil
}

type decoder struct {
	b        []byte
	off      int
	noVerify bool // tests only
}

func (d *decoder) errAt(off int, format string, args ...any) *DecodeError {
	return &DecodeError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// need fails unless n more bytes remain before limit.
func (d *decoder) need(n, limit int, what string) error {
	if limit-d.off < n {
		return d.errAt(d.off, "truncated plain buffer: %s at offset %d needs %d bytes, %d left",
			what, d.off, n, limit-d.off)
	}
	return nil
}

func (d *decoder) byte1(what string) (byte, error) {
	if err := d.need(1, len(d.b), what); err != nil {
		return 0, err
	}
	c := d.b[d.off]
	d.off++
	return c, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, len(d.b), what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

func (d *decoder) i64(what string) (int64, error) {
	if err := d.need(8, len(d.b), what); err != nil {
		return 0, err
	}
	v := int64(binary.LittleEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v, nil
}

// length reads an int32 length and checks it against what is left before
// limit, so a forged length never drives an allocation.
func (d *decoder) length(limit int, what string) (int, error) {
	at := d.off
	if err := d.need(4, limit, what+" length"); err != nil {
		return 0, err
	}
	n := int32(binary.LittleEndian.Uint32(d.b[d.off:]))
	d.off += 4
	if n < 0 {
		return 0, d.errAt(at, "invalid %s length %d at offset %d", what, n, at)
	}
	if int(n) > limit-d.off {
		return 0, d.errAt(at, "truncated plain buffer: %s length %d at offset %d exceeds the %d bytes left",
			what, n, at, limit-d.off)
	}
	return int(n), nil
}

// peek returns the next byte, if any.
func (d *decoder) peek() (byte, bool) {
	if d.off < len(d.b) {
		return d.b[d.off], true
	}
	return 0, false
}

// expect consumes tag or fails, naming what was acceptable at this point.
func (d *decoder) expect(tag byte, where, want string) error {
	at := d.off
	t, err := d.byte1(tagName(tag))
	if err != nil {
		return err
	}
	if t != tag {
		return d.errAt(at, "invalid tag %s at offset %d in %s, expect %s", tagName(t), at, where, want)
	}
	return nil
}

func (d *decoder) row() (Row, error) {
	var r Row
	if err := d.expect(tagRowPK, "row", "TAG_ROW_PK"); err != nil {
		return Row{}, err
	}
	var crc byte
	var err error
	if r.PrimaryKey, crc, err = d.cells(crc); err != nil {
		return Row{}, err
	}
	hasData := false
	if t, ok := d.peek(); ok && t == tagRowData {
		d.off++
		hasData = true
		// An empty TAG_ROW_DATA section is accepted: the Go and Java SDKs
		// never write one, but other SDKs may (e.g. an update whose column
		// groups are all empty). It decodes the same as no section.
		if r.Columns, crc, err = d.cells(crc); err != nil {
			return Row{}, err
		}
	}
	if t, ok := d.peek(); ok && t == tagDeleteMarker {
		d.off++
		r.DeleteMarker = true
	}
	if t, ok := d.peek(); ok && t == tagExtension {
		d.off++
		if r.Sequence, err = d.extension(); err != nil {
			return Row{}, err
		}
	}
	del := byte(0)
	if r.DeleteMarker {
		del = 1
	}
	crc = crc8Byte(crc, del)
	if err := d.expect(tagRowChecksum, "row", rowTail(r, hasData)); err != nil {
		return Row{}, err
	}
	at := d.off
	got, err := d.byte1("row checksum")
	if err != nil {
		return Row{}, err
	}
	if got != crc && !d.noVerify {
		return Row{}, &DecodeError{Offset: at, checksum: true, Msg: "Row data broken, checksum is mismatch"}
	}
	return r, nil
}

// rowTail lists the tags that could still have come where a row checksum
// was expected, for the error message.
func rowTail(r Row, hasData bool) string {
	switch {
	case r.Sequence != nil:
		return "TAG_ROW_CHECKSUM"
	case r.DeleteMarker:
		return "TAG_EXTENSION or TAG_ROW_CHECKSUM"
	case hasData:
		return "TAG_CELL, TAG_DELETE_ROW_MARKER, TAG_EXTENSION or TAG_ROW_CHECKSUM"
	}
	return "TAG_CELL, TAG_ROW_DATA, TAG_DELETE_ROW_MARKER, TAG_EXTENSION or TAG_ROW_CHECKSUM"
}

// cells reads cells while the next tag is TAG_CELL, folding each cell
// checksum into the row checksum.
func (d *decoder) cells(rowCRC byte) ([]Cell, byte, error) {
	var cs []Cell
	for {
		if t, ok := d.peek(); !ok || t != tagCell {
			return cs, rowCRC, nil
		}
		d.off++
		c, crc, err := d.cell()
		if err != nil {
			return nil, 0, err
		}
		cs = append(cs, c)
		rowCRC = crc8Byte(rowCRC, crc)
	}
}

// cell reads a cell after its TAG_CELL and returns it with its checksum.
func (d *decoder) cell() (Cell, byte, error) {
	var c Cell
	if err := d.expect(tagCellName, "cell", "TAG_CELL_NAME"); err != nil {
		return Cell{}, 0, err
	}
	n, err := d.length(len(d.b), "cell name")
	if err != nil {
		return Cell{}, 0, err
	}
	name := d.b[d.off : d.off+n]
	d.off += n
	c.Name = string(name)
	crc := crc8Bytes(0, name)

	want := "TAG_CELL_VALUE, TAG_CELL_TYPE, TAG_CELL_TIMESTAMP or TAG_CELL_CHECKSUM"
	if t, ok := d.peek(); ok && t == tagCellValue {
		d.off++
		at := d.off
		total, err := d.length(len(d.b), "cell value")
		if err != nil {
			return Cell{}, 0, err
		}
		if total == 0 {
			return Cell{}, 0, d.errAt(at, "invalid cell value length 0 at offset %d", at)
		}
		start, end := d.off, d.off+total
		v, err := d.value(end, "cell value")
		if err != nil {
			return Cell{}, 0, err
		}
		if d.off != end {
			return Cell{}, 0, d.errAt(at, "invalid cell value length %d at offset %d, %s value takes %d",
				total, at, v.Type, d.off-start)
		}
		c.Value = &v
		crc = crc8Bytes(crc, d.b[start:end])
		want = "TAG_CELL_TYPE, TAG_CELL_TIMESTAMP or TAG_CELL_CHECKSUM"
	}
	if t, ok := d.peek(); ok && t == tagCellType {
		d.off++
		at := d.off
		op, err := d.byte1("cell type")
		if err != nil {
			return Cell{}, 0, err
		}
		if !CellOp(op).validOnWire() {
			return Cell{}, 0, d.errAt(at, "invalid cell type 0x%02x at offset %d", op, at)
		}
		c.Op = CellOp(op)
		want = "TAG_CELL_TIMESTAMP or TAG_CELL_CHECKSUM"
	}
	if t, ok := d.peek(); ok && t == tagCellTimestamp {
		d.off++
		ts, err := d.i64("cell timestamp")
		if err != nil {
			return Cell{}, 0, err
		}
		c.Timestamp = &ts
		want = "TAG_CELL_CHECKSUM"
	}
	// The checksum folds the timestamp in before the op, although the op
	// comes first on the wire (SDK: PlainBufferCell.getCheckSum).
	if c.Timestamp != nil {
		crc = crc8Int64(crc, *c.Timestamp)
	}
	if c.Op != OpPut {
		crc = crc8Byte(crc, byte(c.Op))
	}
	if err := d.expect(tagCellChecksum, "cell", want); err != nil {
		return Cell{}, 0, err
	}
	at := d.off
	got, err := d.byte1("cell checksum")
	if err != nil {
		return Cell{}, 0, err
	}
	if got != crc && !d.noVerify {
		return Cell{}, 0, &DecodeError{Offset: at, checksum: true, Msg: "Cell data broken, checksum is mismatch"}
	}
	return c, crc, nil
}

// value reads a type byte and its payload, which must end by limit.
func (d *decoder) value(limit int, what string) (Value, error) {
	at := d.off
	if err := d.need(1, limit, what+" type"); err != nil {
		return Value{}, err
	}
	v := Value{Type: ValueType(d.b[d.off])}
	d.off++
	switch v.Type {
	case TypeInteger, TypeDouble:
		if err := d.need(8, limit, fmt.Sprintf("%s %s", v.Type, what)); err != nil {
			return Value{}, err
		}
		u := binary.LittleEndian.Uint64(d.b[d.off:])
		d.off += 8
		if v.Type == TypeInteger {
			v.Int = int64(u)
		} else {
			v.Float = math.Float64frombits(u)
		}
	case TypeBoolean:
		// Writers only emit 0 or 1; the SDK readers take any non-zero byte
		// as true, but then re-encoding would change the bytes, so reject.
		if err := d.need(1, limit, "BOOLEAN "+what); err != nil {
			return Value{}, err
		}
		switch d.b[d.off] {
		case 0:
		case 1:
			v.Bool = true
		default:
			return Value{}, d.errAt(d.off, "invalid boolean value 0x%02x at offset %d", d.b[d.off], d.off)
		}
		d.off++
	case TypeString, TypeBlob:
		n, err := d.length(limit, fmt.Sprintf("%s %s", v.Type, what))
		if err != nil {
			return Value{}, err
		}
		v.Bytes = make([]byte, n)
		copy(v.Bytes, d.b[d.off:])
		d.off += n
	case TypeInfMin, TypeInfMax, TypeAutoIncrement:
	default:
		return Value{}, d.errAt(at, "unsupported value type 0x%02x at offset %d", byte(v.Type), at)
	}
	return v, nil
}

// Extension layout (Java SDK PlainBufferCodedOutputStream.writeExtension;
// the Go SDK reads it in readRowExtension but never writes it):
//
//	TAG_EXTENSION int32(24) TAG_SEQ_INFO int32(19)
//	TAG_SEQ_INFO_EPOCH int32 TAG_SEQ_INFO_TS int64 TAG_SEQ_INFO_ROW_INDEX int32
const (
	seqInfoLen   = 1 + 4 + 1 + 8 + 1 + 4
	extensionLen = 1 + 4 + seqInfoLen
)

// extension reads a row extension after its TAG_EXTENSION. Only the
// sequence info is known; anything else in it is rejected.
func (d *decoder) extension() (*SequenceInfo, error) {
	at := d.off
	n, err := d.length(len(d.b), "extension")
	if err != nil {
		return nil, err
	}
	if n != extensionLen {
		return nil, d.errAt(at, "invalid extension length %d at offset %d, expect %d", n, at, extensionLen)
	}
	if err := d.expect(tagSeqInfo, "extension", "TAG_SEQ_INFO"); err != nil {
		return nil, err
	}
	at = d.off
	if n, err = d.length(len(d.b), "sequence info"); err != nil {
		return nil, err
	}
	if n != seqInfoLen {
		return nil, d.errAt(at, "invalid sequence info length %d at offset %d, expect %d", n, at, seqInfoLen)
	}
	var s SequenceInfo
	if err := d.expect(tagSeqInfoEpoch, "sequence info", "TAG_SEQ_INFO_EPOCH"); err != nil {
		return nil, err
	}
	u, err := d.u32("sequence epoch")
	if err != nil {
		return nil, err
	}
	s.Epoch = int32(u)
	if err := d.expect(tagSeqInfoTS, "sequence info", "TAG_SEQ_INFO_TS"); err != nil {
		return nil, err
	}
	if s.Timestamp, err = d.i64("sequence timestamp"); err != nil {
		return nil, err
	}
	if err := d.expect(tagSeqInfoRowIndx, "sequence info", "TAG_SEQ_INFO_ROW_INDEX"); err != nil {
		return nil, err
	}
	if u, err = d.u32("sequence row index"); err != nil {
		return nil, err
	}
	s.RowIndex = int32(u)
	return &s, nil
}
