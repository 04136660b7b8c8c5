package localengine

import (
	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/wire"
	"github.com/tablekit/tablekit/rowmodel"
)

// maxInPlace bounds the cells of a row that inPlace rewrites (its
// bookkeeping is on the stack); a larger row takes rowmodel's Update.
const maxInPlace = 64

// inPlace applies the update w to the stored row old, when the update
// replaces cells (rowmodel.InPlace: one version per column, every cell
// visible, Puts of distinct columns that each have a cell no later than
// the change), by rewriting those cells alone: the new row's bytes are
// old's, copied as they are in runs (memmove), with the header and the
// bytes of each changed cell written anew; nothing is decoded or
// re-encoded but the changed cells. It returns the new entry and true, or
// false when the update is not of that kind (the caller applies
// rowmodel's Update, as for any write). Rows stay immutable: the new row
// is a new string (copy-on-write), so a reader holding old, and the cells
// it returned, see old whole (SPEC §11).
//
// w must address the table as it is (w.Meta's options and generation are
// m's); a request built under other options takes the general path, which
// applies it under m's.
func inPlace(w *tablekit.WriteRequest, m *tablekit.TableMeta, old *entry) (entry, bool) {
	n := int(old.cells)
	if !w.Condition.IsZero() || w.Meta.Options != m.Options || w.Meta.Generation != m.Generation || n > maxInPlace ||
		rowmodel.CheckGeneration(m, old.gen) != nil || !rowmodel.InPlace(old.shape(), &m.Options, w.Changes, w.Now) {
		return entry{}, false
	}
	// Where each cell's header and bytes start, and which change replaces it.
	var (
		hdr, blob [maxInPlace + 1]uint32
		by        [maxInPlace]int8
	)
	rec := old.rec
	h, b := old.cellsAt, old.blobAt
	size := len(rec)
	found := 0
	oldest := int64(0)
	for i := range n {
		hdr[i], blob[i] = h, b
		nl, k := wire.Uvarint(rec[h+1:])
		ver := int64(be64(rec[int(h)+1+k:]))
		p := int(h) + 1 + k + 8 // the payload
		vl := 0
		switch tablekit.Type(rec[h]) {
		case tablekit.TypeInteger, tablekit.TypeDouble:
			p += 8
		case tablekit.TypeBoolean:
			p++
		default:
			l, k := wire.Uvarint(rec[p:])
			p += k
			vl = int(l)
		}
		name := rec[b : b+uint32(nl)]
		by[i] = -1
		for j := range w.Changes {
			ch := &w.Changes[j]
			if ch.Column != name {
				continue
			}
			if ver > ch.Version { // a later cell: Update keeps it
				return entry{}, false
			}
			by[i] = int8(j)
			found++
			c := tablekit.Column{Name: name, Value: ch.Value, Version: ch.Version}
			size += cellSize(&c) - (p - int(h)) - int(nl) - vl
			ver = ch.Version
			break
		}
		if i == 0 || ver < oldest {
			oldest = ver
		}
		h, b = uint32(p), b+uint32(nl)+uint32(vl)
	}
	if found != len(w.Changes) { // a column without a cell: Update inserts it
		return entry{}, false
	}
	hdr[n], blob[n] = old.blobAt, uint32(len(rec))
	out := make([]byte, 0, size)
	out = append(out, rec[:old.cellsAt]...)
	out = splice(out, rec, hdr[:n+1], by[:n], w.Changes, false)
	blobAt := len(out)
	out = splice(out, rec, blob[:n+1], by[:n], w.Changes, true)
	return entry{rec: bytesView(out), keyEnd: old.keyEnd, cellsAt: old.cellsAt, blobAt: uint32(blobAt),
		cells: old.cells, versions: 1, marker: old.marker, gen: m.Generation, oldest: oldest}, true
}

// splice appends to out the parts of rec at offs (part i is
// rec[offs[i]:offs[i+1]]), runs of unchanged parts copied at once, and in
// place of part i the changed cell's (by[i] >= 0): its header, or with
// blob its name and bytes.
func splice(out []byte, rec string, offs []uint32, by []int8, changes []tablekit.Change, blob bool) []byte {
	n := len(by)
	for i := 0; i < n; {
		j := i
		for j < n && by[j] < 0 {
			j++
		}
		out = append(out, rec[offs[i]:offs[j]]...)
		if j == n {
			break
		}
		ch := &changes[by[j]]
		if blob {
			out = append(out, ch.Column...)
			out = append(out, codec.Bytes(ch.Value)...)
		} else {
			c := tablekit.Column{Name: ch.Column, Value: ch.Value, Version: ch.Version}
			out = appendHeader(out, &c)
		}
		i = j + 1
	}
	return out
}
