package fileengine

// BenchmarkBigRows reads ranges of rows of one 1 MiB Binary cell and
// reports, besides Go's figures, the bytes allocated per byte returned
// (alloc-B/returned-B: runtime.MemStats.TotalAlloc over the tablekit.Row.Size
// of the rows the read returned), which should stay near 1:
//
//	go test -run '^$' -bench BigRows -benchtime 20x -count 3 ./fileengine/
//
// The table holds bigRows rows. Reads: client/GetRange
// (tablekit.Table.GetRange without a limit: one 4 MiB page, 4 rows),
// client/Rows and client/Scan (the first 4 rows of tablekit.Table.Rows and
// Scan, then break), engine/GetRange and engine/ScanRange (one page with
// Limit tablekit.MaxPageRows, as the Client asks). Each runs twice:
// page=bytes is the engine as it is (a page stops at about
// tablekit.MaxPageSize bytes), page=rows the engine with that bound lifted
// (pageBytes), as it was before: a page bounded by its row count alone.

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tablekit/tablekit"
)

const (
	bigRowSize = 1 << 20
	bigRows    = 64
)

// openBigRows opens a store in a temporary directory holding table "big"
// of n rows keyed 0.., each one Binary cell "v" of bigRowSize bytes, in
// table files (flushed).
func openBigRows(tb testing.TB, n int) (*Engine, *tablekit.Client, *tablekit.TableMeta) {
	tb.Helper()
	ctx := context.Background()
	eng, err := Open(filepath.Join(tb.TempDir(), "big"), &Options{NoSync: true, CacheSize: 2 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	db := tablekit.NewClient(eng)
	tb.Cleanup(func() { _ = db.Close() })
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "big", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		tb.Fatal(err)
	}
	tab := db.Table("big")
	v := make([]byte, bigRowSize)
	for i := range n {
		for j := range v {
			v[j] = byte(i + j)
		}
		if err := tab.PutRow(ctx, benchKey(int64(i)), []tablekit.Column{{Name: "v", Value: tablekit.Binary(v)}}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := eng.db.Flush(); err != nil {
		tb.Fatal(err)
	}
	m, err := eng.DescribeTable(ctx, "big")
	if err != nil {
		tb.Fatal(err)
	}
	return eng, db, m
}

// allocPerByte runs read n times and returns the bytes allocated per byte
// returned (read returns the bytes of the rows it read).
func allocPerByte(n int, read func() int) (perByte float64, returned int) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		returned += read()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(returned), returned
}

// bigRowReads are BenchmarkBigRows's reads, each returning the bytes of
// the rows it read, and the number of rows it must read.
func bigRowReads(tb testing.TB, eng *Engine, db *tablekit.Client, meta *tablekit.TableMeta) []struct {
	name string
	rows int
	read func() (int, int)
} {
	ctx := context.Background()
	lo, hi := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
	req := func() *tablekit.GetRangeRequest {
		return &tablekit.GetRangeRequest{Meta: meta, Start: lo, End: hi, Limit: tablekit.MaxPageRows, Read: tablekit.ReadSpec{MaxVersions: 1}}
	}
	tab := db.Table("big")
	first4 := func(scan bool) func() (int, int) {
		read := tab.Rows
		if scan {
			read = tab.Scan
		}
		return func() (int, int) {
			n, rows := 0, 0
			for r, err := range read(ctx, lo, hi) {
				if err != nil {
					tb.Fatal(err)
				}
				n += r.Size()
				if rows++; rows == 4 {
					break
				}
			}
			return n, rows
		}
	}
	return []struct {
		name string
		rows int
		read func() (int, int)
	}{
		{"client/GetRange", 4, func() (int, int) {
			res, err := tab.GetRange(ctx, lo, hi)
			if err != nil {
				tb.Fatal(err)
			}
			n := 0
			for _, r := range res.Rows {
				n += r.Size()
			}
			return n, len(res.Rows)
		}},
		{"client/Rows", 4, first4(false)},
		{"client/Scan", 4, first4(true)},
		{"engine/GetRange", -1, func() (int, int) {
			p, err := eng.GetRange(ctx, req())
			if err != nil {
				tb.Fatal(err)
			}
			n := 0
			for _, r := range p.Rows {
				n += r.Size()
			}
			return n, len(p.Rows)
		}},
		{"engine/ScanRange", -1, func() (int, int) {
			n, rows := 0, 0
			if _, err := eng.ScanRange(ctx, req(), func(r tablekit.Row) bool {
				n += r.Size()
				rows++
				return true
			}); err != nil {
				tb.Fatal(err)
			}
			return n, rows
		}},
	}
}

func BenchmarkBigRows(b *testing.B) {
	eng, db, meta := openBigRows(b, bigRows)
	for _, r := range bigRowReads(b, eng, db, meta) {
		for _, side := range []struct {
			name  string
			bytes int
		}{{"page=bytes", maxPageBytes}, {"page=rows", math.MaxInt}} {
			b.Run(fmt.Sprintf("%s/%s", r.name, side.name), func(b *testing.B) {
				pageBytes = side.bytes
				defer func() { pageBytes = maxPageBytes }()
				rows := 0
				perByte, returned := allocPerByte(b.N, func() int {
					n, got := r.read()
					rows += got
					return n
				})
				b.ReportMetric(perByte, "alloc-B/returned-B")
				b.ReportMetric(float64(returned)/float64(b.N), "returned-B/op")
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
		}
	}
}
