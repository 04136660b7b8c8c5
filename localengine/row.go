package localengine

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/wire"
	"github.com/tablekit/tablekit/rowmodel"
)

// A stored row is one immutable string, rec, packed by pack:
//
//	rec[:keyEnd]          the encoded key (codec.AppendKey), which orders the map
//	rec[keyEnd:cellsAt]   the key's values (codec.AppendValue), in schema order
//	rec[cellsAt:blobAt]   a header per cell, in rowmodel.Row order: the type
//	                      byte, the uvarint length of the name, the version
//	                      (8 bytes, big endian), then an Integer's or a
//	                      Double's 8 bytes, a Boolean's byte, or the uvarint
//	                      length of a String or Binary
//	rec[blobAt:]          each cell's name and String or Binary bytes, in
//	                      the same order
//
// and the few words a read needs before it looks at the cells, kept beside
// it in the map (the map's items are the entries themselves). So a table
// holds one allocation per row, with no pointer inside it for the garbage
// collector to follow, and the map's nodes hold one pointer per row. A read decodes the headers alone (11 bytes for a
// cell of 100 bytes), straight into the slice it returns: names and String
// and Binary values are substrings of rec, never copied (rec never
// changes, and outlives them as long as they are used).
type entry struct {
	rec      string
	keyEnd   uint32 // rec[:keyEnd] is the encoded key
	cellsAt  uint32 // the cells' headers start at rec[cellsAt:]
	blobAt   uint32 // the names and bytes start at rec[blobAt:]
	cells    int32  // number of cells
	versions int32  // rowmodel.Shape.Versions of the cells
	marker   bool   // rowmodel.Row.Marker
	gen      int64  // rowmodel.Row.Generation
	oldest   int64  // rowmodel.Shape.Oldest of the cells
	pfx      uint64 // 8 bytes of the key, as its span's shape picks them (span.go, Keys inline); set by the span
}

// key returns the entry's encoded key, by which the map orders entries.
func (ent *entry) key() string { return ent.rec[:ent.keyEnd] }

// shape returns the rowmodel.Shape of the entry's cells.
func (ent *entry) shape() rowmodel.Shape {
	return rowmodel.Shape{Oldest: ent.oldest, Versions: int(ent.versions)}
}

// less orders entries of one span by their encoded keys (the map's
// order): by pfx first, and by the keys, behind the rows' pointers (a
// cache miss each), only where pfx ties. pfx orders as the keys do within
// a span (span.go, Keys inline), so this is the keys' order.
func less(a, b entry) bool {
	if a.pfx != b.pfx {
		return a.pfx < b.pfx
	}
	return a.key() < b.key()
}

// keyBytes returns the first 8 bytes of s, big endian, zero padded. It
// orders as the strings do: keyBytes(a) < keyBytes(b) implies a < b, and
// a < b implies keyBytes(a) <= keyBytes(b) (a string shorter than 8 bytes
// pads with zeros, no greater than any byte).
func keyBytes(s string) uint64 {
	if len(s) >= 8 {
		return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
	}
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(s) {
			p |= uint64(s[i])
		}
	}
	return p
}

// pack returns the entry of the row r under key k. The engine's writes,
// which hold the encoded key already, call packAfter.
func pack(k tablekit.PrimaryKey, r *rowmodel.Row) entry { return packAfter(codec.EncodeKey(k), k, r) }

// packAfter is pack of a key whose encoding ek holds already: the row is
// packed after it, in ek's spare capacity when the rest fits there (the
// caller gives that memory to the row: nothing may write to it again;
// see putRoom), else in a new allocation, ek copied (an ek without spare
// capacity is never written to).
func packAfter(ek []byte, k tablekit.PrimaryKey, r *rowmodel.Row) entry {
	n := len(ek)
	for _, p := range k {
		n += codec.ValueSize(p.Value)
	}
	for i := range r.Cells {
		n += cellSize(&r.Cells[i])
	}
	b := ek
	if cap(b) < n {
		b = append(make([]byte, 0, n), ek...)
	}
	keyEnd := len(b)
	for _, p := range k {
		b = codec.AppendValue(b, p.Value)
	}
	cellsAt := len(b)
	for i := range r.Cells {
		b = appendHeader(b, &r.Cells[i])
	}
	blobAt := len(b)
	for i := range r.Cells {
		c := &r.Cells[i]
		b = append(b, c.Name...)
		b = append(b, codec.Bytes(c.Value)...)
	}
	sh := rowmodel.ShapeOf(r.Cells)
	return entry{rec: bytesView(b), keyEnd: uint32(keyEnd), cellsAt: uint32(cellsAt), blobAt: uint32(blobAt),
		cells: int32(len(r.Cells)), versions: int32(sh.Versions), marker: r.Marker, gen: r.Generation, oldest: sh.Oldest}
}

// putRoom returns a buffer holding the encoding of w's key, with room
// for the rest of the row a put of w packs (packAfter): its key's values
// and w's cells (a put's row holds those cells at most, rowmodel.ApplyInto),
// so that the row and its key are one allocation; for any other write,
// the key's encoding alone, exactly sized.
func putRoom(w *tablekit.WriteRequest) []byte {
	n := codec.KeySize(w.Key)
	if w.Kind != tablekit.WritePut {
		return codec.AppendKey(make([]byte, 0, n), w.Key)
	}
	rest := 0
	for _, p := range w.Key {
		rest += codec.ValueSize(p.Value)
	}
	for i := range w.Columns {
		rest += cellSize(&w.Columns[i])
	}
	return codec.AppendKey(make([]byte, 0, n+rest), w.Key)
}

// cellSize is the number of bytes cell c takes in a packed row: its
// header and its name and bytes.
func cellSize(c *tablekit.Column) int {
	return headerSize(c.Value, len(c.Name)) + len(c.Name) + len(codec.Bytes(c.Value))
}

// headerSize is the length of the header of a cell of value v and a name
// of nl bytes.
func headerSize(v tablekit.Value, nl int) int {
	n := 1 + wire.UvarintLen(nl) + 8
	switch v.Type() {
	case tablekit.TypeInteger, tablekit.TypeDouble:
		return n + 8
	case tablekit.TypeBoolean:
		return n + 1
	}
	return n + wire.UvarintLen(len(codec.Bytes(v)))
}

// appendHeader appends the header of cell c.
func appendHeader(b []byte, c *tablekit.Column) []byte {
	b = append(b, byte(c.Value.Type()))
	b = binary.AppendUvarint(b, uint64(len(c.Name)))
	b = binary.BigEndian.AppendUint64(b, uint64(c.Version))
	switch c.Value.Type() {
	case tablekit.TypeString, tablekit.TypeBinary:
		b = binary.AppendUvarint(b, uint64(len(codec.Bytes(c.Value))))
	case tablekit.TypeInteger:
		i, _ := c.Value.Int()
		b = binary.BigEndian.AppendUint64(b, uint64(i))
	case tablekit.TypeDouble:
		f, _ := c.Value.Float()
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case tablekit.TypeBoolean:
		if v, _ := c.Value.Bool(); v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

// corrupt reports bytes of rec that pack did not write: a bug in the
// engine, never a user's error.
func corrupt(err error) { panic(fmt.Sprintf("localengine: a stored row does not decode: %v", err)) }

// appendKey appends the row's key, with the names of schema, to dst.
func (ent *entry) appendKey(dst tablekit.PrimaryKey, schema tablekit.KeySchema) tablekit.PrimaryKey {
	s := ent.rec[ent.keyEnd:ent.cellsAt]
	n := len(dst)
	dst = slices.Grow(dst, len(schema))[:n+len(schema)]
	for i, kc := range schema {
		v, k, err := codec.DecodeValue(s)
		if err != nil {
			corrupt(err)
		}
		p := &dst[n+i] // field by field, as appendCells writes cells
		p.Name, p.Value = kc.Name, v
		s = s[k:]
	}
	return dst
}

// appendCells appends the row's cells to dst, in stored order.
func (ent *entry) appendCells(dst []tablekit.Column) []tablekit.Column {
	h := ent.rec[ent.cellsAt:ent.blobAt]
	blob := ent.rec[ent.blobAt:]
	n := len(dst)
	dst = slices.Grow(dst, int(ent.cells))[:n+int(ent.cells)]
	for i := range dst[n:] {
		typ := tablekit.Type(h[0])
		nl, k := wire.Uvarint(h[1:])
		k++
		ver := int64(be64(h[k:]))
		h = h[k+8:]
		name := blob[:nl]
		blob = blob[nl:]
		var v tablekit.Value
		switch typ {
		case tablekit.TypeString, tablekit.TypeBinary:
			l, k := wire.Uvarint(h)
			h = h[k:]
			if typ == tablekit.TypeString {
				v = tablekit.String(blob[:l])
			} else {
				v = tablekit.BinaryString(blob[:l])
			}
			blob = blob[l:]
		case tablekit.TypeInteger:
			v = tablekit.Integer(int64(be64(h)))
			h = h[8:]
		case tablekit.TypeDouble:
			v = tablekit.Double(math.Float64frombits(be64(h)))
			h = h[8:]
		case tablekit.TypeBoolean:
			v = tablekit.Boolean(h[0] == 1)
			h = h[1:]
		default:
			corrupt(fmt.Errorf("type byte %d", typ))
		}
		c := &dst[n+i] // field by field: no temporary to copy in
		c.Name, c.Value, c.Version = name, v, ver
	}
	return dst
}

// be64 decodes 8 big-endian bytes.
func be64(s string) uint64 {
	_ = s[7]
	return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
		uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
}

// row returns the stored row, its cells appended to buf (they view rec).
func (ent *entry) row(buf []tablekit.Column) rowmodel.Row {
	return rowmodel.Row{Cells: ent.appendCells(buf), Marker: ent.marker, Generation: ent.gen}
}

// exists reports whether the entry holds a row at all (an entry has cells
// or a marker; this is the check rowmodel.Shape.Whole leaves to its caller).
func (ent *entry) exists() bool { return ent.cells > 0 || ent.marker }

// appendRead is rowmodel.AppendRead of the stored row: the cells a read
// returns, appended to dst, and whether it returns the row. With whole
// (rowmodel.WholeRead.Of the entry's shape), the cells are decoded
// straight into dst; otherwise into *scratch first, which it may grow.
func (ent *entry) appendRead(dst []tablekit.Column, scratch *[]tablekit.Column, whole bool, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool) {
	if whole {
		if !ent.exists() {
			return dst, false
		}
		start := len(dst)
		dst = ent.appendCells(dst)
		if spec.Filter != nil && !rowmodel.MatchFilter(spec.Filter, dst[start:]) {
			clear(dst[start:])
			return dst[:start], false
		}
		return dst, true
	}
	r := ent.row((*scratch)[:0])
	dst, found := rowmodel.AppendRead(dst, &r, opts, spec, now)
	clear(r.Cells)
	*scratch = r.Cells[:0]
	return dst, found
}
