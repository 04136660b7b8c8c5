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
func (e *Engine) WriteIndexed(ctx context.Context, w *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
		return nil, tablekit.ErrSkip // an indexed table has no auto-increment column
	}
	t, err := e.table(ctx, w.Meta.Name)
	if err != nil {
		return nil, err
	}
	for _, q := range entries {
		et, err := e.table(ctx, q.Meta.Name)
		if errors.Is(err, tablekit.ErrTableNotFound) {
			continue // its index was dropped meanwhile
		}
		if err != nil {
			return nil, err
		}
		if _, err := et.write(q); err != nil && !errors.Is(err, tablekit.ErrTableNotFound) {
			return nil, err
		}
	}
	return t.write(w)
}
