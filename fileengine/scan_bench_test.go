package fileengine

// BenchmarkScan100 compares a 100-row range read that copies its rows out
// (GetRange; Table.Rows) with one that lends them (ScanRange; Table.Scan)
// on the benchmark's data set (FILEENGINE_BENCH_ROWS rows, default
// 100,000, of one 1,000-byte Binary cell each):
//
//	go test -run '^$' -bench Scan100 -benchtime 2000x -count 6 ./fileengine/
//
// The engine and client sub-benchmarks report allocations and bytes per
// row; interleaved/engine runs GetRange and ScanRange alternately in one
// loop (see interleave) and reports their ratio, ScanRange/GetRange, and
// interleaved/client does the same for Table.Rows and Table.Scan: over the
// whole data set (all: mostly pebble reading blocks that its cache does
// not hold) and over its first 10,000 rows (hot: in the cache, so the
// engine's own CPU work).

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tablekit/tablekit"
)

// perRow reports the allocations and bytes per row of b's loop, which
// reads rows rows per iteration.
func perRow(b *testing.B, rows int, loop func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	loop()
	runtime.ReadMemStats(&after)
	n := float64(b.N * rows)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/row")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/row")
}

func BenchmarkScan100(b *testing.B) {
	env := setupBench(b)
	ctx := context.Background()
	span := int64(env.rows - 100)
	// hot is where the hot/ sub-benchmarks start their ranges: 10,000
	// rows (10 MB), which pebble's 64 MiB block cache holds, so that they
	// measure the engine's CPU work rather than pebble's reads.
	hot := min(span, 10_000)
	end := tablekit.Key("id", tablekit.InfMax)
	req := func(start int64) *tablekit.GetRangeRequest {
		return &tablekit.GetRangeRequest{Meta: env.meta, Start: benchKey(start), End: end, Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: env.version}
	}
	getRange := func(start int64) {
		p, err := env.eng.GetRange(ctx, req(start))
		if err != nil || len(p.Rows) != 100 {
			b.Fatal(err)
		}
	}
	var sink int
	scanRange := func(start int64) {
		n := 0
		if _, err := env.eng.ScanRange(ctx, req(start), func(row tablekit.Row) bool {
			n++
			sink += len(row.Columns)
			return true
		}); err != nil || n != 100 {
			b.Fatal(n, err)
		}
	}
	tab := env.client.Table("t")
	client := func(start int64, scan bool) {
		read := tab.Rows
		if scan {
			read = tab.Scan
		}
		n := 0
		for row, err := range read(ctx, benchKey(start), end, tablekit.Limit(100)) {
			if err != nil {
				b.Fatal(err)
			}
			sink += len(row.Columns)
			n++
		}
		if n != 100 {
			b.Fatal(n)
		}
	}
	loop := func(b *testing.B, op func(start int64)) {
		r := rand.New(rand.NewPCG(12, 13))
		perRow(b, 100, func() {
			for b.Loop() {
				op(r.Int64N(span))
			}
		})
	}
	b.Run("engine/GetRange", func(b *testing.B) { loop(b, getRange) })
	b.Run("engine/ScanRange", func(b *testing.B) { loop(b, scanRange) })
	b.Run("client/Rows", func(b *testing.B) { loop(b, func(s int64) { client(s, false) }) })
	b.Run("client/Scan", func(b *testing.B) { loop(b, func(s int64) { client(s, true) }) })
	for _, c := range []struct {
		name string
		of   int64
	}{{"all", span}, {"hot", hot}} {
		b.Run("interleaved/engine/"+c.name, func(b *testing.B) {
			rg, rs := rand.New(rand.NewPCG(14, 15)), rand.New(rand.NewPCG(14, 15))
			interleaveSides(b, [2]string{"GetRange", "ScanRange"}, func(int) { getRange(rg.Int64N(c.of)) }, func(int) { scanRange(rs.Int64N(c.of)) })
		})
		b.Run("interleaved/client/"+c.name, func(b *testing.B) {
			rr, rs := rand.New(rand.NewPCG(16, 17)), rand.New(rand.NewPCG(16, 17))
			interleaveSides(b, [2]string{"Rows", "Scan"}, func(int) { client(rr.Int64N(c.of), false) }, func(int) { client(rs.Int64N(c.of), true) })
		})
	}
}
