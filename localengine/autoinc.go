package localengine

import (
	"slices"
	"sync"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
)

// Auto-increment key columns (SPEC §14). A table with one keeps, per
// partition key, a counter: the greatest value its auto-increment column
// has held, assigned or written. The rules:
//
//   - A put or update whose key holds tablekit.AutoIncrement is assigned
//     the counter plus one, which becomes the counter (under the counter's
//     own lock, autoInc.mu, held for nothing else). So each value is
//     handed out once, above every value handed out before in its
//     partition key, and a value is used up even when its write then fails
//     (a gap, never a duplicate).
//   - A put or update that stores a row raises the counter to the row's
//     value before it stores it (holding the row's stripe), so later
//     assignments are above every real key written.
//   - The assigned write then takes its row's stripe and, under it, checks
//     that the row is absent (its condition meets an absent row). A real-key
//     write may have stored that row between the assignment and the stripe;
//     then the counter is above it already, and the key is assigned again.
//     Once the write holds the stripe, the row is its own.
//
// An atomic write raises the counter with its own real keys before
// assigning its placeholders, so that none is assigned one of them, and a
// request of a table deleted and created again is refused as stale before
// any value is assigned. The change record and the result carry the
// assigned key. The counters live and die with the table (a table created
// again starts afresh).

// autoInc is a table's auto-increment state.
type autoInc struct {
	col  int // the auto-increment column's index in the key
	mu   sync.Mutex
	last map[string]int64 // encoded partition key -> counter; guarded by mu
}

// newAutoInc returns the state of a table of meta m, nil without an
// auto-increment column.
func newAutoInc(m *tablekit.TableMeta) *autoInc {
	for i, kc := range m.Key {
		if kc.AutoIncrement {
			return &autoInc{col: i, last: map[string]int64{}}
		}
	}
	return nil
}

// saw raises the counter of k's partition key to k's value (a no-op
// without an auto-increment column).
func (a *autoInc) saw(k tablekit.PrimaryKey) {
	if a == nil || a.col >= len(k) {
		return
	}
	v, ok := k[a.col].Value.Int()
	if !ok {
		return
	}
	var buf [128]byte
	pk := codec.AppendKey(buf[:0], k[:1])
	a.mu.Lock()
	if v > a.last[string(pk)] { // a lookup by string(pk) does not allocate
		a.last[string(pk)] = v
	}
	a.mu.Unlock()
}

// assign returns a copy of w whose key holds the next value of its
// partition key.
func (a *autoInc) assign(w *tablekit.WriteRequest) (*tablekit.WriteRequest, error) {
	if a == nil || w.Key.AutoIncrementIndex() != a.col {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: key %v holds AutoIncrement, but that is not the table's auto-increment column", w.Meta.Name, w.Key)
	}
	var buf [128]byte
	pk := codec.AppendKey(buf[:0], w.Key[:1])
	a.mu.Lock()
	v := a.last[string(pk)] + 1
	if v <= 0 {
		a.mu.Unlock()
		return nil, driver.AutoIncrementExhausted(w.Meta.Name, w.Key)
	}
	a.last[string(pk)] = v
	a.mu.Unlock()
	c := *w
	c.Key = w.Key.WithAutoIncrement(v)
	return &c, nil
}

// assignAll is assign of every put and update in reqs (an atomic write)
// whose key holds AutoIncrement, after checking that no request is stale
// and raising the counters with the real keys of reqs' puts and updates.
// It returns a new slice of the requests (the caller's is not changed) and
// which of them were assigned.
func (t *table) assignAll(reqs []*tablekit.WriteRequest) ([]*tablekit.WriteRequest, []bool, error) {
	t.mu.RLock()
	for i, w := range reqs {
		if _, err := t.current(w.Meta); err != nil {
			t.mu.RUnlock()
			return nil, nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
	}
	t.mu.RUnlock()
	for _, w := range reqs { // the real keys first: an assigned one must differ
		if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() < 0 {
			t.ai.saw(w.Key)
		}
	}
	out := slices.Clone(reqs)
	fresh := make([]bool, len(reqs))
	for i, w := range reqs {
		if w.Kind == tablekit.WriteDelete || w.Key.AutoIncrementIndex() < 0 {
			continue
		}
		c, err := t.ai.assign(w)
		if err != nil {
			return nil, nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		out[i], fresh[i] = c, true
	}
	return out, fresh, nil
}

// withKey returns res carrying key, the key a write with AutoIncrement
// wrote.
func withKey(res *tablekit.UpdateResult, key tablekit.PrimaryKey) *tablekit.UpdateResult {
	if res == nil {
		return &tablekit.UpdateResult{Key: key}
	}
	res.Key = key
	return res
}

// writeAuto is Write of a put or update whose key holds AutoIncrement: a
// request of a table deleted and created again is refused as stale before
// a value is assigned; then it is assigned a key and written under its
// stripe to an absent row (writeRow), assigned again should the row be
// there. before, if not nil, runs with each assigned request before its
// row is written (WriteIndexed stores the row's index entries there); its
// error fails the write, the row unwritten.
func (t *table) writeAuto(w *tablekit.WriteRequest, before func(*tablekit.WriteRequest) error) (*tablekit.UpdateResult, error) {
	t.mu.RLock()
	_, err := t.current(w.Meta)
	t.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	var buf [256]byte
	for {
		aw, err := t.ai.assign(w)
		if err != nil {
			return nil, err
		}
		if before != nil {
			if err := before(aw); err != nil {
				return nil, err
			}
		}
		if afterAssign != nil {
			afterAssign(aw.Key)
		}
		k := codec.AppendKey(buf[:0], aw.Key)
		st := &t.stripes[stripeOf(k)]
		st.Lock()
		// Capped: the row is packed in an allocation of its own, never in
		// buf, which the next value's key reuses (packAfter).
		res, taken, err := t.writeRow(aw, k[:len(k):len(k)], true)
		st.Unlock()
		switch {
		case taken:
			continue // a real-key write stored the row: the counter is above it now
		case err != nil:
			return nil, err
		}
		return withKey(res, aw.Key), nil
	}
}

// afterAssign, if set (by tests), runs between assigning a value (and
// storing the entries, in WriteIndexed) and writing the row.
var afterAssign func(tablekit.PrimaryKey)
