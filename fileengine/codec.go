package fileengine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
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
		dst = binary.AppendUvarint(dst, uint64(len(c.Name)))
		dst = append(dst, c.Name...)
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
	if len(s) < 2 {
		return fmt.Errorf("%w: %v", ErrCorrupt, errShort)
	}
	if s[0] != rowFormat {
		return fmt.Errorf("%w: row of unknown format %d", ErrCorrupt, s[0])
	}
	if s[1]&^1 != 0 {
		return fmt.Errorf("%w: row flags %#x", ErrCorrupt, s[1])
	}
	r.Marker = s[1]&1 != 0
	d := decoder{s: s[2:]}
	gen := d.uvarint()
	n := d.uvarint()
	if d.err != nil || gen > math.MaxInt64 || n > uint64(len(d.s)) {
		return fmt.Errorf("%w: row header", ErrCorrupt)
	}
	r.Generation = int64(gen)
	cells := r.Cells[:0]
	if cap(cells) < int(n) {
		cells = make([]tablekit.Column, 0, n)
	}
	for range n {
		var c tablekit.Column
		c.Name = d.str()
		v, k, err := codec.DecodeValue(d.s)
		if err != nil && d.err == nil {
			d.err = err
		}
		c.Value, d.s = v, d.s[k:]
		c.Version = d.varint()
		if d.err != nil {
			clear(cells)
			r.Cells = cells[:0]
			return fmt.Errorf("%w: cell %d: %v", ErrCorrupt, len(cells), d.err)
		}
		cells = append(cells, c)
	}
	if len(d.s) != 0 {
		clear(cells)
		r.Cells = cells[:0]
		return fmt.Errorf("%w: %d trailing bytes after a row", ErrCorrupt, len(d.s))
	}
	r.Cells = cells
	return nil
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
	var x uint64
	var shift uint
	for i := 0; i < len(d.s) && i < binary.MaxVarintLen64; i++ {
		b := d.s[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				break
			}
			d.s = d.s[i+1:]
			return x | uint64(b)<<shift
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	d.fail()
	return 0
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
	n := d.uvarint()
	if n > uint64(len(d.s)) {
		d.fail()
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

// view returns b as a string without copying; b must not change while the
// string is in use.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
