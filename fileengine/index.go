package fileengine

import (
	"context"
	"errors"

	"github.com/cockroachdb/pebble/v2"

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
//
// A put or update whose key holds tablekit.AutoIncrement (an indexed
// auto-increment table, SPEC §14, §16) is assigned its value as Write
// assigns it (autoinc.go), under the same locks; its entries take that
// value (tablekit.AssignEntries) and go in the row's batch, with the
// counter key, so the value, the row and its entries survive a crash
// together or not at all. A row found at the assigned key (written
// meanwhile under that value as a real key) makes it take the next value,
// nothing written for the first.
func (e *Engine) WriteIndexed(ctx context.Context, w *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
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
	if w.Kind == tablekit.WriteDelete || w.Key.AutoIncrementIndex() < 0 {
		res, _, err := e.writeIndexed(tabs, t, w, entries, false)
		return res, err
	}
	return e.untilFree(t, w, func(a *tablekit.WriteRequest) (*tablekit.UpdateResult, bool, error) {
		v, _ := a.Key[t.ai.col].Value.Int()
		return e.writeIndexed(tabs, t, a, tablekit.AssignEntries(entries, v), true)
	})
}

// writeIndexed is WriteIndexed's write of w, whose key is complete, and
// entries in one batch, under the stripes of their rows (the caller holds
// the tables of tabs shared). With absent, a row already stored at w's key
// is not written: taken reports it, nothing written.
func (e *Engine) writeIndexed(tabs map[string]*table, t *table, w *tablekit.WriteRequest, entries []*tablekit.WriteRequest, absent bool) (_ *tablekit.UpdateResult, taken bool, _ error) {
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
	if absent {
		switch _, closer, err := e.db.Get(rk); {
		case err == nil:
			closer.Close()
			return nil, true, nil
		case !errors.Is(err, pebble.ErrNotFound):
			return nil, false, storeError(err, "%v", w)
		}
	}
	b := e.db.NewBatch()
	defer b.Close()
	var tickets feedTickets
	defer tickets.done()
	res, err := e.apply(b, t, w, rk, &tickets)
	if err != nil {
		return nil, false, err
	}
	for i, q := range entries {
		if eks[i] == nil {
			continue
		}
		if _, err := e.apply(b, tabs[q.Meta.Name], q, eks[i], &tickets); err != nil {
			return nil, false, err
		}
	}
	if !b.Empty() {
		if err := e.commitThen(b, unlock); err != nil {
			return nil, false, storeError(err, "%v", w)
		}
	}
	return res, false, nil
}
