package tablekit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// ixOp is one operation of the index consistency history: a write of row's
// indexed value, or an index read that returned row with value v.
type ixOp struct {
	row   int
	write bool
	v     string
}

// ixModel is one register per row (partitioned): a read of the index must
// return the value the row had at one instant of the read.
func ixModel(rows int) porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			by := make([][]porcupine.Operation, rows)
			for _, op := range h {
				r := op.Input.(ixOp).row
				by[r] = append(by[r], op)
			}
			return by
		},
		Init: func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			in := input.(ixOp)
			if in.write {
				return true, in.v
			}
			return output.(string) == state.(string), state
		},
		Equal: func(a, b any) bool { return a == b },
	}
}

func ixBackends(t *testing.T) map[string]func() tablekit.Backend {
	return map[string]func() tablekit.Backend{
		"local": func() tablekit.Backend { return localengine.New() },
		"file": func() tablekit.Backend {
			e, err := fileengine.Open(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
}

// TestIndexConsistency: 16 writers move 8 rows around an index while
// readers scan it; every row a scan returns held that value at one instant
// of the scan, and an acknowledged write shows in every later scan
// (porcupine, one register per row); a row whose value was stable during a
// whole scan is never missing from it. Then the index is exact.
//
// The sweep variants keep one version, so reads remove the stale entries
// they meet (index_read.go), on a manual clock that jumps past the grace
// period while no write is in flight (the grace's premise: no write takes
// longer than half of it): readers sweep while writers put entries again,
// and at the end no entry is missing and none is extra. "ordered" is the
// local engine without its optional interfaces: entries, then the row, in
// two calls, and rows verified one by one.
func TestIndexConsistency(t *testing.T) {
	for name, mk := range ixBackends(t) {
		t.Run(name, func(t *testing.T) { testIndexConsistency(t, mk(), false) })
		t.Run(name+"/sweep", func(t *testing.T) { testIndexConsistency(t, mk(), true) })
	}
	t.Run("ordered/sweep", func(t *testing.T) {
		testIndexConsistency(t, struct{ tablekit.Backend }{localengine.New()}, true)
	})
}

func testIndexConsistency(t *testing.T, b tablekit.Backend, sweep bool) {
	ctx := context.Background()
	var opts []tablekit.ClientOption
	versions := 3
	clock := tablekit.NewManualClock(time.Now())
	var gate sync.RWMutex // writes hold it shared; the clock jumps holding it alone
	if sweep {
		versions = 1
		opts = append(opts, tablekit.WithClock(clock), tablekit.WithIndexGrace(time.Minute))
	}
	db := tablekit.NewClient(b, opts...)
	defer db.Close()
	spec := tablekit.IndexSpec{Name: "by_v", Columns: []tablekit.KeyColumn{{Name: "v", Type: tablekit.TypeString}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: versions}, Indexes: []tablekit.IndexSpec{spec}}); err != nil {
		t.Fatal(err)
	}
	jump := func() {
		gate.Lock()
		clock.Advance(2 * time.Minute)
		gate.Unlock()
	}
	const rows, writers, readers = 8, 16, 4
	writes := 30
	if testing.Short() {
		writes = 10
	}
	tbl := db.Table("t")
	ix := tbl.Index("by_v")
	var seq atomic.Int64
	var written atomic.Int64 // writes returned
	var mu sync.Mutex
	var history []porcupine.Operation
	var scans []ixScan
	record := func(op porcupine.Operation) {
		mu.Lock()
		history = append(history, op)
		mu.Unlock()
	}
	lo := tablekit.Key("v", tablekit.InfMin).Add("id", tablekit.InfMin)
	hi := tablekit.Key("v", tablekit.InfMax).Add("id", tablekit.InfMax)
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range writes {
				row := rng.IntN(rows)
				v := fmt.Sprintf("%c-%02d-%03d", 'a'+rng.IntN(5), w, i)
				if sweep {
					v = fmt.Sprintf("%c", 'a'+rng.IntN(3)) // values recur: writers put old entries again while readers sweep them
				}
				key := tablekit.Key("id", tablekit.Integer(int64(row)))
				gate.RLock()
				call := seq.Add(1)
				var err error
				if i%3 == 0 {
					err = tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.String(v)}})
				} else {
					_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("v", tablekit.String(v))})
				}
				ret := seq.Add(1)
				gate.RUnlock()
				if err != nil {
					t.Error(err)
					return
				}
				record(porcupine.Operation{ClientId: w, Input: ixOp{row: row, write: true, v: v}, Call: call, Return: ret})
				written.Add(1)
				if sweep && i%4 == 3 {
					jump()
				}
			}
		})
	}
	// Readers go on until one scan started after the last write returned:
	// every written row is stable during it, so checkNeverMissing always
	// has pairs to check, however fast the writers were.
	var writesEnd atomic.Int64 // seq once every write has returned; 0 before
	// A reader scans again only once a write has returned since its last
	// scan: a scan of the same state adds nothing to check, and on a slow
	// (loaded, -race) machine readers spinning between writes made the
	// history so long that porcupine ran out of time (Unknown).
	waitWrite := func(last int64) {
		for !stop.Load() && writesEnd.Load() == 0 && written.Load() == last {
			time.Sleep(20 * time.Microsecond)
		}
	}
	quiet := make(chan struct{})
	var quietOnce sync.Once
	var rg sync.WaitGroup
	for r := range readers {
		rg.Go(func() {
			for !stop.Load() {
				last := written.Load()
				call := seq.Add(1)
				end := writesEnd.Load()
				after := end != 0 && call > end
				var got []tablekit.Row
				for row, err := range ix.Rows(ctx, lo, hi) {
					if err != nil {
						t.Error(err)
						return
					}
					got = append(got, row)
				}
				ret := seq.Add(1)
				sc := ixScan{call: call, ret: ret, got: map[int]bool{}}
				for _, row := range got {
					id, _ := row.Key[1].Value.Int()
					sc.got[int(id)] = true
				}
				mu.Lock()
				scans = append(scans, sc)
				mu.Unlock()
				for _, row := range got {
					id, _ := row.Key[1].Value.Int()
					v, _ := row.Key[0].Value.Str()
					record(porcupine.Operation{ClientId: writers + r, Input: ixOp{row: int(id)}, Call: call, Output: v, Return: ret})
				}
				if after { // recorded: the writers' side may stop the readers
					quietOnce.Do(func() { close(quiet) })
				}
				waitWrite(last)
			}
		})
	}
	wg.Wait()
	if sweep {
		jump() // every entry is now past the grace: the last scans sweep what is stale
	}
	writesEnd.Store(seq.Add(1))
	readersDone := make(chan struct{})
	go func() { rg.Wait(); close(readersDone) }()
	select {
	case <-quiet:
	case <-readersDone: // a reader failed
	}
	stop.Store(true)
	rg.Wait()
	if t.Failed() {
		return
	}
	reads := 0
	for _, op := range history {
		if !op.Input.(ixOp).write {
			reads++
		}
	}
	if reads == 0 {
		t.Fatal("the readers returned no row")
	}
	if res := porcupine.CheckOperationsTimeout(ixModel(rows), history, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("index reads are not consistent with the table: porcupine says %v (%d operations, %d reads)", res, len(history), reads)
	}
	checkNeverMissing(t, history, scans, rows)
	// Every row's current value is in the index, once; the index holds
	// the rows exactly (older versions' entries are the extra ones).
	var idx []string
	for row, err := range ix.Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		idx = append(idx, row.Key.String())
	}
	var want []string
	for row, err := range tbl.Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		v, _ := row.Get("v")
		want = append(want, tablekit.Key("v", v).Add("id", row.Key[0].Value).String())
	}
	slices.Sort(want)
	if !slices.Equal(idx, want) {
		t.Fatalf("index after the run:\n%v\nwant\n%v", idx, want)
	}
	rep, err := db.Reindex(ctx, "t", "by_v", true)
	if err != nil || rep.Missing != 0 {
		t.Fatalf("Reindex verify: %+v, %v; want no missing entry", rep, err)
	}
	if sweep && rep.Extra != 0 {
		t.Fatalf("Reindex verify after scans of the whole index past the grace: %+v; want no extra entry (the reads sweep them)", rep)
	}
}

// ixScan is one full scan of the index: its call and return stamps and
// the rows it returned.
type ixScan struct {
	call, ret int64
	got       map[int]bool
}

// checkNeverMissing is the other half of the scans' consistency: a row
// whose indexed value was stable during a whole scan (a write of it
// returned before the scan began, and none overlapped the scan) is
// returned by that scan. It fails if no scan had such a row to check.
func checkNeverMissing(t *testing.T, history []porcupine.Operation, scans []ixScan, rows int) {
	t.Helper()
	writes := make([][]porcupine.Operation, rows)
	for _, op := range history {
		if in := op.Input.(ixOp); in.write {
			writes[in.row] = append(writes[in.row], op)
		}
	}
	checked := 0
	for _, sc := range scans {
		for r := range rows {
			written, overlaps := false, false
			for _, w := range writes[r] {
				switch {
				case w.Return < sc.call:
					written = true
				case w.Call < sc.ret:
					overlaps = true
				}
			}
			if !written || overlaps {
				continue
			}
			checked++
			if !sc.got[r] {
				t.Errorf("a scan (stamps %d-%d) missed row %d, whose value was stable during it", sc.call, sc.ret, r)
			}
		}
	}
	if checked == 0 {
		t.Errorf("no scan had a stable row to check (%d scans)", len(scans))
	}
	t.Logf("never missing: %d (scan, stable row) pairs checked in %d scans", checked, len(scans))
}

// TestIndexConsistencyTwoColumns: 16 writers change the two columns of an
// index separately (the guarded path), delete versions (revealing older
// values) and columns; at the end no entry is missing and the index
// equals the rows.
func TestIndexConsistencyTwoColumns(t *testing.T) {
	for name, mk := range ixBackends(t) {
		t.Run(name, func(t *testing.T) { testIndexTwoColumns(t, mk()) })
	}
}

// twoColumnIndexClient returns a client of b with table "t" (key id,
// MaxVersions 3) indexed by "by_ab" on a (String) and b (Integer); the
// test closes it.
func twoColumnIndexClient(t testing.TB, b tablekit.Backend) *tablekit.Client {
	db := tablekit.NewClient(b)
	t.Cleanup(func() { db.Close() })
	spec := tablekit.IndexSpec{Name: "by_ab", Columns: []tablekit.KeyColumn{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger}}}
	if err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: 3}, Indexes: []tablekit.IndexSpec{spec}}); err != nil {
		t.Fatal(err)
	}
	return db
}

func testIndexTwoColumns(t *testing.T, b tablekit.Backend) {
	ctx := context.Background()
	db := twoColumnIndexClient(t, b)
	const rows, writers = 4, 16
	writes := 25
	if testing.Short() {
		writes = 8
	}
	tbl := db.Table("t")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for i := range writes {
				key := tablekit.Key("id", tablekit.Integer(int64(rng.IntN(rows))))
				var ch tablekit.Change
				switch rng.IntN(6) {
				case 0, 1:
					ch = tablekit.Put("a", tablekit.String(fmt.Sprintf("a%d", rng.IntN(4))))
				case 2, 3:
					ch = tablekit.Put("b", tablekit.Integer(int64(rng.IntN(4))))
				case 4:
					r, found, err := tbl.GetRow(ctx, key, tablekit.MaxVersions(3))
					if err != nil {
						t.Error(err)
						return
					}
					col := []string{"a", "b"}[i%2]
					vs := r.Versions(col)
					if !found || len(vs) == 0 {
						continue
					}
					ch = tablekit.DeleteVersion(col, vs[0].Version)
				case 5:
					ch = tablekit.Increment("b", 1)
				}
				if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{ch}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	rep, err := db.Reindex(ctx, "t", "by_ab", true)
	if err != nil || rep.Missing != 0 {
		t.Fatalf("Reindex verify: %+v, %v; want no missing entry", rep, err)
	}
	var idx []string
	lo := tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin).Add("id", tablekit.InfMin)
	hi := tablekit.Key("a", tablekit.InfMax).Add("b", tablekit.InfMax).Add("id", tablekit.InfMax)
	for row, err := range tbl.Index("by_ab").Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		idx = append(idx, row.Key.String())
	}
	var want []string
	for row, err := range tbl.Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		a, okA := row.Get("a")
		bv, okB := row.Get("b")
		if okA && okB {
			want = append(want, tablekit.Key("a", a).Add("b", bv).Add("id", row.Key[0].Value).String())
		}
	}
	if len(idx) != len(want) {
		t.Fatalf("index after the run:\n%v\nwant (any order)\n%v", idx, want)
	}
	for _, w := range want {
		if !slices.Contains(idx, w) {
			t.Fatalf("index after the run lacks %s:\n%v", w, idx)
		}
	}
}
