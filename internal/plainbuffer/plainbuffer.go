// Package plainbuffer is for the Tablestore adapter and its emulator only
// (it is internal to them): it encodes and decodes Alibaba Cloud
// Tablestore's PlainBuffer row format, the binary rows carried inside
// Tablestore's protobuf messages (primary keys, row changes, returned rows).
//
// A block is the int32 little-endian header 0x75 followed by rows:
//
//	row  = TAG_ROW_PK cell* [TAG_ROW_DATA cell*] [TAG_DELETE_ROW_MARKER]
//	       [TAG_EXTENSION seq-info] TAG_ROW_CHECKSUM crc
//	cell = TAG_CELL TAG_CELL_NAME len name [TAG_CELL_VALUE len type payload]
//	       [TAG_CELL_TYPE op] [TAG_CELL_TIMESTAMP ms] TAG_CELL_CHECKSUM crc
//
// Checksums are CRC-8 (polynomial 0x07, initial 0). The layout follows the
// reference SDK, github.com/aliyun/aliyun-tablestore-go-sdk v1.9.3
// (tablestore/plain_buffer.go, tablestore/util.go); the Java SDK was used
// for what the Go SDK writes but never checks (extension, checksum scope).
//
// Decoding is strict about the format: every checksum is verified, tags
// must come in the order above, lengths must match their payloads and fit
// in the input, and trailing bytes are rejected. It does not judge meaning:
// whether an op suits its value and timestamp, whether a primary key may be
// empty or hold INF_MIN, or whether a timestamp is negative is for the
// caller.
package plainbuffer

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Header is the int32 that starts every block.
const Header = 0x75

// Tags.
const (
	tagRowPK          = 0x01
	tagRowData        = 0x02
	tagCell           = 0x03
	tagCellName       = 0x04
	tagCellValue      = 0x05
	tagCellType       = 0x06
	tagCellTimestamp  = 0x07
	tagDeleteMarker   = 0x08
	tagRowChecksum    = 0x09
	tagCellChecksum   = 0x0A
	tagExtension      = 0x0B
	tagSeqInfo        = 0x0C
	tagSeqInfoEpoch   = 0x0D
	tagSeqInfoTS      = 0x0E
	tagSeqInfoRowIndx = 0x0F
)

func tagName(t byte) string {
	switch t {
	case tagRowPK:
		return "TAG_ROW_PK"
	case tagRowData:
		return "TAG_ROW_DATA"
	case tagCell:
		return "TAG_CELL"
	case tagCellName:
		return "TAG_CELL_NAME"
	case tagCellValue:
		return "TAG_CELL_VALUE"
	case tagCellType:
		return "TAG_CELL_TYPE"
	case tagCellTimestamp:
		return "TAG_CELL_TIMESTAMP"
	case tagDeleteMarker:
		return "TAG_DELETE_ROW_MARKER"
	case tagRowChecksum:
		return "TAG_ROW_CHECKSUM"
	case tagCellChecksum:
		return "TAG_CELL_CHECKSUM"
	case tagExtension:
		return "TAG_EXTENSION"
	case tagSeqInfo:
		return "TAG_SEQ_INFO"
	case tagSeqInfoEpoch:
		return "TAG_SEQ_INFO_EPOCH"
	case tagSeqInfoTS:
		return "TAG_SEQ_INFO_TS"
	case tagSeqInfoRowIndx:
		return "TAG_SEQ_INFO_ROW_INDEX"
	}
	return fmt.Sprintf("UNKNOWN_TAG(0x%02x)", t)
}

// ValueType is the type byte of a cell value.
type ValueType byte

// Value types. The SDK also defines VT_NULL (6), but no SDK writes it in
// PlainBuffer and the Java SDK rejects it there; so do we.
const (
	TypeInteger       ValueType = 0x00 // int64, 8 bytes LE
	TypeDouble        ValueType = 0x01 // float64 bits, 8 bytes LE
	TypeBoolean       ValueType = 0x02 // 1 byte, 0 or 1
	TypeString        ValueType = 0x03 // int32 LE length + bytes
	TypeBlob          ValueType = 0x07 // int32 LE length + bytes
	TypeInfMin        ValueType = 0x09 // no payload; range bound
	TypeInfMax        ValueType = 0x0A // no payload; range bound
	TypeAutoIncrement ValueType = 0x0B // no payload; placeholder in a put
)

func (t ValueType) String() string {
	switch t {
	case TypeInteger:
		return "INTEGER"
	case TypeDouble:
		return "DOUBLE"
	case TypeBoolean:
		return "BOOLEAN"
	case TypeString:
		return "STRING"
	case TypeBlob:
		return "BLOB"
	case TypeInfMin:
		return "INF_MIN"
	case TypeInfMax:
		return "INF_MAX"
	case TypeAutoIncrement:
		return "AUTO_INCREMENT"
	}
	return fmt.Sprintf("ValueType(0x%02x)", byte(t))
}

// Value is a cell value. Only the field that matches Type is meaningful:
// Int for TypeInteger, Float for TypeDouble, Bool for TypeBoolean, Bytes for
// TypeString and TypeBlob; INF_MIN, INF_MAX and AUTO_INCREMENT carry none.
// Decoded Bytes never alias the input.
type Value struct {
	Type  ValueType
	Int   int64
	Float float64
	Bool  bool
	Bytes []byte
}

// IntegerValue returns an INTEGER value.
func IntegerValue(v int64) *Value { return &Value{Type: TypeInteger, Int: v} }

// DoubleValue returns a DOUBLE value.
func DoubleValue(v float64) *Value { return &Value{Type: TypeDouble, Float: v} }

// BooleanValue returns a BOOLEAN value.
func BooleanValue(v bool) *Value { return &Value{Type: TypeBoolean, Bool: v} }

// StringValue returns a STRING value.
func StringValue(v string) *Value { return &Value{Type: TypeString, Bytes: []byte(v)} }

// BlobValue returns a BLOB value.
func BlobValue(v []byte) *Value { return &Value{Type: TypeBlob, Bytes: v} }

// InfMinValue returns the INF_MIN bound.
func InfMinValue() *Value { return &Value{Type: TypeInfMin} }

// InfMaxValue returns the INF_MAX bound.
func InfMaxValue() *Value { return &Value{Type: TypeInfMax} }

// AutoIncrementValue returns the AUTO_INCREMENT placeholder.
func AutoIncrementValue() *Value { return &Value{Type: TypeAutoIncrement} }

func (v Value) String() string {
	switch v.Type {
	case TypeInteger:
		return strconv.FormatInt(v.Int, 10)
	case TypeDouble:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case TypeBoolean:
		return strconv.FormatBool(v.Bool)
	case TypeString:
		return strconv.Quote(string(v.Bytes))
	case TypeBlob:
		return fmt.Sprintf("blob(%x)", v.Bytes)
	}
	return v.Type.String()
}

// CellOp is the operation byte of a cell (TAG_CELL_TYPE).
type CellOp byte

// Cell operations. OpPut is the absence of TAG_CELL_TYPE; it never appears
// on the wire.
const (
	OpPut               CellOp = 0x00 // value, optional timestamp
	OpDeleteAllVersions CellOp = 0x01 // no value, no timestamp
	OpDeleteOneVersion  CellOp = 0x03 // timestamp, no value
	OpIncrement         CellOp = 0x04 // INTEGER value, no timestamp
)

func (o CellOp) String() string {
	switch o {
	case OpPut:
		return "PUT"
	case OpDeleteAllVersions:
		return "DELETE_ALL_VERSION"
	case OpDeleteOneVersion:
		return "DELETE_ONE_VERSION"
	case OpIncrement:
		return "INCREMENT"
	}
	return fmt.Sprintf("CellOp(0x%02x)", byte(o))
}

func (o CellOp) validOnWire() bool {
	return o == OpDeleteAllVersions || o == OpDeleteOneVersion || o == OpIncrement
}

// Cell is one primary-key or attribute cell.
type Cell struct {
	Name      string
	Value     *Value // nil when the cell has no TAG_CELL_VALUE
	Op        CellOp // OpPut when the cell has no TAG_CELL_TYPE
	Timestamp *int64 // milliseconds; nil when the cell has no TAG_CELL_TIMESTAMP
}

// SequenceInfo is the row extension (TAG_EXTENSION / TAG_SEQ_INFO) that
// stream records carry. It is not covered by the row checksum.
type SequenceInfo struct {
	Epoch     int32
	Timestamp int64
	RowIndex  int32
}

// Row is one PlainBuffer row.
type Row struct {
	PrimaryKey   []Cell
	Columns      []Cell
	DeleteMarker bool
	Sequence     *SequenceInfo // nil unless the row has TAG_EXTENSION
}

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("plainbuffer: malformed data")

// ErrChecksumMismatch is also wrapped by decoding errors about a cell or row
// checksum.
var ErrChecksumMismatch = errors.New("plainbuffer: checksum mismatch")

// DecodeError describes why input could not be decoded. Its message is
// meant to be returned to a client as is.
type DecodeError struct {
	Offset   int    // byte offset in the input where the problem was found
	Msg      string // the message Error returns
	checksum bool
}

func (e *DecodeError) Error() string { return e.Msg }

// Unwrap reports ErrMalformed, and ErrChecksumMismatch for checksum errors.
func (e *DecodeError) Unwrap() []error {
	if e.checksum {
		return []error{ErrMalformed, ErrChecksumMismatch}
	}
	return []error{ErrMalformed}
}

// crc8 table for polynomial 0x07, MSB first, no reflection, no final xor.
var crcTable = func() (t [256]byte) {
	for i := range t {
		x := byte(i)
		for range 8 {
			if x&0x80 != 0 {
				x = x<<1 ^ 0x07
			} else {
				x <<= 1
			}
		}
		t[i] = x
	}
	return t
}()

func crc8Byte(crc, b byte) byte { return crcTable[crc^b] }

// Checksum returns the CRC-8 PlainBuffer uses, of p. The SimpleRowMatrix
// block ends with one too.
func Checksum(p []byte) byte { return crc8Bytes(0, p) }

func crc8Bytes(crc byte, p []byte) byte {
	for _, b := range p {
		crc = crcTable[crc^b]
	}
	return crc
}

func crc8Int64(crc byte, v int64) byte {
	u := uint64(v)
	for range 8 {
		crc = crcTable[crc^byte(u)]
		u >>= 8
	}
	return crc
}

// checkLen panics when n cannot be written as an int32 length.
func checkLen(n int, what string) {
	if n > math.MaxInt32 {
		panic(fmt.Sprintf("plainbuffer: %s of %d bytes exceeds int32", what, n))
	}
}
