package localengine

import (
	"context"
	"sync/atomic"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// lockBatch bounds how many entries one hold of a table's read lock walks.
// A range read takes the lock, copies the pointers of the next entries
// (at most lockBatch of them: a few microseconds of map steps, span by
// span, each span's lock held shared for its part: span.go) and lets it
// go; it evaluates those rows (visibility, selection, filter) unlocked, and
// takes the lock again to go on after the last one. So a long scan, or one
// whose filter is slow, holds writers off for one batch at a time, never
// for its whole length. Entries are immutable, so a row evaluated unlocked
// is the row as it was when the batch was taken; a range read is
// consistent per row, not across rows (SPEC §11).
const lockBatch = 256

// walker is a position in one range read: where the next batch starts.
type walker struct {
	t                                      *table
	req                                    *tablekit.GetRangeRequest
	start, end                             string // encoded bounds (views of the caller's buffers)
	startExact, startTop, endExact, endTop bool
	last                                   string // encoded key of the last entry taken; the next batch starts after it
	resumed                                bool   // last is set
	done                                   bool   // no entry follows the last batch
	schema                                 tablekit.KeySchema
}

// batch appends to buf the next (at most n) entries of the range, under
// the table's read lock. It starts after the last key the batch before
// took, in whichever span holds it now (spans may split or merge between
// batches). The first batch also checks that req addresses
// the table as it is and returns its options (and notes its key schema).
func (w *walker) batch(buf []entry, n int, opts *tablekit.TableOptions) ([]entry, error) {
	t := w.t
	var last string
	take := func(k string, ent entry) bool {
		buf = append(buf, ent)
		last = k // the stored key: immutable, safe to keep unlocked
		return len(buf) < n
	}
	before := len(buf)
	t.mu.RLock()
	defer func() {
		t.mu.RUnlock()
		w.done = w.done || len(buf)-before < n
		if len(buf) > before {
			w.last, w.resumed = last, true
		}
	}()
	if !w.resumed {
		cur, err := t.current(w.req.Meta)
		if err != nil {
			return buf, err
		}
		*opts, w.schema = cur.Options, cur.Key
	}
	switch {
	case !w.req.Backward && w.startTop && !w.resumed: // InfMax in the first column: nothing is above it
		w.done = true
	case !w.req.Backward:
		// [start, end): start bound inclusive either way; end exclusive either way.
		from := w.start
		if w.resumed {
			from = w.last
		}
		t.ascend(from, func(ent entry) bool { // span by span (span.go)
			k := ent.key()
			if w.resumed && k == w.last {
				return true
			}
			if !w.endTop && k >= w.end {
				return false
			}
			return take(k, ent)
		})
	default:
		// Backward: from start down to end, exclusive of end. An exact start is
		// inclusive; an infinite one is an exclusive byte bound.
		iter := func(ent entry) bool {
			k := ent.key()
			if w.resumed && k >= w.last {
				return true
			}
			if !w.startExact && !w.startTop && k >= w.start {
				return true
			}
			switch {
			case w.endExact && k <= w.end: // exclusive end key
				return false
			case !w.endExact && (w.endTop || k < w.end): // below an infinite end
				return false
			}
			return take(k, ent)
		}
		switch {
		case w.resumed:
			t.descend(w.last, iter)
		case w.startTop:
			t.reverse(iter)
		default:
			t.descend(w.start, iter)
		}
	}
	return buf, nil
}

// walk goes through req's range in order, in batches taken under the
// table's read lock (see lockBatch), and calls visit, unlocked, with each
// entry and the table's options; visit reports whether the read returns the
// entry's row (found) and whether to go on (cont). The walk ends after
// req.Limit rows were found, after maxScan entries, at the end of the
// range, or when visit says so (stopped). next is the entry the next page
// starts at, nil when the range is exhausted (or the walk was stopped);
// sc.opts holds the table's options the walk used.
//
// Its working memory (the encoded bounds, the options, the batch) is in
// sc, which the caller takes from a pool: the walk allocates nothing.
func (t *table) walk(ctx context.Context, req *tablekit.GetRangeRequest, sc *rangeScratch, visit func(ent *entry, opts *tablekit.TableOptions) (found, cont bool)) (next *entry, err error) {
	startB, startExact, startTop := codec.AppendBound(sc.sbuf[:0], req.Start)
	endB, endExact, endTop := codec.AppendBound(sc.ebuf[:0], req.End)
	opts := &sc.opts
	w := walker{t: t, req: req, start: bytesView(startB), end: bytesView(endB), // the map keeps no pivot
		startExact: startExact, startTop: startTop, endExact: endExact, endTop: endTop}
	limit := max(req.Limit, 1)
	found, scanned := 0, 0
	n := 0
	for {
		// A batch takes what the page still needs, and one more entry for
		// Next; after rows fail the filter, twice the last batch, up to
		// lockBatch.
		n = min(max(limit-found+1, 2*n), lockBatch, maxScan-scanned+1)
		if sc.batch, err = w.batch(sc.batch[:0], n, opts); err != nil {
			return nil, err
		}
		sc.schema = w.schema
		touch(sc.batch)
		for i := range sc.batch {
			ent := &sc.batch[i]
			if found >= limit || scanned >= maxScan {
				return ent, nil
			}
			scanned++
			f, cont := visit(ent, opts)
			if f {
				found++
			}
			if !cont {
				return nil, nil
			}
		}
		if w.done {
			return nil, nil
		}
		if scanned > 0 && scanned%(4*lockBatch) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
}

// touch loads a byte of every cache line of each entry's cell headers (the
// part of a stored row a read decodes) in a tight loop, before the walk
// looks at the entries one by one: the loads do not depend on each other,
// so the processor overlaps their cache misses, where the walk's work per
// row would otherwise put one miss after the other.
func touch(batch []entry) {
	n := 0
	for i := range batch {
		ent := &batch[i]
		for j := int(ent.cellsAt); j < int(ent.blobAt); j += 64 {
			n += int(ent.rec[j])
		}
		if ent.blobAt > ent.cellsAt {
			n += int(ent.rec[ent.blobAt-1])
		}
	}
	touched.Store(int64(n))
}

// touched keeps touch's loads from being optimized away.
var touched atomic.Int64

// ScanRange implements tablekit.RangeScanner: the rows of GetRange's page,
// handed to fn one at a time, decoded into buffers kept between calls (from
// a pool) and lent: the key's parts, and the cells, decoded straight into
// the buffer when the read returns them whole (rowmodel.WholeRead: the
// common case of a read of whole rows with nothing expired, or of a
// projection naming every column of the row), or evaluated into it
// otherwise (appendGetCells). Both are capped, so that an append cannot reach the
// next row's. Strings view the immutable stored rows. It allocates nothing
// but Next, when there is one.
func (e *Engine) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	sc := scratchPool.Get().(*rangeScratch)
	defer sc.release()
	next, err := t.walk(ctx, req, sc, func(ent *entry, opts *tablekit.TableOptions) (bool, bool) {
		var found bool
		if sc.cbuf, found = appendGetCells(sc.cbuf[:0], &sc.dbuf, ent, *opts, &req.Read, req.Now); !found {
			return false, true
		}
		sc.kbuf = ent.appendKey(sc.kbuf[:0], sc.schema)
		return true, fn(tablekit.Row{Key: sc.kbuf[:len(sc.kbuf):len(sc.kbuf)], Columns: sc.cbuf[:len(sc.cbuf):len(sc.cbuf)]})
	})
	if err != nil || next == nil {
		return nil, err
	}
	return next.appendKey(make(tablekit.PrimaryKey, 0, len(sc.schema)), sc.schema), nil
}
