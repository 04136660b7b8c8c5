package fileengine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

var aiCrashSchema = tablekit.KeySchema{
	{Name: "p", Type: tablekit.TypeString},
	{Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true},
}

func aiPlaceholder(p string) tablekit.PrimaryKey {
	return tablekit.Key("p", tablekit.String(p)).Add("s", tablekit.AutoIncrement)
}

// putAuto puts a row with AutoIncrement in partition key p and returns the
// value assigned.
func putAuto(t *testing.T, tab *tablekit.Table, p string) int64 {
	t.Helper()
	var k tablekit.PrimaryKey
	if err := tab.PutRow(context.Background(), aiPlaceholder(p), nil, tablekit.ReturnKey(&k)); err != nil {
		t.Fatal(err)
	}
	v, ok := k[1].Value.Int()
	if !ok {
		t.Fatalf("ReturnKey gave %v", k)
	}
	return v
}

// counterKeys counts the store's auto-increment counter keys.
func counterKeys(t *testing.T, db *tablekit.Client) int {
	t.Helper()
	var pdb *pebble.DB
	if !db.As(&pdb) {
		t.Fatal("no *pebble.DB")
	}
	it, err := pdb.NewIter(&pebble.IterOptions{LowerBound: []byte{'a'}, UpperBound: []byte{'b'}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n
}

// TestAutoIncrementReopen: values assigned after Close and Open are above
// every value assigned or written before, per partition key; the counters
// take one key per partition key in steady state and go with the table.
func TestAutoIncrementReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *tablekit.Client {
		eng, err := fileengine.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tablekit.NewClient(eng)
	}
	db := open()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "m", Key: aiCrashSchema}); err != nil {
		t.Fatal(err)
	}
	tab := db.Table("m")
	var a, b int64
	for range 5 {
		a, b = putAuto(t, tab, "a"), putAuto(t, tab, "b")
	}
	if a != 5 || b != 5 {
		t.Fatalf("after 5 puts each: a = %d, b = %d, want 5 and 5 (a counter per partition key)", a, b)
	}
	// The last row of a is deleted, and b gets a real value far above.
	if err := tab.DeleteRow(ctx, tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.Integer(a))); err != nil {
		t.Fatal(err)
	}
	if err := tab.PutRow(ctx, tablekit.Key("p", tablekit.String("b")).Add("s", tablekit.Integer(1000)), nil); err != nil {
		t.Fatal(err)
	}
	// One key per partition key, but for b's real value 1000, which is
	// not the successor of 5: 5 and 1000 (the deleted row keeps its).
	if n := counterKeys(t, db); n != 3 {
		t.Errorf("%d counter keys, want 3: a's 5, b's 5 and 1000", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	tab = db.Table("m")
	if got := putAuto(t, tab, "a"); got != a+1 {
		t.Errorf("after reopening, a was assigned %d, want %d (never a value handed out before)", got, a+1)
	}
	if got := putAuto(t, tab, "b"); got != 1001 {
		t.Errorf("after reopening, b was assigned %d, want 1001 (above the real value 1000)", got)
	}
	if got := putAuto(t, tab, "c"); got != 1 {
		t.Errorf("a new partition key was assigned %d, want 1", got)
	}
	if err := db.DeleteTable(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if n := counterKeys(t, db); n != 0 {
		t.Errorf("%d counter keys after DeleteTable, want 0", n)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "m", Key: aiCrashSchema}); err != nil {
		t.Fatal(err)
	}
	if got := putAuto(t, db.Table("m"), "a"); got != 1 {
		t.Errorf("a table created again was assigned %d, want 1", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// The auto-increment crash test's child: this test binary with
// aiCrashEnv set to the directory and aiCrashCycleEnv to the cycle. Each
// worker loops over a PutRow in the shared partition key "s", a
// BatchWriteRow of two puts in its own partition key, and an AtomicWrite
// of two puts in "s", all with AutoIncrement, and prints, per row
// acknowledged, "ACK <p> <s> <who>": the key the store assigned and the
// value of the row's column "who", unique to the write.
const (
	aiCrashEnv      = "FILEENGINE_AI_CRASH_DIR"
	aiCrashCycleEnv = "FILEENGINE_AI_CRASH_CYCLE"
	aiCrashSyncEnv  = "FILEENGINE_AI_CRASH_NOSYNC"
	aiCrashTable    = "aicrash"
)

func TestAutoIncrementCrashChild(t *testing.T) {
	dir := os.Getenv(aiCrashEnv)
	if dir == "" {
		t.Skip("only run as the auto-increment crash test's child process")
	}
	cycle := os.Getenv(aiCrashCycleEnv)
	db, ack := openCrashChild(dir, &fileengine.Options{NoSync: os.Getenv(aiCrashSyncEnv) == "true"})
	tab := db.Table(aiCrashTable)
	ctx := context.Background()
	fail := func(err error) {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	ackKey := func(k tablekit.PrimaryKey, who string) {
		p, _ := k[0].Value.Str()
		s, _ := k[1].Value.Int()
		ack(fmt.Sprintf("%s %d %s", p, s, who))
	}
	cols := func(who string) []tablekit.Column {
		return append(payloadColumns(who), tablekit.Column{Name: "who", Value: tablekit.String(who)})
	}
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			for n := 0; ; n++ {
				who := fmt.Sprintf("%s/%d/%d", cycle, w, n)
				switch n % 3 {
				case 0:
					var k tablekit.PrimaryKey
					if err := tab.PutRow(ctx, aiPlaceholder("s"), cols(who), tablekit.ReturnKey(&k)); err != nil {
						fail(err)
					}
					ackKey(k, who)
				case 1:
					own := "w" + strconv.Itoa(w)
					res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{
						tablekit.BatchPut(aiCrashTable, aiPlaceholder(own), cols(who+"a")),
						tablekit.BatchPut(aiCrashTable, aiPlaceholder(own), cols(who+"b")),
					})
					if err != nil {
						fail(err)
					}
					for i, r := range res {
						if r.Err != nil {
							fail(r.Err)
						}
						ackKey(r.Key, who+"ab"[i:i+1])
					}
				case 2:
					res, err := tab.AtomicWrite(ctx, []tablekit.BatchWrite{
						tablekit.BatchPut("", aiPlaceholder("s"), cols(who+"a"), tablekit.ExpectNotExist),
						tablekit.BatchPut("", aiPlaceholder("s"), cols(who+"b"), tablekit.ExpectNotExist),
					})
					if err != nil {
						fail(err)
					}
					for i, r := range res {
						ackKey(r.Key, who+"ab"[i:i+1])
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestAutoIncrementCrash kills a child writing rows with AutoIncrement with
// SIGKILL at random moments and reopens the store each time: every
// acknowledged row is there, whole, under the key it was given, and no
// value is ever handed out twice in a partition key, across crashes
// (a row committed but not acknowledged counts as handed out too); with
// synced commits and with Options.NoSync.
func TestAutoIncrementCrash(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "nosync"}[noSync], func(t *testing.T) {
			cycles := 6
			if testing.Short() {
				cycles = 3
			}
			testAutoIncrementCrash(t, noSync, cycles)
		})
	}
}

func testAutoIncrementCrash(t *testing.T, noSync bool, cycles int) {
	opts := &fileengine.Options{NoSync: noSync}
	dir := t.TempDir()
	ctx := context.Background()
	{
		eng, err := fileengine.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		db := tablekit.NewClient(eng)
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: aiCrashTable, Key: aiCrashSchema}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	owner := map[rowID]string{} // every value handed out: acknowledged, or found after a crash
	acks := 0
	for cycle := range cycles {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAutoIncrementCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), aiCrashEnv+"="+dir, aiCrashCycleEnv+"="+strconv.Itoa(cycle), aiCrashSyncEnv+"="+strconv.FormatBool(noSync))
		var acked []rowID
		for _, l := range killChild(t, cmd, cycle, time.Duration(50+rand.IntN(300))*time.Millisecond) {
			f := strings.Fields(l)
			s, _ := strconv.ParseInt(f[1], 10, 64)
			id := rowID{f[0], s}
			if prev, ok := owner[id]; ok {
				t.Errorf("cycle %d: %s=%d was assigned to write %s, and before to %s", cycle, id.p, id.s, f[2], prev)
			}
			owner[id] = f[2]
			acked = append(acked, id)
			acks++
		}
		present := map[rowID]bool{}
		db := reopenRows(t, dir, opts, cycle, aiCrashTable, func(id rowID, who string, r tablekit.Row) {
			present[id] = true
			if o, ok := owner[id]; ok && o != who {
				t.Errorf("cycle %d: row %s=%d holds write %s, but was assigned to %s", cycle, id.p, id.s, who, o)
			}
			owner[id] = who // committed, perhaps not acknowledged: handed out
			if want := payloadColumns(who); len(r.Columns) != len(want)+1 || !r.Columns[0].Value.Equal(want[0].Value) {
				t.Errorf("cycle %d: row %s=%d is torn", cycle, id.p, id.s)
			}
		})
		for _, id := range acked {
			if !present[id] {
				t.Errorf("cycle %d: acknowledged row %s=%d is missing", cycle, id.p, id.s)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}
	if acks < cycles {
		t.Errorf("only %d rows acknowledged in %d cycles: the child hardly ran", acks, cycles)
	}
	t.Logf("%d cycles, %d acknowledged rows with AutoIncrement", cycles, acks)
}

// TestAutoIncrementNeverOverwrites: a row written with a real key equal to
// the value just assigned to a PutRow, between the assignment and the
// write, is kept; the PutRow takes the next value.
func TestAutoIncrementNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	eng, err := fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(eng)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "m", Key: aiCrashSchema}); err != nil {
		t.Fatal(err)
	}
	tab := db.Table("m")
	var raced tablekit.PrimaryKey
	fileengine.SetAfterAssign(func(k tablekit.PrimaryKey) {
		if raced != nil {
			return
		}
		raced = k
		if err := tab.PutRow(ctx, k, []tablekit.Column{{Name: "by", Value: tablekit.String("real key")}}); err != nil {
			t.Error(err)
		}
	})
	defer fileengine.SetAfterAssign(nil)
	var got tablekit.PrimaryKey
	if err := tab.PutRow(ctx, aiPlaceholder("a"), []tablekit.Column{{Name: "by", Value: tablekit.String("assigned")}}, tablekit.ReturnKey(&got)); err != nil {
		t.Fatal(err)
	}
	if raced == nil || got.Equal(raced) {
		t.Fatalf("assigned %v, the real-key write took %v: want another key", got, raced)
	}
	row, found, err := tab.GetRow(ctx, raced)
	if err != nil || !found {
		t.Fatalf("the real-key row: found %v, %v", found, err)
	}
	if v, _ := row.Columns[0].Value.Str(); v != "real key" {
		t.Errorf("the real-key row holds %q: the assigned put overwrote it", v)
	}
}

// TestAutoIncrementIndexed: an indexed auto-increment table on the file
// engine (WriteIndexed assigns the key and commits the row, its entries
// and the counter in one batch). A row written with a real key equal to
// the value just assigned, between the assignment and the write, is kept
// and indexed; the put takes the next value, and nothing is written for
// the first. After a reopen, the index finds every row under its assigned
// key, no entry missing or extra, and a new put is assigned above them.
func TestAutoIncrementIndexed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng, err := fileengine.Open(dir, &fileengine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(eng)
	byV := tablekit.IndexSpec{Name: "by_v", Columns: []tablekit.KeyColumn{{Name: "v", Type: tablekit.TypeString}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "m", Key: aiCrashSchema, Indexes: []tablekit.IndexSpec{byV}}); err != nil {
		t.Fatal(err)
	}
	tab := db.Table("m")
	put := func(tab *tablekit.Table, v string) tablekit.PrimaryKey {
		t.Helper()
		var k tablekit.PrimaryKey
		if err := tab.PutRow(ctx, aiPlaceholder("a"), []tablekit.Column{{Name: "v", Value: tablekit.String(v)}}, tablekit.ReturnKey(&k)); err != nil {
			t.Fatal(err)
		}
		return k
	}
	want := map[string]string{} // index key strings -> row key strings
	note := func(v string, k tablekit.PrimaryKey) { want[v+"/"+k.String()] = k.String() }
	k1 := put(tab, "x")
	note("x", k1)
	var raced tablekit.PrimaryKey
	fileengine.SetAfterAssign(func(k tablekit.PrimaryKey) {
		if raced != nil {
			return
		}
		raced = k
		if err := tab.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.String("real")}}); err != nil {
			t.Error(err)
		}
	})
	k2 := put(tab, "b")
	fileengine.SetAfterAssign(nil)
	if raced == nil || k2.Equal(raced) {
		t.Fatalf("assigned %v, the real-key write took %v: want another key", k2, raced)
	}
	note("real", raced)
	note("b", k2)
	check := func(db *tablekit.Client, when string) {
		t.Helper()
		got := map[string]string{}
		lo := tablekit.Key("v", tablekit.InfMin).Add("p", tablekit.InfMin).Add("s", tablekit.InfMin)
		hi := tablekit.Key("v", tablekit.InfMax).Add("p", tablekit.InfMax).Add("s", tablekit.InfMax)
		for r, err := range db.Table("m").Index("by_v").Rows(ctx, lo, hi) {
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			v, _ := r.Key[0].Value.Str()
			k := tablekit.PrimaryKey(r.Key[1:])
			got[v+"/"+k.String()] = k.String()
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: by_v holds %v, want %v", when, got, want)
		}
		if rep, err := db.Reindex(ctx, "m", "by_v", true); err != nil || !rep.Exact() {
			t.Errorf("%s: Reindex verify %+v, %v; want exact", when, rep, err)
		}
	}
	check(db, "before the reopen")
	db.Close()

	eng, err = fileengine.Open(dir, &fileengine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db = tablekit.NewClient(eng)
	defer db.Close()
	check(db, "after the reopen")
	k3 := put(db.Table("m"), "c")
	s2, _ := k2[1].Value.Int()
	if s3, _ := k3[1].Value.Int(); s3 <= s2 {
		t.Errorf("after the reopen a put was assigned %d, not above %d", s3, s2)
	}
	note("c", k3)
	check(db, "after a put following the reopen")
}

// rowID is a row of an auto-increment crash table: partition p, value s.
type rowID struct {
	p string
	s int64
}

// reopenRows reopens the store at dir after a kill and calls fn with each
// row of table (key p, s; column "who" names the write that put it), and
// returns a Client on the store for the caller's further checks (and its
// Close).
func reopenRows(t *testing.T, dir string, opts *fileengine.Options, cycle int, table string, fn func(id rowID, who string, r tablekit.Row)) *tablekit.Client {
	t.Helper()
	eng, err := fileengine.Open(dir, opts)
	if err != nil {
		t.Fatalf("cycle %d: reopen: %v", cycle, err)
	}
	db := tablekit.NewClient(eng)
	for r, err := range db.Table(table).PrefixRows(context.Background(), nil) {
		if err != nil {
			t.Fatalf("cycle %d: read: %v", cycle, err)
		}
		p, _ := r.Key[0].Value.Str()
		s, _ := r.Key[1].Value.Int()
		wv, _ := r.Get("who")
		who, _ := wv.Str()
		fn(rowID{p, s}, who, r)
	}
	return db
}
