// Package rangebench is for tablekit's own benchmarks only: the shared
// benchmark of a filtered range read that
// only the range's last row passes, run side by side with the unfiltered
// read of the same range, so that every backend shows the same figure: a
// filter must not make a range read cost more than reading it whole.
//
// An adapter's benchmark calls [Run] with a Client on its backend and, when
// it can count them, the store calls and the rows the store handed to the
// adapter.
package rangebench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// Rows is how many rows the benchmark's table holds: the shape of the
// read measured in issue 13 (12,000 rows, only the last passing).
const Rows = 12000

// Counters read a backend's running totals; either may be nil when the
// backend cannot count it.
type Counters struct {
	// Calls is the number of range calls made to the store so far
	// (ReadRows streams, Query requests, GetRange requests).
	Calls func() int64
	// Examined is the number of rows the store has handed to the adapter
	// so far: the rows a client-side filter had to look at.
	Examined func() int64
}

// Table creates the benchmark's table (key "k" Integer, column "i" Integer
// equal to the key, column "p" a 100-byte String) on db and fills it with
// n rows in batches. It returns the table.
func Table(ctx context.Context, db *tablekit.Client, name string, n int) (*tablekit.Table, error) {
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}})
	if err != nil {
		return nil, err
	}
	pad := tablekit.String(fmt.Sprintf("%0100d", 0))
	for lo := 0; lo < n; lo += tablekit.MaxBatchWrite {
		var ws []tablekit.BatchWrite
		for i := lo; i < min(lo+tablekit.MaxBatchWrite, n); i++ {
			ws = append(ws, tablekit.BatchPut(name, tablekit.Key("k", tablekit.Integer(int64(i))), []tablekit.Column{
				{Name: "i", Value: tablekit.Integer(int64(i))},
				{Name: "p", Value: pad},
			}))
		}
		res, err := db.BatchWriteRow(ctx, ws)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			if r.Err != nil {
				return nil, r.Err
			}
		}
	}
	return db.Table(name), nil
}

// readAll reads [InfMin, InfMax) page by page and returns the rows read and
// the Client pages it took.
func readAll(ctx context.Context, t *tablekit.Table, opts ...tablekit.RangeOption) (rows, pages int, err error) {
	lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	var tok []byte
	for {
		o := opts
		if tok != nil {
			o = append(o[:len(o):len(o)], tablekit.ResumeFrom(tok))
		}
		res, err := t.GetRange(ctx, lo, hi, o...)
		if err != nil {
			return rows, pages, err
		}
		pages++
		rows += len(res.Rows)
		if res.Next == nil {
			return rows, pages, nil
		}
		tok = res.Next
	}
}

// Filtered reads t (filled by [Table] with n rows) with Limit(1) and the
// filter i == n-1, which only the last row passes, and checks that it
// returns exactly that row.
func Filtered(ctx context.Context, t *tablekit.Table, n int) error {
	lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	res, err := t.GetRange(ctx, lo, hi, tablekit.Limit(1),
		tablekit.WithFilter(tablekit.SingleColumnValue("i", tablekit.Equal, tablekit.Integer(int64(n-1)))))
	if err != nil {
		return err
	}
	if len(res.Rows) != 1 || !res.Rows[0].Key.Equal(tablekit.Key("k", tablekit.Integer(int64(n-1)))) {
		return fmt.Errorf("filtered read returned %d rows (%v), want the row k=%d", len(res.Rows), res.Rows, n-1)
	}
	return nil
}

// Limited reads the first limit rows of t, without a filter, and checks
// that it returns limit rows.
func Limited(ctx context.Context, t *tablekit.Table, limit int) error {
	res, err := t.GetRange(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax), tablekit.Limit(limit))
	if err != nil {
		return err
	}
	if len(res.Rows) != limit {
		return fmt.Errorf("Limit(%d) read returned %d rows", limit, len(res.Rows))
	}
	return nil
}

// Run benchmarks, on t (filled by [Table] with n rows), the unfiltered
// read of the whole range and GetRange(Limit(1), WithFilter(i == n-1)),
// which only the last row passes, alternately in each iteration, and
// reports:
//
//   - unfiltered-ms and filtered-ms: each read's mean time;
//   - filtered/unfiltered: their ratio (the figure: at most 2);
//   - calls/read and examined/row of the filtered read, when c counts
//     them: store calls per GetRange call (the Client makes two backend
//     pages of it: MaxScanRows rows, then the rest) and rows the store
//     handed over per row returned.
func Run(b *testing.B, t *tablekit.Table, n int, c Counters) {
	ctx := context.Background()
	count := func(f func() int64) int64 {
		if f == nil {
			return 0
		}
		return f()
	}
	var unfiltered, filtered time.Duration
	var calls, examined, getRanges int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		rows, _, err := readAll(ctx, t)
		if err != nil {
			b.Fatal(err)
		}
		if rows != n {
			b.Fatalf("unfiltered read returned %d rows, want %d", rows, n)
		}
		unfiltered += time.Since(start)

		c0, e0 := count(c.Calls), count(c.Examined)
		start = time.Now()
		if err := Filtered(ctx, t, n); err != nil {
			b.Fatal(err)
		}
		filtered += time.Since(start)
		calls += count(c.Calls) - c0
		examined += count(c.Examined) - e0
		getRanges++
	}
	b.StopTimer()
	b.ReportMetric(float64(unfiltered)/1e6/float64(b.N), "unfiltered-ms")
	b.ReportMetric(float64(filtered)/1e6/float64(b.N), "filtered-ms")
	if unfiltered > 0 {
		b.ReportMetric(float64(filtered)/float64(unfiltered), "filtered/unfiltered")
	}
	if c.Calls != nil {
		b.ReportMetric(float64(calls)/float64(getRanges), "calls/read")
	}
	if c.Examined != nil {
		b.ReportMetric(float64(examined)/float64(getRanges), "examined/row")
	}
}
