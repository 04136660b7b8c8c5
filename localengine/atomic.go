package localengine

import (
	"context"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/enginekit"
)

// AtomicWrite implements tablekit.AtomicWriter (SPEC §13). It holds the
// stripes of all its rows (taken in stripe order, so that two atomic writes
// never wait for each other crosswise), reads the stored rows under the
// table's read lock, applies every write to a new row unlocked, checking
// each write's condition against its stored row, and stores the rows, with
// their change records, in one hold of the table's lock, held alone, only
// when every write succeeded: a reader, who takes the lock shared, sees all
// of them or none. As in Write, a write whose table options changed
// meanwhile is applied again under the new ones.
//
// A put or update whose key holds tablekit.AutoIncrement gets its key
// first (assignAll, autoinc.go); should a real-key write have stored that
// row meanwhile, the key is assigned again and the stripes taken anew.
func (e *Engine) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	t, err := e.table(ctx, reqs[0].Meta.Name)
	if err != nil {
		return nil, err
	}
	auto := false
	for i, w := range reqs {
		if w.Meta.Name != reqs[0].Meta.Name {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: tablekit.Errorf(tablekit.ErrInvalidArgument,
				"table %q: an atomic write is within one table, %q", w.Meta.Name, reqs[0].Meta.Name)}
		}
		auto = auto || (w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0)
	}
	if !auto {
		out, _, err := t.atomicWrite(ctx, reqs, nil)
		return out, err
	}
	assigned, fresh, err := t.assignAll(reqs)
	if err != nil {
		return nil, err
	}
	for {
		out, taken, err := t.atomicWrite(ctx, assigned, fresh)
		if taken < 0 {
			if err != nil {
				return nil, err
			}
			for i, w := range assigned {
				if fresh[i] {
					out[i].Update = withKey(out[i].Update, w.Key)
				}
			}
			return out, nil
		}
		if assigned[taken], err = t.ai.assign(reqs[taken]); err != nil {
			return nil, &tablekit.AtomicWriteError{Index: taken, Err: err}
		}
	}
}

// atomicWrite is AtomicWrite of reqs, whose keys are real, as AtomicWrite
// describes. fresh, when not nil, says which keys were just assigned
// (autoinc.go): their rows must be absent. When one is there, atomicWrite
// writes nothing and returns its index as taken (-1 otherwise).
func (t *table) atomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest, fresh []bool) ([]tablekit.WriteResponse, int, error) {
	keys := make([]string, len(reqs))
	encs := make([][]byte, len(reqs)) // exactly sized: apply may run again with them (packAfter)
	held := make([]int, 0, len(reqs))
	for i, w := range reqs {
		k := codec.EncodeKey(w.Key)
		keys[i], encs[i] = bytesView(k), k
		held = append(held, stripeOf(k))
	}
	defer enginekit.LockStripes(t.stripes[:], held)() // in ascending order
	if err := ctx.Err(); err != nil {
		return nil, -1, err
	}
	olds := make([]entry, len(reqs))
	found := make([]bool, len(reqs))
	applied := make([]*tablekit.WriteRequest, len(reqs))
	ents := make([]entry, len(reqs))
	keep := make([]bool, len(reqs))
	out := make([]tablekit.WriteResponse, len(reqs))
	var scratch [16]tablekit.Column
	for {
		t.mu.RLock()
		var meta tablekit.TableMeta
		for i, w := range reqs {
			m, err := t.current(w.Meta)
			if err != nil {
				t.mu.RUnlock()
				return nil, -1, &tablekit.AtomicWriteError{Index: i, Err: err}
			}
			meta = *m
			// As in Write, only an update and a condition read the stored
			// row, and a write to an assigned key checks it is absent.
			if w.Kind == tablekit.WriteUpdate || !w.Condition.IsZero() || (fresh != nil && fresh[i]) {
				olds[i], found[i] = t.get(keys[i])
			}
			if fresh != nil && fresh[i] && found[i] {
				t.mu.RUnlock()
				return nil, i, nil
			}
		}
		t.mu.RUnlock()
		for i, w := range reqs {
			var err error
			applied[i], ents[i], keep[i], out[i].Update, err = applyAfter(w, encs[i], &meta, olds[i], found[i], scratch[:0])
			if err != nil {
				return nil, -1, &tablekit.AtomicWriteError{Index: i, Err: err}
			}
		}
		for i := range reqs {
			if keep[i] && (fresh == nil || !fresh[i]) { // an assigned key is the counter's already
				t.ai.saw(applied[i].Key) // before the row is stored (autoinc.go)
			}
		}
		t.lock()
		if t.meta.Generation != meta.Generation {
			t.unlock()
			continue // the options changed since they were read: apply again
		}
		// Every write holds: store them all (the rows are distinct), each
		// with its change record (feed.go).
		for i := range reqs {
			t.record(applied[i], out[i].Update)
			t.storeLocked(keys[i], ents[i], keep[i]) // span.go
		}
		t.unlock()
		return out, -1, nil
	}
}
