package tablekit

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/tablekit/tablekit/internal/base"
)

// VersionAt returns the version of t: milliseconds since the Unix epoch,
// the unit of [Column.Version], [PutAt], [DeleteVersion] and [Versions].
func VersionAt(t time.Time) int64 { return t.UnixMilli() }

// VersionTime returns the time of version v (milliseconds since the Unix epoch).
func VersionTime(v int64) time.Time { return time.UnixMilli(v) }

// PrefixRange returns the bounds of every row whose first len(prefix) key
// columns equal prefix, for [Table.GetRange] and [Table.Rows]: start is
// prefix followed by InfMin and end is prefix followed by InfMax in each
// remaining key column. prefix must name the table's first key columns in
// order, with values of their types (1 to all of them); otherwise the
// error is ErrInvalidPrimaryKey naming the column. For a backward range,
// pass end as start and start as end.
func (t *Table) PrefixRange(ctx context.Context, prefix PrimaryKey) (start, end PrimaryKey, err error) {
	m, err := t.c.tableMeta(ctx, t.name)
	if err != nil {
		return nil, nil, annotate(err, "PrefixRange", t.name)
	}
	if len(prefix) < 1 || len(prefix) > len(m.Key) {
		return nil, nil, annotate(Errorf(ErrInvalidPrimaryKey, "key prefix %v has %d columns; the schema has %d", prefix, len(prefix), len(m.Key)), "PrefixRange", t.name)
	}
	start = make(PrimaryKey, len(m.Key))
	end = make(PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		if i >= len(prefix) {
			start[i], end[i] = KeyPart{Name: kc.Name, Value: InfMin}, KeyPart{Name: kc.Name, Value: InfMax}
			continue
		}
		p := prefix[i]
		if p.Name != kc.Name {
			return nil, nil, annotate(Errorf(ErrInvalidPrimaryKey, "key prefix column %d is named %q, the schema says %q", i+1, p.Name, kc.Name), "PrefixRange", t.name)
		}
		if verr := checkKeyValue(kc, p.Value, false); verr != nil {
			return nil, nil, annotate(verr, "PrefixRange", t.name)
		}
		start[i], end[i] = p, p
	}
	return start, end, nil
}

// PrefixRows streams every row whose first len(prefix) key columns equal
// prefix (see [Table.PrefixRange]), with the options of [Table.Rows];
// with [Backward] it walks them down.
func (t *Table) PrefixRows(ctx context.Context, prefix PrimaryKey, opts ...RangeOption) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		start, end, err := t.PrefixRange(ctx, prefix)
		if err != nil {
			yield(Row{}, err)
			return
		}
		var o readOptions
		for _, opt := range opts {
			if opt != nil {
				opt.applyRange(&o)
			}
		}
		if o.backward {
			start, end = end, start
		}
		for r, err := range t.Rows(ctx, start, end, opts...) {
			if !yield(r, err) {
				return
			}
		}
	}
}

// batchChunks is how many BatchWriteRow or BatchGetRow calls WriteAll and
// GetAll make at once.
const batchChunks = 4

// WriteAll applies any number of writes: it splits them into batches of
// at most MaxBatchWrite, runs up to four batches at a time, and returns
// one result per write, in order, and the errors of the writes that failed
// joined into one (nil when every write succeeded). Writes to the same row
// are applied in the order given: when a row appears more than once, the
// batches run one after another. Like [Client.BatchWriteRow], it is not
// atomic across rows; a write whose batch failed as a whole gets that
// batch's error.
func (c *Client) WriteAll(ctx context.Context, writes []BatchWrite) ([]BatchWriteResult, error) {
	out := make([]BatchWriteResult, len(writes))
	if len(writes) == 0 {
		return out, nil
	}
	parallel := batchChunks
	seen := make(map[string]struct{}, len(writes))
	for _, w := range writes {
		id := string(encodeToken(token{table: w.Table, key: w.Key}))
		if _, dup := seen[id]; dup {
			parallel = 1
			break
		}
		seen[id] = struct{}{}
	}
	n := (len(writes) + MaxBatchWrite - 1) / MaxBatchWrite
	ran := make([]bool, n)
	err := base.Parallel(ctx, n, parallel, func(ctx context.Context, k int) error {
		lo, hi := k*MaxBatchWrite, min(len(writes), (k+1)*MaxBatchWrite)
		ran[k] = true
		res, err := c.BatchWriteRow(ctx, writes[lo:hi])
		if err != nil {
			for i := lo; i < hi; i++ {
				out[i].Err = err
			}
			if isContextErr(err) || errors.Is(err, ErrClosed) {
				return err // stop starting batches
			}
			return nil
		}
		copy(out[lo:hi], res)
		return nil
	})
	if err == nil {
		err = ctx.Err()
	}
	var errs []error
	for i := range out {
		if !ran[i/MaxBatchWrite] { // never started: the context ended or the client closed
			out[i].Err = err
			if err == nil {
				out[i].Err = Errorf(ErrUnavailable, "write %d was not attempted", i)
			}
		}
		if out[i].Err != nil {
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}
