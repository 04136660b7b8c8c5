package fileengine

import (
	"bytes"
	"context"
	"slices"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// BatchGetRow implements tablekit.BatchReader: every row is read as
// GetRow reads it, under its table's shared lock (tables taken in name
// order, as BatchWriteRow takes them), through one pebble iterator: one
// view of the store for the whole batch, and one iterator's setup instead
// of one per row, which is most of a point read's cost (a secondary
// index's read verifies its page's rows in one such call). A request of
// a table that is gone, or of another incarnation, has its own error.
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
	it, err := e.db.NewIter(nil)
	if err != nil {
		return nil, storeError(err, "batch of %d reads", len(reqs))
	}
	defer it.Close()
	r := rowPool.Get().(*rowmodel.Row)
	defer putRow(r)
	var k []byte
	for i, q := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := tabs[q.Meta.Name]
		if t == nil {
			out[i].Err = tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", q.Meta.Name)
			continue
		}
		if err := t.current(q.Meta); err != nil {
			out[i].Err = err
			continue
		}
		k = codec.AppendKey(append(k[:0], t.prefix...), q.Key)
		if !it.SeekGE(k) || !bytes.Equal(it.Key(), k) {
			if err := it.Error(); err != nil {
				out[i].Err = storeError(err, "table %q: read %v", q.Meta.Name, q.Key)
			}
			continue // no such row
		}
		val, err := it.ValueAndErr()
		if err != nil {
			out[i].Err = storeError(err, "table %q: read %v", q.Meta.Name, q.Key)
			continue
		}
		if err := decodeRow(r, view(val)); err != nil {
			out[i].Err = tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: row %v", q.Meta.Name, q.Key)
			continue
		}
		cols, found := rowmodel.Read(r, t.meta.Options, &q.Read, q.Now)
		if !found {
			continue
		}
		own(cols) // the cells view the iterator's buffer
		out[i].Row = &tablekit.Row{Key: slices.Clone(q.Key), Columns: cols}
	}
	return out, nil
}
