package fileengine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/fileengine"
)

// scanTable makes table "t" (key a String, b Integer; TTL one day, three
// versions) on a new engine and writes n rows: cells x (Integer), y
// (String) and z (Binary, on even rows), two versions of x on every third
// row, and every 7th row written a day before the others, which the TTL
// hides. It returns the engine, a client over it and the table's meta.
func scanTable(t *testing.T, n int) (*fileengine.Engine, *tablekit.Client, *tablekit.ManualClock, *tablekit.TableMeta) {
	t.Helper()
	return scanTableOpts(t, n, &fileengine.Options{NoSync: true})
}

func scanTableOpts(t *testing.T, n int, opts *fileengine.Options) (*fileengine.Engine, *tablekit.Client, *tablekit.ManualClock, *tablekit.TableMeta) {
	t.Helper()
	e, err := fileengine.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db := tablekit.NewClient(e, tablekit.WithClock(clock))
	t.Cleanup(func() {
		// Close, unless a test's deadlock holds it up: the test fails then,
		// and the process goes on.
		closed := make(chan struct{})
		go func() { db.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Error("Close did not return in 30 s")
		}
	})
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t",
		Key:     tablekit.KeySchema{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{TTL: tablekit.MinTTL, MaxVersions: 3}}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, old := range []bool{true, false} {
		var batch []tablekit.BatchWrite
		for i := range n {
			if (i%7 == 0) != old {
				continue
			}
			cols := []tablekit.Column{{Name: "x", Value: tablekit.Integer(int64(r.IntN(10)))}, {Name: "y", Value: tablekit.String(fmt.Sprint("y", i))}}
			if i%2 == 0 {
				cols = append(cols, tablekit.Column{Name: "z", Value: tablekit.Binary([]byte{byte(i), 0, byte(i >> 8)})})
			}
			batch = append(batch, tablekit.BatchPut("t", scanKey(i), cols))
			if i%3 == 0 {
				batch = append(batch, tablekit.BatchUpdate("t", scanKey(i), []tablekit.Change{tablekit.Put("x", tablekit.Integer(int64(-i)))}))
			}
			if len(batch) >= tablekit.MaxBatchWrite-1 {
				writeAll(t, db, batch)
				batch = batch[:0]
			}
		}
		writeAll(t, db, batch)
		if old {
			clock.Advance(25 * time.Hour)
		}
	}
	m, err := e.DescribeTable(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	return e, db, clock, m
}

// scanKey is row i's key: ten rows per String value, the "\x00" in it
// escaped by the key encoding.
func scanKey(i int) tablekit.PrimaryKey {
	return tablekit.Key("a", tablekit.String(fmt.Sprintf("k\x00%03d", i/10))).Add("b", tablekit.Integer(int64(i%10-5)))
}

func writeAll(t *testing.T, db *tablekit.Client, batch []tablekit.BatchWrite) {
	t.Helper()
	if _, err := db.WriteAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
}

// scanAll calls ScanRange and returns copies of the rows it handed out.
func scanAll(e *fileengine.Engine, req *tablekit.GetRangeRequest) ([]tablekit.Row, tablekit.PrimaryKey, error) {
	var rows []tablekit.Row
	next, err := e.ScanRange(ctx, req, func(r tablekit.Row) bool {
		rows = append(rows, r.Clone())
		return true
	})
	return rows, next, err
}

func rowsEqual(a, b []tablekit.Row) bool {
	return slices.EqualFunc(a, b, func(x, y tablekit.Row) bool { return x.Key.Equal(y.Key) && slices.Equal(x.Columns, y.Columns) })
}

// TestScanRangeMatchesGetRange: ScanRange hands out the rows GetRange
// returns, in order, and the same Next, for random requests: both
// directions, exact and infinite bounds, limits, filters, projections,
// versions and time ranges, over rows the TTL hides.
func TestScanRangeMatchesGetRange(t *testing.T) {
	const n = 600
	e, _, clock, m := scanTable(t, n)
	now := clock.Now().UnixMilli()
	r := rand.New(rand.NewPCG(3, 4))
	bound := func() tablekit.PrimaryKey {
		switch r.IntN(6) {
		case 0:
			return tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin)
		case 1:
			return tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax)
		case 2:
			k := scanKey(r.IntN(n))
			return tablekit.Key("a", k[0].Value).Add("b", []tablekit.Value{tablekit.InfMin, tablekit.InfMax}[r.IntN(2)])
		default:
			return scanKey(r.IntN(n))
		}
	}
	nonEmpty, withNext := 0, 0
	for c := range 300 {
		req := &tablekit.GetRangeRequest{Meta: m, Start: bound(), End: bound(), Backward: c%2 == 1,
			Limit: 1 + r.IntN(120), Read: tablekit.ReadSpec{MaxVersions: 1 + r.IntN(3)}, Now: now}
		if r.IntN(3) == 0 {
			req.Read.Filter = tablekit.SingleColumnValue("x", tablekit.Less, tablekit.Integer(int64(r.IntN(10))))
		}
		if r.IntN(3) == 0 {
			req.Read.Columns = []string{"y", "z"}[:1+r.IntN(2)]
		}
		if r.IntN(5) == 0 {
			req.Read.TimeRange = &tablekit.TimeRange{Start: now - 2*86400_000, End: now}
		}
		page, err := e.GetRange(ctx, req)
		if err != nil {
			t.Fatalf("case %d: GetRange: %v", c, err)
		}
		rows, next, err := scanAll(e, req)
		if err != nil {
			t.Fatalf("case %d: ScanRange: %v", c, err)
		}
		if !rowsEqual(rows, page.Rows) || !next.Equal(page.Next) {
			t.Fatalf("case %d (%v → %v backward=%v limit %d %+v): ScanRange gave %d rows and Next %v; GetRange %d rows and Next %v",
				c, req.Start, req.End, req.Backward, req.Limit, req.Read, len(rows), next, len(page.Rows), page.Next)
		}
		if len(rows) > 0 {
			nonEmpty++
		}
		if page.Next != nil {
			withNext++
		}
	}
	if nonEmpty < 100 || withNext < 50 {
		t.Fatalf("only %d of the cases read rows and %d had a Next: the cases test little", nonEmpty, withNext)
	}
	// The whole table forward in one page: every row but the hidden ones.
	all := &tablekit.GetRangeRequest{Meta: m, Start: tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin),
		End: tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax), Limit: n, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now}
	rows, next, err := scanAll(e, all)
	if err != nil || next != nil || len(rows) != n-(n+6)/7 {
		t.Fatalf("whole table: %d rows, Next %v, %v; want %d rows", len(rows), next, err, n-(n+6)/7)
	}
	// fn returning false ends the read at once, with no Next.
	calls := 0
	next, err = e.ScanRange(ctx, all, func(tablekit.Row) bool { calls++; return calls < 5 })
	if err != nil || next != nil || calls != 5 {
		t.Fatalf("stopped after 5 rows: %d calls, Next %v, %v", calls, next, err)
	}
}

// TestScanRangeMaxScan: a page whose rows all fail the filter stops after
// MaxScanRows rows with Next set, as GetRange does.
func TestScanRangeMaxScan(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,050 rows")
	}
	n := tablekit.MaxScanRows + 50
	e, _, clock, m := scanTable(t, n)
	req := &tablekit.GetRangeRequest{Meta: m, Start: tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin),
		End: tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax), Limit: 100,
		Read: tablekit.ReadSpec{MaxVersions: 1, Filter: tablekit.SingleColumnValue("y", tablekit.Equal, tablekit.String("none"))}, Now: clock.Now().UnixMilli()}
	page, err := e.GetRange(ctx, req)
	if err != nil || len(page.Rows) != 0 || page.Next == nil {
		t.Fatalf("GetRange: %d rows, Next %v, %v; want none and a Next", len(page.Rows), page.Next, err)
	}
	rows, next, err := scanAll(e, req)
	if err != nil || len(rows) != 0 || !next.Equal(page.Next) {
		t.Fatalf("ScanRange: %d rows, Next %v, %v; want none and Next %v", len(rows), next, err, page.Next)
	}
}

// TestScanRangeErrors: ScanRange fails as GetRange does, and calls fn for
// no row: a table that does not exist, a request from a table since
// created again (stale), a cancelled context, a closed engine.
func TestScanRangeErrors(t *testing.T) {
	e, db, clock, m := scanTable(t, 30)
	req := func(m *tablekit.TableMeta) *tablekit.GetRangeRequest {
		return &tablekit.GetRangeRequest{Meta: m, Start: tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin),
			End: tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax), Limit: 10, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: clock.Now().UnixMilli()}
	}
	check := func(what string, ctx context.Context, q *tablekit.GetRangeRequest, want error) {
		t.Helper()
		_, gerr := e.GetRange(ctx, q)
		calls := 0
		next, serr := e.ScanRange(ctx, q, func(tablekit.Row) bool { calls++; return true })
		if !errors.Is(gerr, want) || !errors.Is(serr, want) || calls != 0 || next != nil {
			t.Errorf("%s: GetRange %v; ScanRange %v after %d rows, Next %v; want %v", what, gerr, serr, calls, next, want)
		}
		var te *tablekit.Error
		if want != context.Canceled && (!errors.As(serr, &te) || !strings.Contains(serr.Error(), q.Meta.Name)) {
			t.Errorf("%s: ScanRange's error %v is not a *tablekit.Error naming table %q", what, serr, q.Meta.Name)
		}
	}
	gone := *m
	gone.Name = "gone"
	check("missing table", ctx, req(&gone), tablekit.ErrTableNotFound)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	check("cancelled", cctx, req(m), context.Canceled)
	if err := db.DeleteTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: m.Key}); err != nil {
		t.Fatal(err)
	}
	check("stale meta", ctx, req(m), driver.ErrStaleMeta)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed engine", ctx, req(m), tablekit.ErrUnavailable)
}

// TestScanLifetime: through tablekit.Table.Scan, a Row kept past its
// iteration is reused for a later row (or, in a checking build, reads as
// tablekit.ScanPoison), while the strings it held stay what they were,
// after pebble's memory that held the rows (its memtable, its block cache,
// kept small here) was released and reused for other rows.
func TestScanLifetime(t *testing.T) {
	_, db, _, _ := scanTableOpts(t, 40, &fileengine.Options{NoSync: true, CacheSize: 64 << 10})
	var pdb *pebble.DB
	if !db.As(&pdb) {
		t.Fatal("As(**pebble.DB)")
	}
	settle := func() {
		t.Helper()
		if err := pdb.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := pdb.Compact(ctx, []byte{0}, []byte{0xff}, false); err != nil {
			t.Fatal(err)
		}
	}
	strs := func(rows []tablekit.Row) []string {
		var out []string
		for _, r := range rows {
			for _, p := range r.Key {
				out = append(out, p.Name, p.Value.GoString())
			}
			for _, c := range r.Columns {
				out = append(out, c.Name, c.Value.GoString())
			}
		}
		return out
	}
	tbl := db.Table("t")
	lo, hi := tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin), tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax)
	check := func(when string) {
		t.Helper()
		var kept, want []tablekit.Row
		var keptStrs []string // the strings of each row, kept as strings
		for row, err := range tbl.Scan(ctx, lo, hi, tablekit.PageSize(7)) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, row.Clone())
			kept = append(kept, row) // the misuse
			for _, p := range row.Key {
				if s, ok := p.Value.Str(); ok {
					keptStrs = append(keptStrs, s)
				}
			}
			for _, c := range row.Columns {
				keptStrs = append(keptStrs, c.Name)
				if s, ok := c.Value.Str(); ok {
					keptStrs = append(keptStrs, s)
				} else if s, ok := c.Value.BytesString(); ok {
					keptStrs = append(keptStrs, s)
				}
			}
		}
		if len(want) != 40-(40+6)/7 {
			t.Fatalf("%s: %d rows", when, len(want))
		}
		if scanChecked {
			if kept[0].Columns[0].Name != tablekit.ScanPoison || kept[0].Key[0].Name != tablekit.ScanPoison {
				t.Errorf("%s: checking build: a kept row reads %v, not poisoned", when, kept[0])
			}
		} else if rowsEqual(kept, want) {
			t.Errorf("%s: kept rows all still read as they did: the engine reused nothing", when)
		}
		wantStrs := slices.Clone(keptStrs)
		for i := range wantStrs {
			wantStrs[i] = strings.Clone(wantStrs[i])
		}
		before := strs(want)
		// Overwrite every row and write another table's worth of rows,
		// settle the store and read it all through the small cache.
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "churn" + when, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
			t.Fatal(err)
		}
		var batch []tablekit.BatchWrite
		for i := range 3000 {
			batch = append(batch, tablekit.BatchPut("churn"+when, intKey(i), []tablekit.Column{{Name: "y", Value: tablekit.String(strings.Repeat("#", 40))}}))
		}
		for i := range 40 {
			batch = append(batch, tablekit.BatchPut("t", scanKey(i), []tablekit.Column{{Name: "y", Value: tablekit.String(strings.Repeat("%", 9))}, {Name: "z", Value: tablekit.Binary([]byte("%%%"))}}))
		}
		writeAll(t, db, batch)
		settle()
		for range 3 {
			for _, err := range db.Table("churn"+when).Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
				if err != nil {
					t.Fatal(err)
				}
			}
			for range tbl.Scan(ctx, lo, hi) {
			}
		}
		if !slices.Equal(keptStrs, wantStrs) || !slices.Equal(strs(want), before) {
			t.Errorf("%s: strings kept from scanned rows changed:\n%q\nwant\n%q", when, keptStrs, wantStrs)
		}
	}
	check("memtable")
	// The rows again, now read from table files through the block cache.
	_, db2, _, _ := scanTableOpts(t, 40, &fileengine.Options{NoSync: true, CacheSize: 64 << 10})
	db, tbl = db2, db2.Table("t")
	if !db.As(&pdb) {
		t.Fatal("As(**pebble.DB)")
	}
	settle()
	check("tables")
}

// TestScanRangeAllocs: a row costs ScanRange no allocation of its own: a
// 200-row page allocates what a 10-row page does, plus the chunks its
// strings are copied into (a few bytes a row here).
func TestScanRangeAllocs(t *testing.T) {
	if scanChecked {
		t.Skip("the race detector's sync.Pool drops what it holds at random")
	}
	e, _, clock, m := scanTable(t, 400)
	req := &tablekit.GetRangeRequest{Meta: m, Start: tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin),
		End: tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: clock.Now().UnixMilli()}
	allocs := func(limit int) float64 {
		req.Limit = limit
		return testing.AllocsPerRun(50, func() {
			n := 0
			if _, err := e.ScanRange(ctx, req, func(tablekit.Row) bool { n++; return true }); err != nil || n != limit {
				t.Fatal(n, err)
			}
		})
	}
	small, large := allocs(10), allocs(200)
	t.Logf("ScanRange allocations: %.1f for 10 rows, %.1f for 200", small, large)
	if perRow := (large - small) / 190; perRow > 0.05 {
		t.Errorf("ScanRange: %.1f allocations for 10 rows, %.1f for 200: %.3f a row, want none", small, large, perRow)
	}
	pageAllocs := func(limit int) float64 {
		req.Limit = limit
		return testing.AllocsPerRun(50, func() {
			if _, err := e.GetRange(ctx, req); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("GetRange allocations: %.1f for 10 rows, %.1f for 200", pageAllocs(10), pageAllocs(200))
}

// TestScanBodyUsesEngine: the body of a Scan loop may write to the engine,
// and the engine may be closed meanwhile: ScanRange holds no lock while
// the body runs, so neither waits for the other (a Close waiting for the
// scan would otherwise hold up the body's write, which holds up the
// scan). After Close, the writes and the scan fail with ErrUnavailable.
func TestScanBodyUsesEngine(t *testing.T) {
	e, db, _, _ := scanTable(t, 60)
	tbl := db.Table("t")
	lo, hi := tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin), tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax)
	done := make(chan error, 1)
	closed := make(chan error, 1)
	go func() {
		n, wrote := 0, 0
		var last error
		for row, err := range tbl.Scan(ctx, lo, hi, tablekit.PageSize(10)) {
			if err != nil {
				last = err
				break
			}
			n++
			if n == 5 {
				go func() { closed <- e.Close() }()
				time.Sleep(50 * time.Millisecond) // Close is waiting, or done
			}
			if err := tbl.PutRow(ctx, row.Key, []tablekit.Column{{Name: "seen", Value: tablekit.Boolean(true)}}); err == nil {
				wrote++
			} else if !errors.Is(err, tablekit.ErrUnavailable) {
				last = err
				break
			}
		}
		if wrote < 4 || !errors.Is(last, tablekit.ErrUnavailable) {
			last = fmt.Errorf("%d rows, %d written, then %v; want the first 4 written and ErrUnavailable after Close", n, wrote, last)
		} else {
			last = nil
		}
		done <- last
	}()
	for _, c := range []chan error{closed, done} {
		select {
		case err := <-c:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("deadlock: a Scan whose body writes, and Close, wait for each other")
		}
	}
}
