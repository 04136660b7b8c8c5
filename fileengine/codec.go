package fileengine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/wire"
	"github.com/tablekit/tablekit/rowmodel"
)

// The store's keys. Every key starts with one byte saying what it is:
//
//	'f'                                   the format record (formatValue)
//	'm' name                              a table's metadata (JSON, metaRecord)
//	'r' len(id) id codec.EncodeKey(key)   a row of the table whose rows id is id
//	's' len(id) id                        the table's change feed state (feed.go)
//	'c' len(id) id shard seq              a change record (feed.go)
//	'a' len(id) id pk value               an auto-increment counter (autoinc.go)
//
// A table's rows id is its Incarnation; a table created without one (by a
// caller other than the Client, which gives every table one) gets "-" and
// 16 random hex digits, kept in its metadata record (storedMeta.Rows), so
// that two such tables never share rows. Rows live under their table's
// rows id, so DeleteTable removes them with one range deletion, and a
// table created again under the same name (a new Incarnation) never sees
// the old rows.
const (
	formatKey   = "f"
	metaPrefix  = 'm'
	rowPrefix   = 'r'
	formatValue = "tablekit fileengine format 1"
)

// rowFormat is the first byte of every stored row value; a later encoding
// gets another.
const rowFormat = 1

// metaFormat is the V of every stored metaRecord.
const metaFormat = 1

// metaRecord is how a table's metadata is stored.
type metaRecord struct {
	V    int        `json:"v"`
	Meta storedMeta `json:"meta"`
}

// storedMeta is tablekit.TableMeta as format 1 stores it: the field names
// of TableMeta, with TTL and MaxVersionOffset in seconds (as they were when
// TableOptions held seconds), so that stores written before keep working.
type storedMeta struct {
	Name    string
	Key     tablekit.KeySchema
	Options struct {
		TTL              int64
		MaxVersions      int
		MaxVersionOffset int64
	}
	Incarnation string
	Generation  int64
	// Rows is the table's rows id when it is not its Incarnation (a table
	// created without one); absent otherwise.
	Rows string `json:",omitempty"`
}

func metaKey(name string) []byte {
	return append([]byte{metaPrefix}, name...)
}

// rowsPrefix returns the prefix of the rows of a table of rows id id.
func rowsPrefix(id string) []byte {
	p := make([]byte, 0, 2+len(id))
	p = append(p, rowPrefix, byte(len(id)))
	return append(p, id...)
}

// encodeMeta encodes the metadata record of table m, whose rows id is rows.
func encodeMeta(m *tablekit.TableMeta, rows string) ([]byte, error) {
	r := metaRecord{V: metaFormat, Meta: storedMeta{Name: m.Name, Key: m.Key, Incarnation: m.Incarnation, Generation: m.Generation}}
	if rows != m.Incarnation {
		r.Meta.Rows = rows
	}
	r.Meta.Options.TTL = m.Options.TTLSeconds()
	r.Meta.Options.MaxVersions = m.Options.MaxVersions
	r.Meta.Options.MaxVersionOffset = m.Options.MaxVersionOffsetSeconds()
	return json.Marshal(r)
}

// decodeMeta decodes a metadata record: the table's meta and its rows id.
func decodeMeta(b []byte) (tablekit.TableMeta, string, error) {
	var r metaRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return tablekit.TableMeta{}, "", fmt.Errorf("%w: table metadata: %v", ErrCorrupt, err)
	}
	if r.V != metaFormat {
		return tablekit.TableMeta{}, "", fmt.Errorf("%w: table metadata of unknown format %d", ErrCorrupt, r.V)
	}
	sm := r.Meta
	rows := sm.Rows
	if rows == "" {
		rows = sm.Incarnation
	}
	return tablekit.TableMeta{Name: sm.Name, Key: sm.Key, Incarnation: sm.Incarnation, Generation: sm.Generation,
		Options: tablekit.TableOptions{
			TTL:              time.Duration(sm.Options.TTL) * time.Second,
			MaxVersions:      sm.Options.MaxVersions,
			MaxVersionOffset: time.Duration(sm.Options.MaxVersionOffset) * time.Second,
		}}, rows, nil
}

// appendRow appends the encoding of r to dst:
//
//	format byte (1), flags (bit 0: marker), uvarint Generation, uvarint cell count,
//	per cell: uvarint len(name), name, type byte, value, varint version;
//	value: String and Binary uvarint length and bytes, Integer and Double
//	8 bytes big-endian, Boolean one byte.
//
// Pebble checksums every block and WAL record, so the encoding carries no
// checksum of its own.
func appendRow(dst []byte, r *rowmodel.Row) []byte {
	var flags byte
	if r.Marker {
		flags |= 1
	}
	dst = append(dst, rowFormat, flags)
	dst = binary.AppendUvarint(dst, uint64(r.Generation))
	dst = binary.AppendUvarint(dst, uint64(len(r.Cells)))
	for i := range r.Cells {
		c := &r.Cells[i]
		dst = wire.AppendString(dst, c.Name)
		dst = codec.AppendValue(dst, c.Value)
		dst = binary.AppendVarint(dst, c.Version)
	}
	return dst
}

var errShort = errors.New("truncated row")

// decodeRow decodes the row encoded in s into r, reusing r.Cells. The
// cells' names and String and Binary values are substrings of s: pass a
// view of bytes only when the row does not outlive them.
func decodeRow(r *rowmodel.Row, s string) error {
	marker, gen, n, d, err := rowHeader(s)
	if err != nil {
		return err
	}
	r.Marker, r.Generation = marker, gen
	cells := r.Cells[:0]
	if cap(cells) < n {
		cells = make([]tablekit.Column, 0, n)
	}
	cells, err = appendCells(cells, &d, n, nil)
	if err != nil {
		clear(cells)
		r.Cells = cells[:0]
		return err
	}
	r.Cells = cells
	return nil
}

// rowHeader decodes the header of the row encoded in s: its marker flag,
// its Generation and its number of cells, and returns a decoder at its
// first cell (see appendCells).
func rowHeader(s string) (marker bool, gen int64, n int, d decoder, err error) {
	if len(s) < 2 {
		return false, 0, 0, d, fmt.Errorf("%w: %v", ErrCorrupt, errShort)
	}
	if s[0] != rowFormat {
		return false, 0, 0, d, fmt.Errorf("%w: row of unknown format %d", ErrCorrupt, s[0])
	}
	if s[1]&^1 != 0 {
		return false, 0, 0, d, fmt.Errorf("%w: row flags %#x", ErrCorrupt, s[1])
	}
	d = decoder{s: s[2:]}
	g := d.uvarint()
	c := d.uvarint()
	if d.err != nil || g > math.MaxInt64 || c > uint64(len(d.s)) {
		return false, 0, 0, d, fmt.Errorf("%w: row header", ErrCorrupt)
	}
	return s[1]&1 != 0, int64(g), int(c), d, nil
}

// appendCells decodes the n cells of a row from d (positioned by
// rowHeader) and appends them to dst, each written once, their names
// interned by nm when it is given. Their names (unless interned) and
// String and Binary values are substrings of d's string. On an error
// (ErrCorrupt) the cells decoded so far are appended.
//
// It is the range reads' inner loop (ten cells a row of a YCSB table), so
// it reads the common cases itself: a name shorter than 128 bytes, equal
// to the previous row's at its position (nm.last); a String or Binary
// value shorter than 128 bytes (codec.AppendValue's encoding: the type
// byte, a one-byte uvarint length, the bytes); a version in 8 bytes or
// fewer (varint). codec.DecodeValue and decoder read everything else.
func appendCells(dst []tablekit.Column, d *decoder, n int, nm *names) ([]tablekit.Column, error) {
	s := d.s
	var last []string
	if nm != nil {
		last = nm.last
	}
	for i := range n {
		var name string
		if len(s) > 0 && s[0] < 0x80 && int(s[0]) < len(s) {
			name, s = s[1:1+s[0]], s[1+s[0]:]
		} else {
			e := decoder{s: s}
			name, s = e.str(), e.s
			if e.err != nil {
				return dst, fmt.Errorf("%w: cell %d: %v", ErrCorrupt, i, e.err)
			}
		}
		var v tablekit.Value
		if len(s) >= 2 && (s[0] == byte(tablekit.TypeBinary) || s[0] == byte(tablekit.TypeString)) && s[1] < 0x80 && int(s[1]) <= len(s)-2 {
			l := 2 + int(s[1])
			if s[0] == byte(tablekit.TypeBinary) {
				v = tablekit.BinaryString(s[2:l])
			} else {
				v = tablekit.String(s[2:l])
			}
			s = s[l:]
		} else {
			var k int
			var err error
			if v, k, err = codec.DecodeValue(s); err != nil {
				return dst, fmt.Errorf("%w: cell %d: %v", ErrCorrupt, i, err)
			}
			s = s[k:]
		}
		ver, k := varint(s)
		if k <= 0 {
			return dst, fmt.Errorf("%w: cell %d: %v", ErrCorrupt, i, errShort)
		}
		s = s[k:]
		if nm != nil {
			if i < len(last) && last[i] == name {
				name = last[i]
			} else {
				name = nm.get(i, name)
				last = nm.last
			}
		}
		// Field by field: an append of the struct would copy it with a bulk
		// write barrier, slower than the two pointers' own.
		j := len(dst)
		if j == cap(dst) {
			dst = append(dst, tablekit.Column{})
		} else {
			dst = dst[:j+1]
		}
		c := &dst[j]
		c.Name, c.Value, c.Version = name, v, ver
	}
	d.s = s
	if len(s) != 0 {
		return dst, fmt.Errorf("%w: %d trailing bytes after a row", ErrCorrupt, len(s))
	}
	return dst, nil
}

// varint decodes the zigzag varint at the start of s: the value and the
// number of bytes read, or k <= 0 when s holds no complete, in-range
// varint. Up to 8 bytes (a version in milliseconds takes 6) are decoded
// from one load when s is long enough.
func varint(s string) (x int64, k int) {
	var ux uint64
	if len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if stop := ^w & 0x8080808080808080; stop != 0 {
			t := bits.TrailingZeros64(stop) + 1 // bits up to the last byte's
			w &= 1<<t - 1                       // the varint's bytes
			// Close the gaps: 7-bit groups into 14, 28, then 56 bits.
			w = w&0x007f007f007f007f | w&0x7f007f007f007f00>>1
			w = w&0x00003fff00003fff | w&0x3fff00003fff0000>>2
			ux = w&0x000000000fffffff | w&0x0fffffff00000000>>4
			k = t / 8
		}
	}
	if k == 0 {
		d := decoder{s: s}
		if ux = d.uvarint(); d.err != nil {
			return 0, 0
		}
		k = len(s) - len(d.s)
	}
	x = int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, k
}

// decoder reads the fields of a row; the first error sticks.
type decoder struct {
	s   string
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShort
	}
	d.s = ""
}

func (d *decoder) uvarint() uint64 {
	x, k := wire.Uvarint(d.s)
	if k <= 0 {
		d.fail()
		return 0
	}
	d.s = d.s[k:]
	return x
}

func (d *decoder) varint() int64 {
	ux := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) str() string {
	str, k := wire.String(d.s)
	if k <= 0 {
		d.fail()
		return ""
	}
	d.s = d.s[k:]
	return str
}

// view returns b as a string without copying; b must not change while the
// string is in use.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
