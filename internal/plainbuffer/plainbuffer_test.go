package plainbuffer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// sameValue compares the fields that matter for v's type; doubles by bits.
func sameValue(a, b *Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.Type != b.Type {
		return false
	}
	switch a.Type {
	case TypeInteger:
		return a.Int == b.Int
	case TypeDouble:
		return math.Float64bits(a.Float) == math.Float64bits(b.Float)
	case TypeBoolean:
		return a.Bool == b.Bool
	case TypeString, TypeBlob:
		return bytes.Equal(a.Bytes, b.Bytes)
	}
	return true
}

func sameCells(a, b []Cell) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.Op != y.Op || !sameValue(x.Value, y.Value) {
			return false
		}
		if (x.Timestamp == nil) != (y.Timestamp == nil) || x.Timestamp != nil && *x.Timestamp != *y.Timestamp {
			return false
		}
	}
	return true
}

func sameRow(a, b Row) bool {
	if !sameCells(a.PrimaryKey, b.PrimaryKey) || !sameCells(a.Columns, b.Columns) || a.DeleteMarker != b.DeleteMarker {
		return false
	}
	if (a.Sequence == nil) != (b.Sequence == nil) || a.Sequence != nil && *a.Sequence != *b.Sequence {
		return false
	}
	return true
}

func sameRows(a, b []Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameRow(a[i], b[i]) {
			return false
		}
	}
	return true
}

func fmtCell(c Cell) string {
	s := fmt.Sprintf("{%q", c.Name)
	if c.Value != nil {
		s += fmt.Sprintf(" %s=%s", c.Value.Type, c.Value)
	}
	if c.Op != OpPut {
		s += " op=" + c.Op.String()
	}
	if c.Timestamp != nil {
		s += fmt.Sprintf(" ts=%d", *c.Timestamp)
	}
	return s + "}"
}

func fmtRow(r Row) string {
	var sb strings.Builder
	sb.WriteString("pk[")
	for _, c := range r.PrimaryKey {
		sb.WriteString(fmtCell(c))
	}
	sb.WriteString("] cols[")
	for _, c := range r.Columns {
		sb.WriteString(fmtCell(c))
	}
	fmt.Fprintf(&sb, "] del=%v", r.DeleteMarker)
	if r.Sequence != nil {
		fmt.Fprintf(&sb, " seq=%+v", *r.Sequence)
	}
	return sb.String()
}

func fmtRows(rs []Row) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = "{" + fmtRow(r) + "}"
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func sampleValues() []*Value {
	long := bytes.Repeat([]byte("x"), 300)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return []*Value{
		nil,
		IntegerValue(0), IntegerValue(-1), IntegerValue(math.MaxInt64), IntegerValue(math.MinInt64),
		DoubleValue(0), DoubleValue(math.Copysign(0, -1)), DoubleValue(3.25), DoubleValue(math.NaN()),
		DoubleValue(math.Inf(-1)), DoubleValue(math.SmallestNonzeroFloat64),
		BooleanValue(false), BooleanValue(true),
		StringValue(""), StringValue("héllo, 世界"), {Type: TypeString, Bytes: long}, {Type: TypeString, Bytes: []byte{0xff, 0xfe}},
		BlobValue(nil), BlobValue([]byte{}), BlobValue(all),
		InfMinValue(), InfMaxValue(), AutoIncrementValue(),
	}
}

var (
	sampleOps        = []CellOp{OpPut, OpDeleteAllVersions, OpDeleteOneVersion, OpIncrement}
	sampleTimestamps = []*int64{nil, ptr[int64](0), ptr[int64](1_700_000_000_123), ptr[int64](-1), ptr[int64](math.MaxInt64)}
)

// TestRoundTripEveryCombination encodes every value × op × timestamp
// combination as a primary-key cell and as an attribute cell, with and
// without the delete marker and the sequence extension.
func TestRoundTripEveryCombination(t *testing.T) {
	var all []Cell
	for _, v := range sampleValues() {
		for _, op := range sampleOps {
			for _, ts := range sampleTimestamps {
				all = append(all, Cell{Name: "c", Value: v, Op: op, Timestamp: ts})
			}
		}
	}
	seqs := []*SequenceInfo{nil, {Epoch: 1, Timestamp: 1_700_000_000_000_000, RowIndex: 7}, {Epoch: -1, Timestamp: math.MinInt64, RowIndex: math.MaxInt32}}
	n := 0
	for i, c := range all {
		for _, del := range []bool{false, true} {
			for _, seq := range seqs {
				for _, r := range []Row{
					{PrimaryKey: []Cell{c}, DeleteMarker: del, Sequence: seq},
					{PrimaryKey: []Cell{{Name: "pk", Value: IntegerValue(int64(i))}}, Columns: []Cell{c}, DeleteMarker: del, Sequence: seq},
				} {
					checkRoundTrip(t, []Row{r})
					n++
				}
			}
		}
	}
	// Everything in one block, and rows with many cells.
	var block []Row
	for i := 0; i+3 < len(all); i += 3 {
		block = append(block, Row{PrimaryKey: all[i : i+1], Columns: all[i+1 : i+3], DeleteMarker: i%2 == 0})
	}
	checkRoundTrip(t, block)
	checkRoundTrip(t, []Row{{PrimaryKey: all[:len(all)/2], Columns: all[len(all)/2:]}})
	// Edge shapes: no cells at all, empty names, a row without a primary key cell.
	checkRoundTrip(t, []Row{{}})
	checkRoundTrip(t, []Row{{PrimaryKey: []Cell{{Name: ""}}, Columns: []Cell{{Name: ""}}}})
	checkRoundTrip(t, nil)
	t.Logf("%d single-row round trips", n)
}

func checkRoundTrip(t *testing.T, rows []Row) {
	t.Helper()
	b := EncodeRows(rows)
	got, err := DecodeRows(b)
	if err != nil {
		t.Fatalf("DecodeRows(EncodeRows(%s)): %v", fmtRows(rows), err)
	}
	if !sameRows(got, rows) {
		t.Fatalf("round trip mismatch:\n got %s\nwant %s", fmtRows(got), fmtRows(rows))
	}
	if again := EncodeRows(got); !bytes.Equal(again, b) {
		t.Fatalf("re-encoding differs:\n got %x\nwant %x", again, b)
	}
	size := 4
	for _, r := range rows {
		size += RowSize(r)
	}
	if size != len(b) {
		t.Fatalf("RowSize sums to %d bytes with the header, the encoding has %d: %s", size, len(b), fmtRows(rows))
	}
	var streamed bytes.Buffer
	streamed.Write(b[:4])
	for _, r := range rows {
		if err := WriteRow(&streamed, r); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(streamed.Bytes(), b) {
		t.Fatalf("WriteRow differs from EncodeRows:\n got %x\nwant %x", streamed.Bytes(), b)
	}
	streamed.Reset()
	if err := WriteRows(&streamed, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), b) {
		t.Fatalf("WriteRows differs from EncodeRows:\n got %x\nwant %x", streamed.Bytes(), b)
	}
	if len(rows) == 1 {
		r, err := DecodeRow(b)
		if err != nil || !sameRow(r, rows[0]) {
			t.Fatalf("DecodeRow = %v, %v; want %v", fmtRow(r), err, fmtRow(rows[0]))
		}
		if !bytes.Equal(EncodeRow(rows[0]), b) {
			t.Fatalf("EncodeRow differs from EncodeRows")
		}
	}
}

func TestValueNoLengthPrefixRoundTrip(t *testing.T) {
	for _, v := range sampleValues() {
		if v == nil {
			continue
		}
		b := EncodeValueNoLengthPrefix(*v)
		got, err := DecodeValueNoLengthPrefix(b)
		if err != nil || !sameValue(&got, v) {
			t.Fatalf("DecodeValueNoLengthPrefix(%x) = %v, %v; want %v", b, got, err, v)
		}
		if err == nil && (v.Type == TypeString || v.Type == TypeBlob) && len(v.Bytes) > 0 && &got.Bytes[0] == &b[5] {
			t.Fatalf("decoded bytes alias the input")
		}
		// A trailing byte, or any truncation, is an error.
		if _, err := DecodeValueNoLengthPrefix(append(b, 0)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("trailing byte after %v: err = %v", v, err)
		}
		for n := range len(b) {
			if _, err := DecodeValueNoLengthPrefix(b[:n]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v truncated to %d bytes: err = %v", v, n, err)
			}
		}
	}
}

// TestGolden pins the exact bytes of a small row, computed by hand from the
// format description (independently of the SDK cross-checks).
func TestGolden(t *testing.T) {
	r := Row{
		PrimaryKey: []Cell{{Name: "k", Value: IntegerValue(1)}},
		Columns:    []Cell{{Name: "c", Op: OpDeleteOneVersion, Timestamp: ptr[int64](2)}},
	}
	var crcPK byte
	crcPK = crc8Bytes(crcPK, []byte("k"))
	crcPK = crc8Bytes(crcPK, []byte{0, 1, 0, 0, 0, 0, 0, 0, 0})
	var crcC byte
	crcC = crc8Bytes(crcC, []byte("c"))
	crcC = crc8Bytes(crcC, []byte{2, 0, 0, 0, 0, 0, 0, 0})
	crcC = crc8Bytes(crcC, []byte{3})
	crcRow := crc8Bytes(0, []byte{crcPK, crcC, 0})
	want := []byte{
		0x75, 0, 0, 0,
		0x01,
		0x03, 0x04, 1, 0, 0, 0, 'k', 0x05, 9, 0, 0, 0, 0x00, 1, 0, 0, 0, 0, 0, 0, 0, 0x0A, crcPK,
		0x02,
		0x03, 0x04, 1, 0, 0, 0, 'c', 0x06, 0x03, 0x07, 2, 0, 0, 0, 0, 0, 0, 0, 0x0A, crcC,
		0x09, crcRow,
	}
	if got := EncodeRow(r); !bytes.Equal(got, want) {
		t.Fatalf("EncodeRow:\n got %x\nwant %x", got, want)
	}
	// CRC-8/0x07 check value ("123456789" -> 0xF4).
	if got := crc8Bytes(0, []byte("123456789")); got != 0xF4 {
		t.Fatalf("crc8 check = %#x, want 0xf4", got)
	}
}

// rawCell builds a cell by hand (after TAG_CELL is written by the caller)
// with a correct checksum, so tests can reach checks past the checksum.
type rawCell struct {
	name      string
	value     []byte // type + payload; nil = no TAG_CELL_VALUE
	valueLen  *int32 // overrides the length prefix
	op        *byte
	ts        *int64
	crcAdjust byte
}

func (c rawCell) crc() byte {
	crc := crc8Bytes(0, []byte(c.name))
	if c.value != nil {
		crc = crc8Bytes(crc, c.value)
	}
	if c.ts != nil {
		crc = crc8Int64(crc, *c.ts)
	}
	if c.op != nil {
		crc = crc8Byte(crc, *c.op)
	}
	return crc ^ c.crcAdjust
}

func (c rawCell) bytes() []byte {
	b := []byte{tagCell, tagCellName}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.name)))
	b = append(b, c.name...)
	if c.value != nil {
		b = append(b, tagCellValue)
		n := int32(len(c.value))
		if c.valueLen != nil {
			n = *c.valueLen
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		b = append(b, c.value...)
	}
	if c.op != nil {
		b = append(b, tagCellType, *c.op)
	}
	if c.ts != nil {
		b = append(b, tagCellTimestamp)
		b = binary.LittleEndian.AppendUint64(b, uint64(*c.ts))
	}
	return append(b, tagCellChecksum, c.crc())
}

// rawRow is a one-row block with pk cells, optional data cells and a
// correct row checksum.
func rawRow(pk []rawCell, data []rawCell, dataTag bool) []byte {
	b := []byte{0x75, 0, 0, 0, tagRowPK}
	var crc byte
	for _, c := range pk {
		b = append(b, c.bytes()...)
		crc = crc8Byte(crc, c.crc())
	}
	if dataTag {
		b = append(b, tagRowData)
	}
	for _, c := range data {
		b = append(b, c.bytes()...)
		crc = crc8Byte(crc, c.crc())
	}
	crc = crc8Byte(crc, 0)
	return append(b, tagRowChecksum, crc)
}

func intPayload(v int64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{byte(TypeInteger)}, uint64(v))
}

func TestRawBuilderMatchesEncoder(t *testing.T) {
	got := rawRow([]rawCell{{name: "k", value: intPayload(5)}}, []rawCell{{name: "c", op: ptr[byte](1)}}, true)
	want := EncodeRow(Row{PrimaryKey: []Cell{{Name: "k", Value: IntegerValue(5)}}, Columns: []Cell{{Name: "c", Op: OpDeleteAllVersions}}})
	if !bytes.Equal(got, want) {
		t.Fatalf("raw builder and encoder disagree:\n%x\n%x", got, want)
	}
}

func sampleBlock() []byte {
	return EncodeRows([]Row{
		{
			PrimaryKey: []Cell{{Name: "pk1", Value: StringValue("user-1")}, {Name: "pk2", Value: IntegerValue(42)}},
			Columns: []Cell{
				{Name: "a", Value: DoubleValue(1.5), Timestamp: ptr[int64](1000)},
				{Name: "b", Op: OpDeleteAllVersions},
				{Name: "c", Op: OpDeleteOneVersion, Timestamp: ptr[int64](2000)},
				{Name: "d", Value: IntegerValue(3), Op: OpIncrement},
				{Name: "e", Value: BooleanValue(true)},
				{Name: "f", Value: BlobValue([]byte{0, 1, 2})},
			},
		},
		{PrimaryKey: []Cell{{Name: "pk1", Value: InfMinValue()}, {Name: "pk2", Value: InfMaxValue()}}, DeleteMarker: true},
		{PrimaryKey: []Cell{{Name: "pk1", Value: StringValue("x")}, {Name: "pk2", Value: AutoIncrementValue()}}, Sequence: &SequenceInfo{1, 2, 3}},
	})
}

// checksumOffsets returns the offsets of every cell checksum byte and
// of every row checksum byte in a block produced by our encoder, found by
// walking the decoder over it.
func checksumOffsets(t *testing.T, b []byte) (cells, rows []int) {
	t.Helper()
	d := decoder{b: b, off: 4}
	for d.off < len(b) {
		d.off++ // TAG_ROW_PK
		for {
			tag, _ := d.peek()
			if tag == tagRowData {
				d.off++
				continue
			}
			if tag != tagCell {
				break
			}
			d.off++
			if _, _, err := d.cell(); err != nil {
				panic(err)
			}
			cells = append(cells, d.off-1)
		}
		for {
			tag, _ := d.peek()
			if tag == tagRowChecksum {
				break
			}
			if tag == tagExtension {
				d.off += 1 + 4 + extensionLen
				continue
			}
			d.off++
		}
		rows = append(rows, d.off+1)
		d.off += 2
	}
	return cells, rows
}

func TestChecksumCorruption(t *testing.T) {
	b := sampleBlock()
	if _, err := DecodeRows(b); err != nil {
		t.Fatal(err)
	}
	cells, rows := checksumOffsets(t, b)
	if len(cells) != 12 || len(rows) != 3 {
		t.Fatalf("found %d cell and %d row checksums, want 12 and 3", len(cells), len(rows))
	}
	check := func(off int, want string) {
		t.Helper()
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			c := bytes.Clone(b)
			c[off] ^= flip
			_, err := DecodeRows(c)
			var de *DecodeError
			if !errors.As(err, &de) || err.Error() != want || de.Offset != off ||
				!errors.Is(err, ErrChecksumMismatch) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("flip %#x at %d: err = %v (%#v), want %q at that offset", flip, off, err, de, want)
			}
		}
	}
	for _, off := range cells {
		check(off, "Cell data broken, checksum is mismatch")
	}
	for _, off := range rows {
		check(off, "Row data broken, checksum is mismatch")
	}
}

func TestPayloadCorruptionIsCaughtByChecksum(t *testing.T) {
	row := Row{PrimaryKey: []Cell{{Name: "pk", Value: IntegerValue(7)}}, Columns: []Cell{{Name: "s", Value: StringValue("hello"), Timestamp: ptr[int64](99)}}}
	b := EncodeRow(row)
	// Flip a byte inside the integer, the string, the name and the timestamp.
	for _, needle := range [][]byte{{7, 0, 0, 0}, []byte("hello"), []byte("pk"), {99, 0, 0}} {
		i := bytes.Index(b, needle)
		c := bytes.Clone(b)
		c[i] ^= 0x20
		if _, err := DecodeRows(c); err == nil || err.Error() != "Cell data broken, checksum is mismatch" {
			t.Fatalf("corrupting %q: err = %v", needle, err)
		}
	}
	// Dropping the delete marker (or adding one) breaks the row checksum.
	del := EncodeRow(Row{PrimaryKey: row.PrimaryKey, DeleteMarker: true})
	i := bytes.LastIndexByte(del, tagDeleteMarker)
	noDel := append(bytes.Clone(del[:i]), del[i+1:]...)
	if _, err := DecodeRows(noDel); err == nil || err.Error() != "Row data broken, checksum is mismatch" {
		t.Fatalf("dropped delete marker: err = %v", err)
	}
}

// TestZeroPadding: zero bytes after the last row are padding (the Node.js
// SDK sends 1, 5 or 22 of them); a non-zero byte after them is still an
// error.
func TestZeroPadding(t *testing.T) {
	pk := []rawCell{{name: "k", value: intPayload(1)}}
	valid := rawRow(pk, nil, false)
	want, err := DecodeRow(valid)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 5, 22} {
		got, err := DecodeRow(append(bytes.Clone(valid), make([]byte, n)...))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%d zero bytes: got %+v, %v; want %+v", n, got, err, want)
		}
	}
	if rows, err := DecodeRows(append(binary.LittleEndian.AppendUint32(nil, Header), 0, 0)); err != nil || len(rows) != 0 {
		t.Fatalf("header and padding: %v, %v; want no rows", rows, err)
	}
	if _, err := DecodeRows(append(append(bytes.Clone(valid), 0, 0), 7)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("padding then a non-zero byte: err = %v", err)
	}
}

func TestMalformed(t *testing.T) {
	pk := []rawCell{{name: "k", value: intPayload(1)}}
	valid := rawRow(pk, nil, false)
	huge := binary.LittleEndian.AppendUint32([]byte{0x75, 0, 0, 0, tagRowPK, tagCell, tagCellName}, 0x7fffffff)
	neg := binary.LittleEndian.AppendUint32([]byte{0x75, 0, 0, 0, tagRowPK, tagCell, tagCellName}, 0xffffffff)
	tests := []struct {
		name string
		in   []byte
		want string // substring of the error
	}{
		{"empty", nil, "truncated plain buffer: header"},
		{"short header", []byte{0x75, 0}, "truncated plain buffer: header"},
		{"bad header", []byte{0x76, 0, 0, 0}, "Invalid header from plain buffer"},
		{"zero then data", append(bytes.Clone(valid), 0, tagRowPK), "invalid tag UNKNOWN_TAG(0x00)"},
		{"trailing tag", append(bytes.Clone(valid), tagRowPK), "truncated plain buffer"},
		{"no TAG_ROW_PK", []byte{0x75, 0, 0, 0, tagRowChecksum, 0}, "invalid tag TAG_ROW_CHECKSUM at offset 4 in row, expect TAG_ROW_PK"},
		{"huge name length", huge, "truncated plain buffer: cell name length 2147483647"},
		{"negative name length", neg, "invalid cell name length -1"},
		{"huge string length", rawRow([]rawCell{{name: "k", value: binary.LittleEndian.AppendUint32([]byte{3}, 0x7fffffff)}}, nil, false),
			"truncated plain buffer: STRING cell value length 2147483647"},
		{"value length too long", rawRow([]rawCell{{name: "k", value: intPayload(1), valueLen: ptr[int32](10)}}, nil, false),
			"invalid cell value length 10"},
		{"value length too short", rawRow([]rawCell{{name: "k", value: intPayload(1), valueLen: ptr[int32](5)}}, nil, false),
			"truncated plain buffer: INTEGER cell value"},
		{"value length zero", rawRow([]rawCell{{name: "k", value: []byte{}, valueLen: ptr[int32](0)}}, nil, false),
			"invalid cell value length 0"},
		{"value length negative", rawRow([]rawCell{{name: "k", value: intPayload(1), valueLen: ptr[int32](-9)}}, nil, false),
			"invalid cell value length -9"},
		{"string inner length mismatch", rawRow([]rawCell{{name: "k", value: append(binary.LittleEndian.AppendUint32([]byte{3}, 1), "ab"...)}}, nil, false),
			"invalid cell value length 7"},
		{"VT_NULL", rawRow([]rawCell{{name: "k", value: []byte{6}}}, nil, false), "unsupported value type 0x06"},
		{"unknown type", rawRow([]rawCell{{name: "k", value: []byte{0x42}}}, nil, false), "unsupported value type 0x42"},
		{"bool 2", rawRow([]rawCell{{name: "k", value: []byte{2, 2}}}, nil, false), "invalid boolean value 0x02"},
		{"op 0", rawRow(pk, []rawCell{{name: "c", op: ptr[byte](0)}}, true), "invalid cell type 0x00"},
		{"op 2", rawRow(pk, []rawCell{{name: "c", op: ptr[byte](2)}}, true), "invalid cell type 0x02"},
		{"missing name", []byte{0x75, 0, 0, 0, tagRowPK, tagCell, tagCellValue}, "invalid tag TAG_CELL_VALUE at offset 6 in cell, expect TAG_CELL_NAME"},
		{"missing cell checksum", []byte{0x75, 0, 0, 0, tagRowPK, tagCell, tagCellName, 0, 0, 0, 0, tagRowChecksum, 0},
			"invalid tag TAG_ROW_CHECKSUM at offset 11 in cell, expect TAG_CELL_VALUE, TAG_CELL_TYPE, TAG_CELL_TIMESTAMP or TAG_CELL_CHECKSUM"},
		{"missing row checksum", valid[:len(valid)-2], "truncated plain buffer: TAG_ROW_CHECKSUM"},
		{"truncated timestamp", []byte{0x75, 0, 0, 0, tagRowPK, tagCell, tagCellName, 0, 0, 0, 0, tagCellTimestamp, 1, 2},
			"truncated plain buffer: cell timestamp at offset 12 needs 8 bytes, 2 left"},
		{"delete marker twice", func() []byte {
			b := bytes.Clone(valid[:len(valid)-2])
			b = append(b, tagDeleteMarker, tagDeleteMarker, tagRowChecksum, crc8Bytes(0, []byte{pk[0].crc(), 1}))
			return b
		}(), "invalid tag TAG_DELETE_ROW_MARKER"},
		{"bad extension length", func() []byte {
			b := EncodeRow(Row{PrimaryKey: []Cell{{Name: "k"}}, Sequence: &SequenceInfo{}})
			i := len(b) - 2 - 5 - extensionLen // the extension sits before the row checksum
			if b[i] != tagExtension {
				panic("extension not found")
			}
			b[i+1] = 23
			return b
		}(), "invalid extension length 23"},
		{"bad sequence info tag", func() []byte {
			b := EncodeRow(Row{PrimaryKey: []Cell{{Name: "k"}}, Sequence: &SequenceInfo{}})
			i := len(b) - 2 - 5 - extensionLen + 5 + 5 + 5 // TAG_SEQ_INFO_TS
			if b[i] != tagSeqInfoTS {
				panic("TAG_SEQ_INFO_TS not found")
			}
			b[i] = tagSeqInfoRowIndx
			return b
		}(), "expect TAG_SEQ_INFO_TS"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRows(tc.in)
			if err == nil {
				t.Fatalf("DecodeRows(%x) succeeded", tc.in)
			}
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not a *DecodeError wrapping ErrMalformed", err)
			}
			if errors.Is(err, ErrChecksumMismatch) {
				t.Fatalf("error %v claims a checksum mismatch", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestAcceptedShapes(t *testing.T) {
	pk := []rawCell{{name: "k", value: intPayload(1)}}
	// Empty TAG_ROW_DATA decodes like no section.
	r, err := DecodeRow(rawRow(pk, nil, true))
	if err != nil || len(r.Columns) != 0 || len(r.PrimaryKey) != 1 {
		t.Fatalf("empty TAG_ROW_DATA: %v, %v", fmtRow(r), err)
	}
	// Header only: no rows; DecodeRow wants exactly one.
	rows, err := DecodeRows([]byte{0x75, 0, 0, 0})
	if err != nil || len(rows) != 0 {
		t.Fatalf("header only: %v, %v", rows, err)
	}
	if _, err := DecodeRow([]byte{0x75, 0, 0, 0}); err == nil || !errors.Is(err, ErrMalformed) || err.Error() != "expect exactly one row in plain buffer, got 0" {
		t.Fatalf("DecodeRow(header only) err = %v", err)
	}
	two := append(rawRow(pk, nil, false), rawRow(pk, nil, false)[4:]...)
	if rows, err := DecodeRows(two); err != nil || len(rows) != 2 {
		t.Fatalf("two rows: %d, %v", len(rows), err)
	}
	if _, err := DecodeRow(two); err == nil || err.Error() != "expect exactly one row in plain buffer, got 2" {
		t.Fatalf("DecodeRow(two rows) err = %v", err)
	}
	// Decoded bytes and names do not alias the input.
	b := EncodeRow(Row{PrimaryKey: []Cell{{Name: "k", Value: BlobValue([]byte("abc"))}}})
	r, _ = DecodeRow(b)
	for i := range b {
		b[i] = 0
	}
	if string(r.PrimaryKey[0].Value.Bytes) != "abc" || r.PrimaryKey[0].Name != "k" {
		t.Fatalf("decoded row changed with its input: %v", fmtRow(r))
	}
}

// TestNoPanicOnMutations decodes every truncation and every single-byte
// change of a sample block.
func TestNoPanicOnMutations(t *testing.T) {
	b := sampleBlock()
	for n := range len(b) {
		// Only a cut at a row boundary may decode, and then it is exact.
		if rows, err := DecodeRows(b[:n]); err == nil && !bytes.Equal(EncodeRows(rows), b[:n]) {
			t.Fatalf("truncation to %d bytes decoded to %s", n, fmtRows(rows))
		}
	}
	for i := range b {
		for _, v := range []byte{0x00, 0x01, 0x7f, 0x80, 0xff, b[i] ^ 0x01} {
			c := bytes.Clone(b)
			c[i] = v
			rows, err := DecodeRows(c)
			if err == nil {
				checkRoundTrip(t, rows)
			}
		}
	}
}

func TestEncodePanicsOnInvalidInput(t *testing.T) {
	for name, r := range map[string]Row{
		"VT_NULL":    {PrimaryKey: []Cell{{Name: "k", Value: &Value{Type: 6}}}},
		"bad op":     {Columns: []Cell{{Name: "c", Op: 2}}},
		"type 0xff":  {Columns: []Cell{{Name: "c", Value: &Value{Type: 0xff}}}},
		"op 0x80 pk": {PrimaryKey: []Cell{{Name: "c", Op: 0x80}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: EncodeRow did not panic", name)
				}
			}()
			EncodeRow(r)
		}()
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{TypeAutoIncrement.String(), "AUTO_INCREMENT"},
		{ValueType(6).String(), "ValueType(0x06)"},
		{OpDeleteOneVersion.String(), "DELETE_ONE_VERSION"},
		{CellOp(9).String(), "CellOp(0x09)"},
		{StringValue("a\"b").String(), `"a\"b"`},
		{BlobValue([]byte{1, 0xab}).String(), "blob(01ab)"},
		{DoubleValue(0.5).String(), "0.5"},
		{InfMinValue().String(), "INF_MIN"},
		{tagName(0x42), "UNKNOWN_TAG(0x42)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestWriteRowStreams: WriteRow writes what EncodeRow encodes for a large
// row (big values, and more small cells than its buffer holds) and
// allocates a few KiB for it, not the row's size.
func TestWriteRowStreams(t *testing.T) {
	big := bytes.Repeat([]byte{'x'}, 1<<20)
	r := Row{PrimaryKey: []Cell{{Name: "pk", Value: StringValue("key")}}}
	for i := range 8 {
		ts := int64(i)
		r.Columns = append(r.Columns, Cell{Name: fmt.Sprintf("big%d", i), Value: BlobValue(big), Timestamp: &ts})
	}
	for i := range 5000 {
		r.Columns = append(r.Columns, Cell{Name: fmt.Sprintf("n%d", i), Value: IntegerValue(int64(i))})
	}
	r.Columns = append(r.Columns, Cell{Name: "s", Value: StringValue("tail")})
	want := EncodeRow(r)
	var got bytes.Buffer
	got.Write(want[:4])
	if err := WriteRow(&got, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("WriteRow differs from EncodeRow for a large row")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := WriteRow(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("WriteRow of a %d MiB row allocated %d bytes", len(want)>>20, n)
	}
}

// countingWriter counts the writes it gets.
type countingWriter struct{ writes, bytes int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	c.bytes += len(p)
	return len(p), nil
}

// TestWriteRowsSmallRows: WriteRows writes a block of many small rows in
// a few writes from one reused buffer: neither a buffer nor a write per
// row or per value (a GetRange answer of 100 rows was once encoded with
// a 36 KiB buffer per row and a write per STRING value, and its memory
// and time grew with its rows).
func TestWriteRowsSmallRows(t *testing.T) {
	var rows []Row
	for i := range 1000 {
		rows = append(rows, Row{
			PrimaryKey: []Cell{{Name: "pk", Value: StringValue(fmt.Sprintf("key%05d", i))}},
			Columns: []Cell{
				{Name: "name", Value: StringValue("some name")},
				{Name: "blob", Value: BlobValue(bytes.Repeat([]byte{'b'}, 100))},
				{Name: "n", Value: IntegerValue(int64(i))},
			},
		})
	}
	want := EncodeRows(rows)
	var got bytes.Buffer
	if err := WriteRows(&got, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("WriteRows differs from EncodeRows")
	}
	var c countingWriter
	if err := WriteRows(&c, rows); err != nil {
		t.Fatal(err)
	}
	if most := len(want)/streamBuffer + 1; c.writes > most || c.bytes != len(want) {
		t.Errorf("WriteRows of %d rows (%d bytes) made %d writes of %d bytes; want at most %d writes", len(rows), len(want), c.writes, c.bytes, most)
	}
	WriteRows(io.Discard, rows) // the buffer is in the pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if err := WriteRows(io.Discard, rows); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// At most a new buffer each time (a GC may empty the pool), never
	// one per row.
	if n := after.TotalAlloc - before.TotalAlloc; n > 10*(streamBufSize+4<<10) {
		t.Errorf("10 WriteRows of %d rows allocated %d bytes", len(rows), n)
	}
}
