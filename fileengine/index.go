package fileengine

import (
	"context"

	"github.com/tablekit/tablekit"
)

// WriteIndexed implements tablekit.IndexWriter: the row write and its
// index entries are applied under their tables' shared locks and their
// stripes (tables in name order, stripes in index order, as
// BatchWriteRow takes them) and committed in one pebble batch with one
// sync, so that after a crash the row is stored only with its entries.
// The row is applied first: when it fails (its condition, say) nothing is
// committed. An entry table that is gone (or another incarnation) is
// skipped: its index was dropped meanwhile.
func (e *Engine) WriteIndexed(ctx context.Context, w *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
		return nil, tablekit.ErrSkip // an indexed table has no auto-increment column
	}
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	defer e.end()
	t, err := e.table(w.Meta.Name)
	if err != nil {
		return nil, err
	}
	tabs := map[string]*table{w.Meta.Name: t}
	for _, q := range entries {
		if _, ok := tabs[q.Meta.Name]; !ok {
			if et, err := e.table(q.Meta.Name); err == nil {
				tabs[q.Meta.Name] = et
			}
		}
	}
	defer rlockInOrder(tabs)()
	if err := t.current(w.Meta); err != nil {
		return nil, err
	}
	rk := t.rowKey(w.Key)
	held := []int{e.stripe(rk)}
	eks := make([][]byte, len(entries))
	for i, q := range entries {
		et := tabs[q.Meta.Name]
		if et == nil || et.current(q.Meta) != nil {
			continue
		}
		eks[i] = et.rowKey(q.Key)
		held = append(held, e.stripe(eks[i]))
	}
	unlock := e.lockStripes(held)
	defer unlock()
	b := e.db.NewBatch()
	defer b.Close()
	var tickets feedTickets
	defer tickets.done()
	res, err := e.apply(b, t, w, rk, &tickets)
	if err != nil {
		return nil, err
	}
	for i, q := range entries {
		if eks[i] == nil {
			continue
		}
		if _, err := e.apply(b, tabs[q.Meta.Name], q, eks[i], &tickets); err != nil {
			return nil, err
		}
	}
	if !b.Empty() {
		if err := e.commitThen(b, unlock); err != nil {
			return nil, storeError(err, "%v", w)
		}
	}
	return res, nil
}
