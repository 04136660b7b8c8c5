package gcpbigtable_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// The benchmarks compare the adapter (through tablekit.Client) with the raw
// Bigtable client doing the same work against the same in-process bttest:
// rows of 10 String fields × 100 bytes (YCSB's shape), one String key
// column. Each benchmark times both sides alternately in one loop (see
// pair) and reports tablekit-ns/op, raw-ns/op and the ratio tablekit/raw,
// so the ratio comes from one run on the same noisy machine. Writes cycle over a fixed key set and replace whole rows, the
// adapter with PutRow and the raw client with the same semantics (DeleteRow
// then the cells in one mutation), so the emulator's memory stays flat
// across iterations instead of taxing whichever runs later. Run with:
//
//	go test -run '^$' -bench . -count 6 ./backend/gcpbigtable/

const (
	benchFields  = 10
	benchPreload = 1000
)

var bench struct {
	once sync.Once
	err  error
	srv  *bttest.Server
	b    *gcpbigtable.Backend
	db   *tablekit.Client
	tbl  *tablekit.Table
	raw  *bigtable.Table
}

var benchValue = strings.Repeat("v", 100)

func benchKey(s string) tablekit.PrimaryKey { return tablekit.Key("k", tablekit.String(s)) }

// benchRowKey is the row key keycodec gives benchKey(s) (s has no 0x00).
func benchRowKey(s string) string { return s + "\x00\x01" }

func benchCols() []tablekit.Column {
	cols := make([]tablekit.Column, benchFields)
	for i := range cols {
		cols[i] = tablekit.Column{Name: fmt.Sprintf("field%d", i), Value: tablekit.String(benchValue)}
	}
	return cols
}

func rawMutation(ts bigtable.Timestamp) *bigtable.Mutation {
	m := bigtable.NewMutation()
	m.DeleteRow()
	for i := range benchFields {
		m.Set("c", fmt.Sprintf("field%d", i), ts, []byte("s"+benchValue))
	}
	return m
}

func setupBench(b *testing.B) {
	bench.once.Do(func() {
		ctx := context.Background()
		srv, err := bttest.NewServer("localhost:0")
		if err != nil {
			bench.err = err
			return
		}
		bench.srv = srv
		cfg := gcpbigtable.Config{GC: gcpbigtable.GCOff}
		cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
		bench.b, err = gcpbigtable.Open(ctx, "proj", "inst", cfg, emulatorOptions(srv)...)
		if err != nil {
			bench.err = err
			return
		}
		bench.db = tablekit.NewClient(bench.b)
		if err := bench.db.CreateTable(ctx, tablekit.TableMeta{Name: "usertable", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}}); err != nil {
			bench.err = err
			return
		}
		bench.tbl = bench.db.Table("usertable")
		bench.raw = bench.b.Client().Open(gcpbigtable.TableID("usertable"))
		var ws []tablekit.BatchWrite
		for i := range benchPreload {
			ws = append(ws, tablekit.BatchPut("usertable", benchKey(fmt.Sprintf("user%06d", i)), benchCols()))
			if len(ws) == tablekit.MaxBatchWrite {
				if _, err := bench.db.BatchWriteRow(ctx, ws); err != nil {
					bench.err = err
					return
				}
				ws = ws[:0]
			}
		}
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
}

// pair runs the adapter's and the raw client's version of one operation
// alternately (the order flips every iteration), so both see the same
// machine noise, and reports each side's time per op and their ratio:
// tablekit-ns/op, raw-ns/op and tablekit/raw. The benchmark's own ns/op is
// the time of one of each.
func pair(b *testing.B, tk, raw func(i int) error) {
	var tkd, rawd time.Duration
	i := 0
	for b.Loop() {
		for side := range 2 {
			f, d := tk, &tkd
			if (i+side)%2 == 1 {
				f, d = raw, &rawd
			}
			t0 := time.Now()
			if err := f(i); err != nil {
				b.Fatal(err)
			}
			*d += time.Since(t0)
		}
		i++
	}
	b.ReportMetric(float64(tkd.Nanoseconds())/float64(i), "tablekit-ns/op")
	b.ReportMetric(float64(rawd.Nanoseconds())/float64(i), "raw-ns/op")
	b.ReportMetric(float64(tkd)/float64(rawd), "tablekit/raw")
}

func BenchmarkPointWrite(b *testing.B) {
	setupBench(b)
	ctx := context.Background()
	cols := benchCols()
	pair(b, func(i int) error {
		return bench.tbl.PutRow(ctx, benchKey(fmt.Sprintf("w%05d", i%10000)), cols)
	}, func(i int) error {
		return bench.raw.Apply(ctx, benchRowKey(fmt.Sprintf("w%05d", i%10000)), rawMutation(bigtable.Now().TruncateToMilliseconds()))
	})
}

func BenchmarkPointRead(b *testing.B) {
	setupBench(b)
	ctx := context.Background()
	pair(b, func(i int) error {
		_, found, err := bench.tbl.GetRow(ctx, benchKey(fmt.Sprintf("user%06d", i%benchPreload)))
		if err == nil && !found {
			err = fmt.Errorf("row %d not found", i)
		}
		return err
	}, func(i int) error {
		r, err := bench.raw.ReadRow(ctx, benchRowKey(fmt.Sprintf("user%06d", i%benchPreload)), bigtable.RowFilter(bigtable.LatestNFilter(1)))
		if err == nil && len(r["c"]) != benchFields {
			err = fmt.Errorf("row %d has %d cells", i, len(r["c"]))
		}
		return err
	})
}

func BenchmarkRange100(b *testing.B) {
	setupBench(b)
	ctx := context.Background()
	end := benchKey("userz")
	pair(b, func(i int) error {
		start := benchKey(fmt.Sprintf("user%06d", (i*37)%(benchPreload-100)))
		res, err := bench.tbl.GetRange(ctx, start, end, tablekit.Limit(100))
		if err == nil && len(res.Rows) != 100 {
			err = fmt.Errorf("%d rows", len(res.Rows))
		}
		return err
	}, func(i int) error {
		start := benchRowKey(fmt.Sprintf("user%06d", (i*37)%(benchPreload-100)))
		n := 0
		err := bench.raw.ReadRows(ctx, bigtable.NewRange(start, benchRowKey("userz")), func(r bigtable.Row) bool {
			n++
			return true
		}, bigtable.LimitRows(100), bigtable.RowFilter(bigtable.LatestNFilter(1)))
		if err == nil && n != 100 {
			err = fmt.Errorf("%d rows", n)
		}
		return err
	})
}

// tkBatch1000 replaces 1,000 rows with five BatchWriteRow calls of 200
// (SPEC's batch limit).
func tkBatch1000(ctx context.Context, cols []tablekit.Column, ws []tablekit.BatchWrite) error {
	for part := range 5 {
		for j := range ws {
			ws[j] = tablekit.BatchPut("usertable", benchKey(fmt.Sprintf("b%04d", part*200+j)), cols)
		}
		res, err := bench.db.BatchWriteRow(ctx, ws)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return r.Err
			}
		}
	}
	return nil
}

// rawBatch1000 replaces the same 1,000 rows with the raw client in calls
// ApplyBulk calls.
func rawBatch1000(ctx context.Context, calls int) error {
	per := 1000 / calls
	keys := make([]string, per)
	muts := make([]*bigtable.Mutation, per)
	for part := range calls {
		ts := bigtable.Now().TruncateToMilliseconds()
		for j := range per {
			keys[j] = benchRowKey(fmt.Sprintf("b%04d", part*per+j))
			muts[j] = rawMutation(ts)
		}
		errs, err := bench.raw.ApplyBulk(ctx, keys, muts)
		if err != nil {
			return err
		}
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
	}
	return nil
}

// BenchmarkBatchWrite1000 replaces 1,000 rows per op: the adapter in five
// BatchWriteRow calls of 200, the raw client in one ApplyBulk of 1,000
// (BenchmarkBatchWrite1000/vs1x1000) or in five of 200 (/vs5x200).
func BenchmarkBatchWrite1000(b *testing.B) {
	setupBench(b)
	ctx := context.Background()
	cols := benchCols()
	ws := make([]tablekit.BatchWrite, tablekit.MaxBatchWrite)
	tk := func(int) error { return tkBatch1000(ctx, cols, ws) }
	b.Run("vs1x1000", func(b *testing.B) { pair(b, tk, func(int) error { return rawBatch1000(ctx, 1) }) })
	b.Run("vs5x200", func(b *testing.B) { pair(b, tk, func(int) error { return rawBatch1000(ctx, 5) }) })
}
