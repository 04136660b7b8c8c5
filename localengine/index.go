package localengine

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit"
)

// WriteIndexed implements tablekit.IndexWriter: a row write and its index
// entries in one call. The entries are stored first, each as Write stores
// a row (its own stripe, taken and released: no lock is held across
// tables, so no two writes can wait for each other), then the row: a
// reader that sees the row sees its entries, and a memory store has no
// crash to survive. The call saves the Client its separate entry puts.
//
// A put or update whose key holds tablekit.AutoIncrement (an indexed
// auto-increment table, SPEC §14, §16) is assigned its value first, as
// Write assigns it (autoinc.go); the entries are stored under that value
// (tablekit.AssignEntries), then the row, to an absent row. Should the
// row be there (written meanwhile under that value as a real key), the
// key is assigned again and the entries stored again under the new value:
// those of the first value are extra entries, which reads ignore.
func (e *Engine) WriteIndexed(ctx context.Context, w *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	t, err := e.table(ctx, w.Meta.Name)
	if err != nil {
		return nil, err
	}
	if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
		return t.writeAuto(w, func(aw *tablekit.WriteRequest) error {
			v, _ := aw.Key[t.ai.col].Value.Int()
			return e.putEntries(ctx, tablekit.AssignEntries(entries, v))
		})
	}
	if err := e.putEntries(ctx, entries); err != nil {
		return nil, err
	}
	return t.write(w)
}

// putEntries stores entries, each as Write would, skipping those of a
// table that is gone (its index was dropped meanwhile).
func (e *Engine) putEntries(ctx context.Context, entries []*tablekit.WriteRequest) error {
	for _, q := range entries {
		et, err := e.table(ctx, q.Meta.Name)
		if errors.Is(err, tablekit.ErrTableNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if _, err := et.write(q); err != nil && !errors.Is(err, tablekit.ErrTableNotFound) {
			return err
		}
	}
	return nil
}
