package localengine

import (
	"context"
	"slices"
	"sync"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// BatchGetRow implements tablekit.BatchReader: every row is read as GetRow
// reads it (appendGetCells: the same rules, one implementation), in two
// steps. It looks the entries up under one hold of the table's read lock
// per run of requests of one table (at most lockBatch of them, as a range
// read's batch: walk.go), holding a span's lock across consecutive keys of
// the span; then, unlocked (entries are immutable), it evaluates them into
// scratch space kept in a pool and builds the rows in exactly sized
// slices: one for the rows, one for all their key parts, one for all their
// cells. So a batch costs one catalog lookup and four allocations, where a
// GetRow per row costs a lookup, a lock and three allocations per row (a
// secondary index's read verifies its page's rows in one such call). A
// request of a table that is gone, or of another incarnation, has its own
// error, as its GetRow would.
func (e *Engine) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tables := e.catalog.Load()
	if tables == nil {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the local engine is closed")
	}
	out := make([]tablekit.GetRowResponse, len(reqs))
	sc := batchPool.Get().(*batchScratch)
	defer sc.release()
	sc.got = slices.Grow(sc.got[:0], len(reqs))[:len(reqs)]
	for i := 0; i < len(reqs); {
		name := reqs[i].Meta.Name
		j := i + 1
		for j < len(reqs) && j-i < lockBatch && reqs[j].Meta.Name == name {
			j++
		}
		if t, ok := (*tables)[name]; ok {
			t.lookup(reqs[i:j], sc.got[i:j], out[i:j], &sc.kbuf)
		} else {
			for k := i; k < j; k++ {
				out[k].Err = tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
			}
		}
		i = j
	}
	// Evaluate, unlocked, into the scratch buffer of cells.
	nrows, nkeys := 0, 0
	for i, q := range reqs {
		g := &sc.got[i]
		if !g.ok {
			continue
		}
		from := len(sc.cbuf)
		sc.cbuf, g.ok = appendGetCells(sc.cbuf, &sc.dbuf, &g.ent, g.opts, &q.Read, q.Now)
		g.from, g.to = from, len(sc.cbuf)
		if g.ok {
			nrows++
			nkeys += len(g.schema)
		}
	}
	rows := make([]tablekit.Row, nrows)
	keys := make(tablekit.PrimaryKey, 0, nkeys)
	cells := make([]tablekit.Column, 0, len(sc.cbuf))
	n := 0
	for i, q := range reqs {
		g := &sc.got[i]
		if !g.ok {
			continue
		}
		// The row's key is the key asked for (their encodings are equal),
		// under the schema's names, as GetRow's.
		kn := len(keys)
		keys = keys[:kn+len(g.schema)]
		for j, kc := range g.schema {
			p := &keys[kn+j]
			p.Name, p.Value = kc.Name, q.Key[j].Value
		}
		cn := len(cells)
		cells = append(cells, sc.cbuf[g.from:g.to]...)
		r := &rows[n]
		n++
		r.Key, r.Columns = keys[kn:len(keys):len(keys)], cells[cn:len(cells):len(cells)]
		out[i].Row = r
	}
	return out, nil
}

// lookup finds the stored entries of reqs, requests of table t, noting
// each in got (ok: there is one) with the table's options and key schema,
// or its error in out. It holds t's read lock throughout, and a span's
// lock across consecutive keys of the span, each lookup starting where
// the one before ended (a B-tree path hint).
func (t *table) lookup(reqs []*tablekit.GetRowRequest, got []batchRow, out []tablekit.GetRowResponse, kbuf *[]byte) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var s *span
	var hint btree.PathHint // where the key before was: a page of an index's rows often has them near each other
	at := -1
	for i, q := range reqs {
		got[i] = batchRow{}
		cur, err := t.current(q.Meta)
		if err != nil {
			out[i].Err = err
			continue
		}
		// The map does not keep the lookup key: a view of the buffer will do.
		*kbuf = codec.AppendKey((*kbuf)[:0], q.Key)
		k := bytesView(*kbuf)
		if j := t.spanOf(k); j != at {
			if s != nil {
				s.mu.RUnlock()
			}
			at, s, hint = j, t.spans[j], btree.PathHint{}
			s.mu.RLock()
		}
		ent, ok := s.rows.GetHint(s.probe(k), &hint)
		got[i] = batchRow{ent: ent, ok: ok, opts: cur.Options, schema: cur.Key}
	}
	if s != nil {
		s.mu.RUnlock()
	}
}

// batchRow is what BatchGetRow found for one request: the stored entry
// (ok), the table's options and key schema as the lookup saw them, and
// where the returned cells are in the scratch buffer.
type batchRow struct {
	ent      entry
	ok       bool
	opts     tablekit.TableOptions
	schema   tablekit.KeySchema
	from, to int
}

// batchScratch is BatchGetRow's working memory, kept in a pool.
type batchScratch struct {
	got  []batchRow
	kbuf []byte            // the encoded key looked up
	cbuf []tablekit.Column // the evaluated cells of every row
	dbuf []tablekit.Column // a stored row's cells, decoded to be evaluated
}

var batchPool = sync.Pool{New: func() any { return new(batchScratch) }}

// release clears sc (dropping its references, for the garbage collector)
// and returns it to the pool.
func (sc *batchScratch) release() {
	clear(sc.got)
	clear(sc.cbuf[:cap(sc.cbuf)])
	clear(sc.dbuf[:cap(sc.dbuf)])
	sc.got, sc.cbuf, sc.dbuf, sc.kbuf = sc.got[:0], sc.cbuf[:0], sc.dbuf[:0], sc.kbuf[:0]
	batchPool.Put(sc)
}
