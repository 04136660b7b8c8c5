package fileengine

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
)

// TestRangePageBytes: a range page stops at about tablekit.MaxPageSize
// bytes (the row that reaches it included), however many rows it was
// asked for, forward and backward, and its Next resumes exactly after it:
// 16 rows of 1 MiB come in pages of 4.
func TestRangePageBytes(t *testing.T) {
	eng, _, meta := openBigRows(t, 16)
	ctx := context.Background()
	for _, backward := range []bool{false, true} {
		for _, scan := range []bool{false, true} {
			lo, hi := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
			if backward {
				lo, hi = hi, lo
			}
			var got []int64
			pages := 0
			for start := lo; start != nil; pages++ {
				req := &tablekit.GetRangeRequest{Meta: meta, Start: start, End: hi, Backward: backward, Limit: tablekit.MaxPageRows, Read: tablekit.ReadSpec{MaxVersions: 1}}
				var rows []tablekit.Row
				var err error
				if scan {
					start, err = eng.ScanRange(ctx, req, func(r tablekit.Row) bool {
						rows = append(rows, tablekit.Row{Key: slices.Clone(r.Key), Columns: slices.Clone(r.Columns)})
						return true
					})
				} else {
					var p *tablekit.GetRangeResponse
					p, err = eng.GetRange(ctx, req)
					if err == nil {
						rows, start = p.Rows, p.Next
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) > 4 {
					t.Fatalf("backward=%v scan=%v: page %d holds %d rows of 1 MiB, want at most 4 (about %d bytes)", backward, scan, pages, len(rows), tablekit.MaxPageSize)
				}
				for _, r := range rows {
					id, _ := r.Key[0].Value.Int()
					got = append(got, id)
					if v, _ := r.Get("v"); v.Size() != bigRowSize {
						t.Fatalf("backward=%v scan=%v: row %d: %d bytes", backward, scan, id, v.Size())
					}
				}
				if pages > 16 {
					t.Fatal("no end")
				}
			}
			want := make([]int64, 16)
			for i := range want {
				want[i] = int64(i)
				if backward {
					want[i] = int64(15 - i)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("backward=%v scan=%v: rows %v, want %v", backward, scan, got, want)
			}
			if pages != 4 {
				t.Errorf("backward=%v scan=%v: %d pages, want 4", backward, scan, pages)
			}
		}
	}
}

// TestBigRowRangeAllocs: reading 4 rows of 1 MiB (through the Client's
// GetRange, Rows and Scan, and the engine's GetRange and ScanRange asked
// for tablekit.MaxPageRows rows) allocates at most 3 bytes per byte
// returned, on a table of 16 such rows. BenchmarkBigRows has the figures.
func TestBigRowRangeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures differ under the race detector; CI runs -run Allocs without it")
	}
	eng, db, meta := openBigRows(t, 16)
	for _, r := range bigRowReads(t, eng, db, meta) {
		rows := 0
		perByte, _ := allocPerByte(3, func() int {
			n, got := r.read()
			rows += got
			return n
		})
		t.Logf("%s: %.2f bytes allocated per byte returned", r.name, perByte)
		if rows != 3*4 {
			t.Errorf("%s: %d rows in 3 reads, want 4 a read", r.name, rows)
		}
		if perByte > 3 {
			t.Errorf("%s: %.2f bytes allocated per byte returned, want at most 3", r.name, perByte)
		}
	}
}
