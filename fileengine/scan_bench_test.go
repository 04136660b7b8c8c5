package fileengine

// BenchmarkScan100 compares a 100-row range read that copies its rows out
// (GetRange; Table.Rows) with one that lends them (ScanRange; Table.Scan)
// on the benchmark's data set (FILEENGINE_BENCH_ROWS rows, default
// 100,000, of one 1,000-byte Binary cell each):
//
//	go test -run '^$' -bench Scan100 -benchtime 2000x -count 6 ./fileengine/
//
// The engine and client sub-benchmarks report allocations and bytes per
// row; interleaved runs GetRange and ScanRange alternately in one loop
// (see interleave) and reports their ratio, ScanRange/GetRange.

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
	end := tablekit.Key("id", tablekit.InfMax)
	req := func(start int64) *tablekit.GetRangeRequest {
		return &tablekit.GetRangeRequest{Meta: env.meta, Start: benchKey(start), End: end, Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: env.version}
	}
	getRange := func(r *rand.Rand) {
		p, err := env.eng.GetRange(ctx, req(r.Int64N(span)))
		if err != nil || len(p.Rows) != 100 {
			b.Fatal(err)
		}
	}
	var sink int
	scanRange := func(r *rand.Rand) {
		n := 0
		if _, err := env.eng.ScanRange(ctx, req(r.Int64N(span)), func(row tablekit.Row) bool {
			n++
			sink += len(row.Columns)
			return true
		}); err != nil || n != 100 {
			b.Fatal(n, err)
		}
	}
	tab := env.client.Table("t")
	client := func(r *rand.Rand, scan bool) {
		read := tab.Rows
		if scan {
			read = tab.Scan
		}
		n := 0
		for row, err := range read(ctx, benchKey(r.Int64N(span)), end, tablekit.Limit(100)) {
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
	b.Run("engine/GetRange", func(b *testing.B) {
		r := rand.New(rand.NewPCG(12, 13))
		perRow(b, 100, func() {
			for b.Loop() {
				getRange(r)
			}
		})
	})
	b.Run("engine/ScanRange", func(b *testing.B) {
		r := rand.New(rand.NewPCG(12, 13))
		perRow(b, 100, func() {
			for b.Loop() {
				scanRange(r)
			}
		})
	})
	b.Run("client/Rows", func(b *testing.B) {
		r := rand.New(rand.NewPCG(12, 13))
		perRow(b, 100, func() {
			for b.Loop() {
				client(r, false)
			}
		})
	})
	b.Run("client/Scan", func(b *testing.B) {
		r := rand.New(rand.NewPCG(12, 13))
		perRow(b, 100, func() {
			for b.Loop() {
				client(r, true)
			}
		})
	})
	b.Run("interleaved", func(b *testing.B) {
		rg, rs := rand.New(rand.NewPCG(14, 15)), rand.New(rand.NewPCG(14, 15))
		interleaveSides(b, [2]string{"GetRange", "ScanRange"}, func(int) { getRange(rg) }, func(int) { scanRange(rs) })
	})
}
