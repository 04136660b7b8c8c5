package fileengine

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// BatchGetRow implements tablekit.BatchReader: every row is read as a
// range read reads it (addRow: GetRow's rules, the same rowmodel
// evaluation), under its table's shared lock (tables taken in name order,
// as BatchWriteRow takes them), through one pebble iterator: one view of
// the store for the whole batch, and one iterator's setup instead of one
// per row, which is most of a point read's cost (a secondary index's read
// verifies its page's rows in one such call). The rows are sought in the
// order of their keys, so that each seek starts from the one before
// (pebble's seek-using-next: a few steps forward where the rows are near,
// as an index's page of rows often is), and built as a range page is
// (slabs): a few blocks of cells, key parts and bytes for the batch, not
// several allocations a row. A request of a table that is gone, or of
// another incarnation, has its own error.
func (e *Engine) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.end()
	out := make([]tablekit.GetRowResponse, len(reqs))
	tabs := map[string]*table{}
	for _, q := range reqs {
		if _, ok := tabs[q.Meta.Name]; !ok {
			t, _ := e.table(q.Meta.Name) // nil: gone (each request's error below)
			tabs[q.Meta.Name] = t
		}
	}
	defer rlockInOrder(tabs)()
	bs := batchPool.Get().(*batchScratch)
	defer bs.release()
	// The requests to read, by their keys' order (the table's prefix first).
	for i, q := range reqs {
		t := tabs[q.Meta.Name]
		if t == nil {
			out[i].Err = tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", q.Meta.Name)
			continue
		}
		if err := t.current(q.Meta); err != nil {
			out[i].Err = err
			continue
		}
		from := len(bs.keys)
		bs.keys = codec.AppendKey(append(bs.keys, t.prefix...), q.Key)
		bs.order = append(bs.order, batchKey{req: i, from: from, to: len(bs.keys), plen: len(t.prefix), row: -1})
	}
	key := func(b batchKey) []byte { return bs.keys[b.from:b.to] }
	slices.SortFunc(bs.order, func(a, b batchKey) int { return bytes.Compare(key(a), key(b)) })
	it, err := e.db.NewIter(nil)
	if err != nil {
		return nil, storeError(err, "batch of %d reads", len(reqs))
	}
	defer it.Close()
	sc := scratchPool.Get().(*rangeScratch)
	defer sc.release()
	var stored [16]tablekit.Column
	row := rowmodel.Row{Cells: stored[:0]}
	var rows []tablekit.Row
	sl := slabs{rows: &rows}
	for j, b := range bs.order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q := reqs[b.req]
		k := key(b)
		if !it.SeekGE(k) || !bytes.Equal(it.Key(), k) {
			if err := it.Error(); err != nil {
				out[b.req].Err = storeError(err, "table %q: read %v", q.Meta.Name, q.Key)
			}
			continue // no such row
		}
		val, err := it.ValueAndErr()
		if err != nil {
			out[b.req].Err = storeError(err, "table %q: read %v", q.Meta.Name, q.Key)
			continue
		}
		t := tabs[q.Meta.Name]
		rd := newStoredRead(t.meta.Key, t.meta.Options, &q.Read, q.Now, &row, &sc.names)
		rd.key = q.Key
		_, found, _, err := sl.addRow(&rd, k[b.plen:], val, len(bs.order)-j)
		switch {
		case err != nil:
			out[b.req].Err = tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: row %v", q.Meta.Name, q.Key)
		case found:
			bs.order[j].row = len(rows) - 1
		}
	}
	// The rows are in place once every one was added (rows grows).
	for _, b := range bs.order {
		if b.row >= 0 {
			out[b.req].Row = &rows[b.row]
		}
	}
	return out, nil
}

// batchKey is a request of a BatchGetRow: its index, its pebble key
// (bs.keys[from:to], the table's prefix plen bytes of it), and its row in
// the batch's rows (-1: none).
type batchKey struct {
	req, from, to, plen, row int
}

// batchScratch is BatchGetRow's working memory, kept in a pool: the
// requests' keys, one after the other, and their order.
type batchScratch struct {
	keys  []byte
	order []batchKey
}

var batchPool = sync.Pool{New: func() any { return new(batchScratch) }}

func (bs *batchScratch) release() {
	bs.keys, bs.order = bs.keys[:0], bs.order[:0]
	batchPool.Put(bs)
}
