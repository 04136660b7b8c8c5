package fileengine

import (
	"context"

	"github.com/tablekit/tablekit"
)

// AtomicWrite implements tablekit.AtomicWriter (SPEC §13): under the
// table's shared lock and the stripes of every row (taken in index order,
// as BatchWriteRow takes them), it applies each write against its stored
// row into one pebble batch and commits the batch, with one sync, only
// when every write succeeded. Pebble makes a batch visible and durable as
// a whole, so a reader, and Open after a crash, sees all of the writes or
// none.
func (e *Engine) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	for i, w := range reqs {
		if w.Meta.Name != reqs[0].Meta.Name || w.Meta.Incarnation != reqs[0].Meta.Incarnation {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: tablekit.Errorf(tablekit.ErrInvalidArgument,
				"table %q: an atomic write is within one table, %q", w.Meta.Name, reqs[0].Meta.Name)}
		}
	}
	t, err := e.using(ctx, reqs[0].Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	defer t.mu.RUnlock()
	reqs, assigned, err := e.assignAll(reqs, func(int) *table { return t }) // autoinc.go
	if err != nil {
		return nil, err
	}
	keys := make([][]byte, len(reqs))
	held := make([]int, len(reqs))
	for i, w := range reqs {
		keys[i] = t.rowKey(w.Key)
		held[i] = e.stripe(keys[i])
	}
	unlock := e.lockStripes(held)
	defer unlock()
	b := e.db.NewBatch()
	defer b.Close()
	var tickets feedTickets // each row's change record goes in the batch (feed.go)
	defer tickets.done()
	out := make([]tablekit.WriteResponse, len(reqs))
	for i, w := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := e.apply(b, t, w, keys[i], &tickets)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		if assigned != nil && assigned[i] {
			res = withKey(res, w.Key)
		}
		out[i].Update = res
	}
	if !b.Empty() {
		if err := e.commitThen(b, unlock); err != nil { // the rows' locks go once visible
			return nil, storeError(err, "atomic write of %d rows", len(reqs))
		}
	}
	return out, nil
}
