package fileengine

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
)

// Auto-increment key columns (SPEC §14). A put or update of a table with
// an auto-increment column writes, in its own pebble batch, a counter key
//
//	'a' len(id) id codec.EncodeKey(partition key) 8-byte big-endian value
//
// for the value its row's auto-increment column holds, and deletes the
// counter key of that value minus one. Every deletion of a counter key so
// comes with the write of a greater one in the same batch, and a batch
// survives a crash whole or not at all, so after any crash the greatest
// counter key of a partition key is at least the value of every row that
// survived. The engine keeps, per partition key, the greatest value it
// knows of (read from the greatest counter key at its first use, under the
// table's shared lock, so that DeleteTable cannot clear it meanwhile); a
// write whose key holds tablekit.AutoIncrement gets that plus one, which no
// row of the partition key holds and no earlier assignment handed out,
// before or after a crash. Values assigned to writes that fail are gaps.
// A single-row write that finds a row at its assigned key (written
// meanwhile with that value as a real key) takes the next value; in
// BatchWriteRow and AtomicWrite such a write meets that row (its condition
// is evaluated against it).
const aiPrefix = 'a'

// aiTablePrefix is the prefix of every counter key of a table.
func aiTablePrefix(rows string) []byte {
	return append([]byte{aiPrefix, byte(len(rows))}, rows...)
}

// aiCounterKey is the counter key of value v of the partition key whose
// encoding is pk.
func aiCounterKey(rows string, pk []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(append(aiTablePrefix(rows), pk...), uint64(v))
}

// autoInc is a table's auto-increment state.
type autoInc struct {
	col  int
	mu   sync.Mutex
	last map[string]int64 // encoded partition key -> greatest value known
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

// lastOf returns the greatest value known in partition key pk, reading it
// from the store at its first use (the caller holds a.mu and t.mu shared).
func (e *Engine) lastOf(t *table, pk []byte) (int64, error) {
	if v, ok := t.ai.last[string(pk)]; ok {
		return v, nil
	}
	lo := append(aiTablePrefix(t.rows), pk...)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: codec.PrefixSuccessor(lo)})
	if err != nil {
		return 0, storeError(err, "table %q: auto-increment counter", t.meta.Name)
	}
	var v int64
	if it.Last() {
		if k := it.Key(); len(k) == len(lo)+8 {
			v = int64(binary.BigEndian.Uint64(k[len(lo):]))
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return 0, storeError(err, "table %q: auto-increment counter", t.meta.Name)
	}
	t.ai.last[string(pk)] = v
	return v, nil
}

// assign returns a copy of w whose AutoIncrement holds the partition key's
// next value (the caller holds t.mu shared).
func (e *Engine) assign(t *table, w *tablekit.WriteRequest) (*tablekit.WriteRequest, error) {
	a := t.ai
	if a == nil || w.Key.AutoIncrementIndex() != a.col {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: key %v holds AutoIncrement, but that is not the table's auto-increment column", w.Meta.Name, w.Key)
	}
	pk := codec.EncodeKey(w.Key[:1])
	a.mu.Lock()
	defer a.mu.Unlock()
	last, err := e.lastOf(t, pk)
	if err != nil {
		return nil, err
	}
	if last+1 <= 0 {
		return nil, driver.AutoIncrementExhausted(w.Meta.Name, w.Key)
	}
	a.last[string(pk)] = last + 1
	c := *w
	c.Key = w.Key.WithAutoIncrement(last + 1)
	return &c, nil
}

// assignAll returns reqs with every put and update whose key holds
// AutoIncrement assigned (a new slice when there is one; the caller's is
// not changed), and which were; table gives each request's table (nil:
// skipped, it fails elsewhere).
func (e *Engine) assignAll(reqs []*tablekit.WriteRequest, table func(i int) *table) ([]*tablekit.WriteRequest, []bool, error) {
	var assigned []bool
	out := reqs
	for i, w := range reqs {
		if w.Kind == tablekit.WriteDelete || w.Key.AutoIncrementIndex() < 0 {
			continue
		}
		t := table(i)
		if t == nil {
			continue
		}
		c, err := e.assign(t, w)
		if err != nil {
			return nil, nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		if assigned == nil {
			out, assigned = slices.Clone(reqs), make([]bool, len(reqs))
		}
		out[i], assigned[i] = c, true
	}
	return out, assigned, nil
}

// noteAutoInc adds to b the counter key of the value w's row holds in the
// table's auto-increment column (and the deletion of the one below it),
// and raises the value known for its partition key to it (the caller
// holds t.mu shared). It does nothing for a delete or a table without
// such a column.
func (e *Engine) noteAutoInc(b *pebble.Batch, t *table, w *tablekit.WriteRequest) error {
	a := t.ai
	if a == nil || w.Kind == tablekit.WriteDelete || a.col >= len(w.Key) {
		return nil
	}
	v, ok := w.Key[a.col].Value.Int()
	if !ok || v <= 0 {
		return nil // below every value assigned: no counter needed
	}
	pk := codec.EncodeKey(w.Key[:1])
	a.mu.Lock()
	last, err := e.lastOf(t, pk)
	if err == nil && v > last {
		a.last[string(pk)] = v
	}
	a.mu.Unlock()
	if err != nil {
		return err
	}
	_ = b.Set(aiCounterKey(t.rows, pk, v), nil, nil)
	if v > 1 {
		_ = b.Delete(aiCounterKey(t.rows, pk, v-1), nil)
	}
	return nil
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

// writeAuto is Write of a put or update whose key holds AutoIncrement:
// the value is assigned under the table's shared lock, then the write goes
// as Write's does, under the stripe of the row it names. A row found there
// was written meanwhile with that value as a real key (assigned values are
// never handed out twice): the write takes the next value instead, so it
// never overwrites a row.
func (e *Engine) writeAuto(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	t, err := e.using(ctx, w.Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	defer t.mu.RUnlock()
	return e.untilFree(t, w, func(a *tablekit.WriteRequest) (*tablekit.UpdateResult, bool, error) {
		return e.writeRow(t, a, true)
	})
}

// untilFree assigns w's AutoIncrement value and writes the assigned
// request with write, again with the next value while write finds its key
// taken (a row stored meanwhile with that value as a real key); the
// result carries the key written.
func (e *Engine) untilFree(t *table, w *tablekit.WriteRequest, write func(a *tablekit.WriteRequest) (res *tablekit.UpdateResult, taken bool, err error)) (*tablekit.UpdateResult, error) {
	for {
		a, err := e.assign(t, w)
		if err != nil {
			return nil, err
		}
		if afterAssign != nil {
			afterAssign(a.Key)
		}
		res, taken, err := write(a)
		if !taken {
			if err != nil {
				return nil, err
			}
			return withKey(res, a.Key), nil
		}
	}
}

// afterAssign, if set (by tests), runs between assigning a value and
// writing the row.
var afterAssign func(tablekit.PrimaryKey)
