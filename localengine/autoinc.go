package localengine

import (
	"context"
	"slices"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// Auto-increment key columns (SPEC §14). A table with one keeps, per
// partition key, the greatest value its auto-increment column has held in
// a write: assigned values, and real ones a put or update wrote. A write
// whose key holds tablekit.AutoIncrement gets that plus one, under the
// table's lock and in the same critical section as the write, so the row
// is new (no row of that partition key holds the value), its condition
// sees an absent row, and no value is handed out twice. The counters live
// and die with the table (a table created again starts afresh).

var _ tablekit.CapabilityDeclarer = (*Engine)(nil)

// Capabilities implements tablekit.CapabilityDeclarer: what the engine's
// methods show, and auto-increment key columns.
func (e *Engine) Capabilities() tablekit.Capabilities {
	var c tablekit.Capabilities
	var b any = e
	_, c.BatchRead = b.(tablekit.BatchReader)
	_, c.BatchWrite = b.(tablekit.BatchWriter)
	_, c.LendingScan = b.(tablekit.RangeScanner)
	_, c.AtomicWrite = b.(tablekit.AtomicWriter)
	_, c.ChangeFeed = b.(tablekit.ChangeFeeder)
	c.AutoIncrement = true
	return c
}

// autoInc is a table's auto-increment state, guarded by the table's lock.
type autoInc struct {
	col  int              // the auto-increment column's index in the key
	last map[string]int64 // encoded partition key -> greatest value held
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

// saw notes a write's real key (the caller holds the table's lock).
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
	if v > a.last[string(pk)] { // a lookup by string(pk) does not allocate
		a.last[string(pk)] = v
	}
}

// assign returns a copy of w whose key holds the next value of its
// partition key (the caller holds the table's lock).
func (a *autoInc) assign(w *tablekit.WriteRequest) (*tablekit.WriteRequest, error) {
	if a == nil || w.Key.AutoIncrementIndex() != a.col {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: key %v holds AutoIncrement, but that is not the table's auto-increment column", w.Meta.Name, w.Key)
	}
	var buf [128]byte
	pk := codec.AppendKey(buf[:0], w.Key[:1])
	v := a.last[string(pk)] + 1
	if v <= 0 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: partition key %v has used every auto-increment value", w.Meta.Name, w.Key[:1])
	}
	a.last[string(pk)] = v
	c := *w
	c.Key = w.Key.WithAutoIncrement(v)
	return &c, nil
}

// assignAll is assign of every put and update in reqs whose key holds
// AutoIncrement, with the keys and entries AtomicWrite left for them: a
// new slice of the requests (the caller's is not changed).
func (t *table) assignAll(reqs []*tablekit.WriteRequest, keys []string, ents []*entry) ([]*tablekit.WriteRequest, error) {
	for _, w := range reqs { // the real keys first: an assigned one must differ
		if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() < 0 {
			t.ai.saw(w.Key)
		}
	}
	out := slices.Clone(reqs)
	for i, w := range reqs {
		if w.Kind == tablekit.WriteDelete || w.Key.AutoIncrementIndex() < 0 {
			continue
		}
		if _, err := t.current(w.Meta); err != nil {
			continue // AtomicWrite refuses it as stale, before its key is used
		}
		c, err := t.ai.assign(w)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		out[i] = c
		keys[i] = codec.EncodeKeyString(c.Key)
		ents[i] = &entry{key: slices.Clone(c.Key)}
	}
	return out, nil
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

// writeAuto is Write of a put or update whose key holds AutoIncrement: as
// Write, but the key is assigned, encoded and stored under the table's
// lock.
func (e *Engine) writeAuto(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	t, err := e.table(ctx, w.Meta.Name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m, err := t.current(w.Meta)
	if err != nil {
		return nil, err
	}
	if w, err = t.ai.assign(w); err != nil {
		return nil, err
	}
	if w.Meta.Options != m.Options || w.Meta.Generation != m.Generation {
		w.Meta = m // w is assign's copy
	}
	k := codec.EncodeKeyString(w.Key)
	ent := &entry{key: slices.Clone(w.Key)}
	// No row holds the value (saw keeps the counter above every real key
	// written): the write meets an absent row.
	keep, res, err := rowmodel.ApplyTo(&ent.row, nil, w)
	if err != nil {
		return nil, err
	}
	res = withKey(res, w.Key)
	t.record(w, res)
	if keep {
		ent.seal()
		t.rows.Set(k, ent)
	}
	return res, nil
}
