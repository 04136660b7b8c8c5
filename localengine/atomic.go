package localengine

import (
	"context"
	"slices"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

var _ tablekit.AtomicWriter = (*Engine)(nil)

// AtomicWrite implements tablekit.AtomicWriter (SPEC §13): under the
// table's lock, held alone, it applies every write to a new entry, checking
// each write's condition against its stored row, and stores the entries
// only when every write succeeded; a reader, who takes the lock shared,
// sees all of them or none. The entries are made before locking, as
// Write's are.
func (e *Engine) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	t, err := e.table(ctx, reqs[0].Meta.Name)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(reqs))
	ents := make([]*entry, len(reqs))
	auto := false // a key holds AutoIncrement: assigned under the lock (autoinc.go)
	for i, w := range reqs {
		if w.Meta.Name != reqs[0].Meta.Name {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: tablekit.Errorf(tablekit.ErrInvalidArgument,
				"table %q: an atomic write is within one table, %q", w.Meta.Name, reqs[0].Meta.Name)}
		}
		if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
			auto = true
			continue
		}
		keys[i] = codec.EncodeKeyString(w.Key)
		ents[i] = &entry{key: slices.Clone(w.Key)}
	}
	keep := make([]bool, len(reqs))
	out := make([]tablekit.WriteResponse, len(reqs))
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	orig := reqs
	if auto {
		if reqs, err = t.assignAll(reqs, keys, ents); err != nil {
			return nil, err
		}
	}
	for i, w := range reqs {
		m, err := t.current(w.Meta)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		// The engine's own options are authoritative (as in Write).
		if w.Meta != m && (w.Meta.Options != m.Options || w.Meta.Generation != m.Generation) {
			c := *w
			c.Meta = m
			w = &c
		}
		// As in Write, only an update and a condition read the stored row.
		var cur *rowmodel.Row
		if w.Kind == tablekit.WriteUpdate || !w.Condition.IsZero() {
			if old, ok := t.rows.Get(keys[i]); ok {
				cur = &old.row
			}
		}
		k, res, err := rowmodel.ApplyTo(&ents[i].row, cur, w)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		keep[i], out[i].Update = k, res
	}
	// Every write holds: store them all (the rows are distinct), each with
	// its change record (feed.go).
	for i, w := range reqs {
		if w != orig[i] { // assigned (autoinc.go)
			out[i].Update = withKey(out[i].Update, w.Key)
		}
		t.record(w, out[i].Update)
		if !keep[i] {
			t.rows.Delete(keys[i])
			continue
		}
		t.ai.saw(w.Key)
		ents[i].seal()
		t.rows.Set(keys[i], ents[i])
	}
	return out, nil
}
