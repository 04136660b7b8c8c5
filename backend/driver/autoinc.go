package driver

import (
	"sync"

	"github.com/tablekit/tablekit"
)

// AutoIncrementTaken is the error of a write whose key holds
// tablekit.AutoIncrement when every one of the attempts values its store
// assigned was already a row (SPEC §14: rows written with explicit values
// kept landing just above the partition's counter). It is an
// ErrConditionFailed (each attempt was a put of a new row) and nothing was
// written; the values taken are gaps, never duplicates. key is the last
// key tried.
func AutoIncrementTaken(key tablekit.PrimaryKey, attempts int) error {
	return tablekit.Errorf(tablekit.ErrConditionFailed,
		"auto-increment: each of the %d keys assigned was already a row (rows with explicit values kept landing above the partition's counter), the last %v; nothing written", attempts, key)
}

// AutoIncrementExhausted is the error of a write whose key holds
// tablekit.AutoIncrement in a partition key whose auto-increment column
// has held the largest Integer (assigned or written): no value above it
// is left (SPEC §14). It is an ErrInvalidArgument, not retryable, and
// every later such write there gets it too (the counter never goes back).
func AutoIncrementExhausted(table string, key tablekit.PrimaryKey) error {
	return tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: partition key %v has used every auto-increment value", table, key[:1])
}

// RealAutoIncrement returns the value a put or update gives the table's
// auto-increment column itself (a migrated row keeps its key), when it is
// above 0: SPEC §14 says later assigned values are greater than it, so a
// backend whose counter is not raised by the write itself raises it first
// (to at least v). ok is false for a delete, a write with AutoIncrement, or
// a table without the column.
func RealAutoIncrement(w *tablekit.WriteRequest) (v int64, ok bool) {
	if w.Kind == tablekit.WriteDelete {
		return 0, false
	}
	for i, kc := range w.Meta.Key {
		if kc.AutoIncrement && i < len(w.Key) {
			v, ok = w.Key[i].Value.Int()
			return v, ok && v > 0
		}
	}
	return 0, false
}

// CounterFloors remembers, per counter (a table incarnation and partition
// key, as the caller names it), a value the store's counter is known to
// have reached: a counter never goes back, so a write whose real value is
// at most that needs no raise. The zero value is ready; it forgets all once
// it holds maxFloors counters. Safe for concurrent use.
type CounterFloors struct {
	mu sync.Mutex
	m  map[string]int64
}

const maxFloors = 1 << 16

// Covers reports whether counter id is known to be at least v.
func (f *CounterFloors) Covers(id string, v int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.m[id]
	return ok && cur >= v
}

// Saw records that counter id has reached v.
func (f *CounterFloors) Saw(id string, v int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= maxFloors {
		f.m = map[string]int64{}
	}
	if cur, ok := f.m[id]; !ok || v > cur {
		f.m[id] = v
	}
}

// Raise is the rule of a write giving the auto-increment column a real
// value (RealAutoIncrement) on a backend whose counter is kept apart from
// the rows: unless counter id is known to be at least that value, raise
// makes it so (one store call, before w is written), and the floor is
// remembered. Nothing to do: nil, no call.
func (f *CounterFloors) Raise(w *tablekit.WriteRequest, id string, raise func(v int64) error) error {
	v, ok := RealAutoIncrement(w)
	if !ok || f.Covers(id, v) {
		return nil
	}
	if err := raise(v); err != nil {
		return err
	}
	f.Saw(id, v)
	return nil
}
