package localengine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// TestWriterDuringLongScan: a range read whose filter takes a long time to
// evaluate does not hold writers off for its whole length. A writer loops
// on the same table while the scan runs; writes must complete in the
// middle half of the scan (with one lock held for the whole scan, none
// does), and none may wait for a large part of it.
func TestWriterDuringLongScan(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	rows := 2000
	if testing.Short() {
		rows = 1000
	}
	var batch []tablekit.BatchWrite
	for i := range rows {
		batch = append(batch, tablekit.BatchPut("t", tablekit.Key("k", tablekit.Integer(int64(i))), []tablekit.Column{{Name: "i", Value: tablekit.Integer(int64(i))}}))
		if len(batch) == tablekit.MaxBatchWrite || i == rows-1 {
			if _, err := db.BatchWriteRow(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	// An OR of many comparisons no row passes: every row is evaluated
	// against all of them. Their number is set for a scan of about 300 ms
	// on this machine, in this build (the race detector slows it 100x).
	start, end := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	orOf := func(conds int) tablekit.RangeOption {
		fs := make([]tablekit.Filter, conds)
		for j := range fs {
			fs[j] = tablekit.SingleColumnValue("i", tablekit.Equal, tablekit.Integer(int64(-1-j)))
		}
		return tablekit.WithFilter(tablekit.Or(fs...))
	}
	conds := 100
	for {
		t0 := time.Now()
		if _, err := tbl.GetRange(ctx, start, end, orOf(conds), tablekit.Limit(1)); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d >= 30*time.Millisecond || conds >= 50000 {
			conds = int(min(max(int64(conds)*int64(300*time.Millisecond)/int64(d), 100), 50000))
			break
		}
		conds *= 4
	}
	// One try: the scan, and a writer looping beside it.
	try := func(conds int) (scan time.Duration, middle int, worst time.Duration) {
		var (
			mu   sync.Mutex
			done []time.Time // completion times of the writes
			stop = make(chan struct{})
			wg   sync.WaitGroup
		)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				if err := tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(int64(rows+i%100))), []tablekit.Column{{Name: "i", Value: tablekit.Integer(int64(i))}}); err != nil {
					t.Error(err)
					return
				}
				t1 := time.Now()
				mu.Lock()
				done = append(done, t1)
				worst = max(worst, t1.Sub(t0))
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
			}
		})
		scanStart := time.Now()
		res, err := tbl.GetRange(ctx, start, end, orOf(conds), tablekit.Limit(1))
		scan = time.Since(scanStart)
		close(stop)
		wg.Wait()
		if err != nil || len(res.Rows) != 0 {
			t.Fatalf("GetRange: %d rows, %v; want none", len(res.Rows), err)
		}
		lo, hi := scanStart.Add(scan/4), scanStart.Add(3*scan/4)
		for _, d := range done {
			if d.After(lo) && d.Before(hi) {
				middle++
			}
		}
		t.Logf("scan of %d rows against %d conditions: %v; %d writes, %d in its middle half, slowest %v", rows, conds, scan, len(done), middle, worst)
		return scan, middle, worst
	}
	scan, middle, worst := try(conds)
	for range 3 {
		if scan >= 100*time.Millisecond {
			break
		}
		conds *= 4 // a quicker machine than the calibration said
		scan, middle, worst = try(conds)
	}
	if scan < 100*time.Millisecond {
		t.Fatalf("the scan took %v: too short to tell", scan)
	}
	if middle == 0 {
		t.Errorf("no write completed in the middle half of a %v scan: the scan held writers off", scan)
	}
	if worst > scan/2 {
		t.Errorf("a write waited %v, more than half the %v scan", worst, scan)
	}
}

// TestScanMatchesRows: Scan yields exactly what Rows yields, over ranges
// longer than a lock batch, forward and backward, with limits, page sizes,
// filters, projections and rows that TTL hides.
func TestScanMatchesRows(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t",
		Key:     tablekit.KeySchema{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{TTL: tablekit.MinTTL, MaxVersions: 3}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	r := rand.New(rand.NewPCG(1, 2))
	const n = 1500
	// Every 7th row is written first, a day and more before the others:
	// the TTL hides it.
	for _, old := range []bool{true, false} {
		var batch []tablekit.BatchWrite
		for i := range n {
			if (i%7 == 0) != old {
				continue
			}
			k := tablekit.Key("a", tablekit.String(fmt.Sprintf("k%03d", i/10))).Add("b", tablekit.Integer(int64(i%10)))
			cols := []tablekit.Column{{Name: "x", Value: tablekit.Integer(int64(r.IntN(10)))}, {Name: "y", Value: tablekit.String(fmt.Sprint(i))}}
			batch = append(batch, tablekit.BatchPut("t", k, cols))
			if len(batch) == tablekit.MaxBatchWrite {
				if _, err := db.BatchWriteRow(ctx, batch); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		if _, err := db.BatchWriteRow(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if old {
			clock.Advance(25 * time.Hour)
		}
	}
	lo := tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin)
	hi := tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax)
	for c := range 60 {
		start, end := lo, hi
		var opts []tablekit.RangeOption
		if c%3 == 1 {
			start = tablekit.Key("a", tablekit.String(fmt.Sprintf("k%03d", r.IntN(n/10)))).Add("b", tablekit.Integer(int64(r.IntN(10))))
		}
		if c%2 == 1 {
			start, end = end, start
			if c%3 == 1 {
				end = lo
			}
			opts = append(opts, tablekit.Backward())
		}
		if r.IntN(2) == 0 {
			opts = append(opts, tablekit.Limit(1+r.IntN(700)))
		}
		if r.IntN(2) == 0 {
			opts = append(opts, tablekit.PageSize(1+r.IntN(400)))
		}
		if r.IntN(3) == 0 {
			opts = append(opts, tablekit.WithFilter(tablekit.SingleColumnValue("x", tablekit.Less, tablekit.Integer(int64(r.IntN(10))))))
		}
		if r.IntN(3) == 0 {
			opts = append(opts, tablekit.Columns("y"))
		}
		var want, got []tablekit.Row
		for row, err := range tbl.Rows(ctx, start, end, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, row)
		}
		for row, err := range tbl.Scan(ctx, start, end, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, row.Clone())
		}
		if !slices.EqualFunc(got, want, rowEqual) {
			t.Fatalf("case %d (%v): Scan gave %d rows, Rows %d", c, opts, len(got), len(want))
		}
		if c == 0 && len(got) != n-(n+6)/7 {
			t.Fatalf("whole range: %d rows, want %d", len(got), n-(n+6)/7)
		}
	}
}

func rowEqual(a, b tablekit.Row) bool {
	return a.Key.Equal(b.Key) && slices.Equal(a.Columns, b.Columns)
}

// TestScanLifetime: a Row kept past its iteration is reused for a later
// row, and in a checking build (-race, or the tablekit_scancheck tag) it
// reads as tablekit.ScanPoison, so that a test that keeps one fails.
func TestScanLifetime(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	for i := range 3 {
		if err := tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(int64(i))), []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	var kept []tablekit.Row
	for row, err := range tbl.Scan(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := row.Columns[0].Value.Int(); v != int64(len(kept)) {
			t.Fatalf("row %d during its iteration: %v", len(kept), row)
		}
		kept = append(kept, row) // the misuse
	}
	first := kept[0]
	if scanChecked {
		if first.Columns[0].Name != tablekit.ScanPoison || first.Key[0].Name != tablekit.ScanPoison {
			t.Fatalf("checking build: a kept row reads %v, not poisoned", first)
		}
		// Changing a row in the loop panics.
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "modified") {
				t.Fatalf("checking build: a row modified in the loop gave %v; want a panic", p)
			}
		}()
		for row := range tbl.Scan(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
			row.Key[0].Value = tablekit.Integer(99)
		}
		return
	}
	// A read of whole rows lends the stored cells, which never change: a
	// kept row still reads as it did (the contract allows it, and does
	// not promise it).
	if v, _ := first.Columns[0].Value.Int(); v != 0 || len(first.Columns) != 1 {
		t.Fatalf("a kept row of a whole-row scan reads %v; want the stored row 0", first)
	}
	// A read the engine must copy (a projection) reuses its buffer: a kept
	// row then shows a later row, or nothing once the scan has ended.
	kept = kept[:0]
	for row, err := range tbl.Scan(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax), tablekit.Columns("v")) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, row)
	}
	if len(kept) != 3 {
		t.Fatalf("projected scan: %d rows, want 3", len(kept))
	}
	if v, ok := kept[0].Columns[0].Value.Int(); ok && v == 0 {
		t.Fatalf("a kept row of a projected scan still reads %v: its buffer was not reused", kept[0])
	}
}
