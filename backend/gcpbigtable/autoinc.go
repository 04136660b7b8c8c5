package gcpbigtable

import (
	"context"
	"encoding/binary"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// Auto-increment key columns (SPEC §14).
//
// Each partition-key value of a table with an auto-increment column has a
// counter row in the table's own Bigtable table, below every row key:
// 00 00, then codec.EncodeKey of the partition-key value alone, holding
// m:seq, the last value assigned (an 8-byte big-endian integer, as
// ReadModifyWriteRow keeps it). No row key starts with 00 00 (a String or
// Binary column's bytes escape 0x00 as 00 FF and end in 00 01; an Integer
// starts with '-' or '='), so every row key is at least rowFloor (00 01,
// the empty String) and a range read whose lower end is unbounded starts
// there instead (rangeSpan): no read, range or export ever meets a
// counter row. DeleteTable drops them with the table.
//
// A write whose key holds tablekit.AutoIncrement evaluates its SPEC
// condition on an absent row (the row is new), takes its value with one
// ReadModifyWriteRow (increment m:seq by 1: atomic, so concurrent writers
// never get the same value, and each value is above every one handed out
// before), then writes the row with one CheckAndMutateRow whose predicate
// is "the row has any cell": the mutation goes in the false branch, so it
// never lands on a stored row. The predicate holds only if the counter is
// behind a stored row (a row written with an explicit value, or a counter
// row lost): the write then reads the greatest value of the column among
// the rows that share the key's columns before it (one reverse ReadRows
// of one row), takes a value above it (one ReadModifyWriteRow adding the
// difference) and tries again, at most maxAutoAttempts values in all
// (then driver.AutoIncrementTaken, nothing written). A write that fails
// after taking a value leaves a gap, never a duplicate.
//
// A put or update giving the column a real value v raises the counter to
// at least v before it writes (raiseCounter), so later values are above it
// even once that row is deleted (SPEC §14). Once the counter has passed
// MaxInt64 (ReadModifyWriteRow wraps it negative) every AutoIncrement
// write of the partition key is driver.AutoIncrementExhausted.

const (
	counterPrefix = "\x00\x00" // row keys of the counter rows
	rowFloor      = "\x00\x01" // the least row key of a row
	qualSeq       = "seq"      // m:seq, a counter row's last value
)

// counterRow returns the row key of the counter of partition-key value pk.
func counterRow(pk tablekit.Value) string {
	return counterPrefix + string(codec.EncodeKey(tablekit.PrimaryKey{{Value: pk}}))
}

// autoIncrement reports whether w's key holds tablekit.AutoIncrement.
func autoIncrement(w *tablekit.WriteRequest) bool { return w.Key.AutoIncrementIndex() >= 0 }

// anyCell passes one value-stripped cell of a row that has any: the
// predicate of a put if absent.
var anyCell = bigtable.ChainFilters(bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())

// maxAutoAttempts bounds how many values a write with AutoIncrement takes
// when it keeps finding its key taken (see pastTaken).
const maxAutoAttempts = 16

// takeValue adds n to the counter of partition-key value pk and returns
// its new value: the values above the old one up to it are the caller's
// alone.
func (b *Backend) takeValue(ctx context.Context, meta *tablekit.TableMeta, pk tablekit.Value, n int64) (int64, error) {
	tbl := b.table(meta.Name, meta.Incarnation)
	rmw := bigtable.NewReadModifyWrite()
	rmw.Increment(famMeta, qualSeq, n)
	r, err := tbl.ApplyReadModifyWrite(ctx, counterRow(pk), rmw)
	if err != nil {
		return 0, wrap(ctx, err, "auto-increment counter of partition %v", pk)
	}
	for _, it := range r[famMeta] {
		if it.Column == famMeta+":"+qualSeq && len(it.Value) == 8 {
			v := int64(binary.BigEndian.Uint64(it.Value))
			if v >= n {
				b.floors.Saw(counterID(meta, pk), v)
				return v, nil
			}
			// The increment went past MaxInt64 (the counter wraps): the
			// partition key has used every value, and the counter stays
			// negative, so every later write is refused the same way.
			return 0, driver.AutoIncrementExhausted(meta.Name, tablekit.PrimaryKey{{Value: pk}})
		}
	}
	return 0, tablekit.Errorf(tablekit.ErrUnavailable, "auto-increment counter of partition %v: ReadModifyWriteRow returned no 8-byte m:%s of at least %d", pk, qualSeq, n)
}

// counterID names the counter of partition-key value pk of tbl (an
// incarnation's table) in Backend.floors.
func counterID(meta *tablekit.TableMeta, pk tablekit.Value) string {
	return TableID(meta.Name, meta.Incarnation) + "\x00" + counterRow(pk)
}

// raiseCounter makes the counter of w's partition key at least the real
// value w gives the auto-increment column, if it does (SPEC §14: later
// assigned values are greater than it, also once that row is deleted),
// before w is written: one CheckAndMutateRow on the counter row whose
// predicate passes iff its m:seq is at least v (8-byte big-endian, so
// bytes compare as the unsigned values; a wrapped, exhausted counter is
// above every v) and whose false branch replaces m:seq with v. Atomic with
// the ReadModifyWriteRows that take values, so no value at or below v is
// handed out afterwards. A counter known to be there already (floors)
// costs nothing.
func (b *Backend) raiseCounter(ctx context.Context, w *tablekit.WriteRequest) error {
	pk := w.Key[0].Value
	return b.floors.Raise(w, counterID(w.Meta, pk), func(v int64) error {
		var enc [8]byte
		binary.BigEndian.PutUint64(enc[:], uint64(v))
		pred := bigtable.ChainFilters(qualifierFilter(famMeta, qualSeq), bigtable.LatestNFilter(1),
			bigtable.ValueRangeFilter(enc[:], nil))
		set := bigtable.NewMutation()
		set.DeleteCellsInColumn(famMeta, qualSeq)
		set.Set(famMeta, qualSeq, bigtable.ServerTime, enc[:])
		tbl := b.table(w.Meta.Name, w.Meta.Incarnation)
		if err := tbl.Apply(ctx, counterRow(pk), bigtable.NewCondMutation(pred, nil, set)); err != nil {
			return wrap(ctx, err, "raising the auto-increment counter of partition %v to %d", pk, v)
		}
		return nil
	})
}

// raiseCounters is raiseCounter for each write of a batch, before any is
// written: one call per counter, with the greatest value its writes give.
func (b *Backend) raiseCounters(ctx context.Context, reqs []*tablekit.WriteRequest, out []tablekit.WriteResponse) {
	top := map[string]int{} // counter id -> the index of its write with the greatest value
	var order []string
	for i, w := range reqs {
		v, ok := driver.RealAutoIncrement(w)
		if !ok || out[i].Err != nil {
			continue
		}
		id := counterID(w.Meta, w.Key[0].Value)
		j, seen := top[id]
		if !seen {
			order = append(order, id)
		}
		if u, _ := driver.RealAutoIncrement(reqs[j]); !seen || v > u {
			top[id] = i
		}
	}
	_ = driver.Parallel(ctx, len(order), b.cfg.Concurrency, func(ctx context.Context, g int) error {
		if err := b.raiseCounter(ctx, reqs[top[order[g]]]); err != nil {
			for i, w := range reqs { // every write of that counter fails, unwritten
				if _, ok := driver.RealAutoIncrement(w); ok && out[i].Err == nil && counterID(w.Meta, w.Key[0].Value) == order[g] {
					out[i].Err = err
				}
			}
		}
		return nil
	})
}

// pastTaken is what a write does whose assigned key, key, is already a
// row (written with an explicit value, or the counter row was lost): it
// finds m, the greatest value of the auto-increment column among the rows
// that share key's columns before it (one reverse ReadRows of one row),
// and takes a value above both m and key's own (one ReadModifyWriteRow
// adding the difference), so the counter never goes back and the next
// attempt cannot meet those rows.
func (b *Backend) pastTaken(ctx context.Context, tbl *bigtable.Table, meta *tablekit.TableMeta, key tablekit.PrimaryKey, ai int) (int64, error) {
	v, _ := key[ai].Value.Int()
	prefix := string(codec.EncodeKey(key[:ai]))
	m := v
	err := tbl.ReadRows(ctx, bigtable.PrefixRange(prefix), func(r bigtable.Row) bool {
		if k, err := codec.DecodeKey(meta.Key, []byte(r.Key())); err == nil {
			if x, ok := k[ai].Value.Int(); ok {
				m = max(m, x)
			}
		}
		return false
	}, bigtable.ReverseScan(), bigtable.LimitRows(1), bigtable.RowFilter(anyCell))
	if err != nil {
		return 0, wrap(ctx, err, "reading the greatest key under %v", key[:ai])
	}
	return b.takeValue(ctx, meta, key[0].Value, m-v+1)
}

// writeAuto applies a write whose key holds tablekit.AutoIncrement (see
// above), with value v when a batch took it already (else 0).
func (b *Backend) writeAuto(ctx context.Context, w *tablekit.WriteRequest, v int64) (*tablekit.UpdateResult, error) {
	if _, err := rowKeySize(w.Key.WithAutoIncrement(0)); err != nil { // every value encodes to the same length
		return nil, err
	}
	next, res, err := rowmodel.Apply(nil, w)
	if err != nil {
		return nil, err
	}
	tbl := b.table(w.Meta.Name, w.Meta.Incarnation)
	if v == 0 {
		if v, err = b.takeValue(ctx, w.Meta, w.Key[0].Value, 1); err != nil {
			return nil, err
		}
	}
	if res == nil {
		res = &tablekit.UpdateResult{}
	}
	var m *bigtable.Mutation
	if next != nil {
		m = b.rewrite(w, &rowmodel.Row{}, next)
	}
	for attempt := 1; ; attempt++ {
		key := w.Key.WithAutoIncrement(v)
		res.Key = key
		if next == nil {
			return res, nil // an update that leaves nothing: no row to write
		}
		rk, err := rowKey(key)
		if err != nil {
			return nil, err
		}
		var taken bool
		if err := tbl.Apply(ctx, rk, bigtable.NewCondMutation(anyCell, nil, m), bigtable.GetCondMutationResult(&taken)); err != nil {
			return nil, wrap(ctx, err, "writing key %v", key)
		}
		if !taken {
			return res, nil
		}
		if attempt == maxAutoAttempts {
			return nil, driver.AutoIncrementTaken(key, attempt)
		}
		if v, err = b.pastTaken(ctx, tbl, w.Meta, key, w.Key.AutoIncrementIndex()); err != nil {
			return nil, err
		}
	}
}

// batchValues takes the values of a batch's writes whose key holds
// tablekit.AutoIncrement (the indexes auto of reqs): one
// ReadModifyWriteRow (adding n) per table and partition-key value for its
// n writes, which get them in request order. A write whose key is too
// long or whose condition fails on an absent row gets that error in out
// instead (and takes no value), as does every write of a group whose call
// failed. It returns each write's value (0 for the others).
func (b *Backend) batchValues(ctx context.Context, reqs []*tablekit.WriteRequest, auto []int, out []tablekit.WriteResponse) []int64 {
	vals := make([]int64, len(reqs))
	groups := map[string][]int{}
	var order []string
	for _, i := range auto {
		w := reqs[i]
		if _, err := rowKeySize(w.Key.WithAutoIncrement(0)); err != nil {
			out[i].Err = err
			continue
		}
		if _, _, err := rowmodel.Apply(nil, w); err != nil {
			out[i].Err = err
			continue
		}
		id := TableID(w.Meta.Name, w.Meta.Incarnation) + "\x00" + counterRow(w.Key[0].Value)
		if groups[id] == nil {
			order = append(order, id)
		}
		groups[id] = append(groups[id], i)
	}
	_ = driver.Parallel(ctx, len(order), b.cfg.Concurrency, func(ctx context.Context, g int) error {
		idx := groups[order[g]]
		w := reqs[idx[0]]
		n := int64(len(idx))
		last, err := b.takeValue(ctx, w.Meta, w.Key[0].Value, n)
		for k, i := range idx {
			if err != nil {
				out[i].Err = err
			} else {
				vals[i] = last - n + 1 + int64(k)
			}
		}
		return nil
	})
	return vals
}
