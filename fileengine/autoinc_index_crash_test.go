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

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

// The indexed auto-increment crash test's child: this test binary with
// aiixCrashEnv set to the directory and aiixCrashCycleEnv to the cycle,
// writing table aiixCrashTable (key p, s with s auto-increment) and its
// two indexes, whose keys hold the assigned value at the end (by_v: v, p,
// s) and at the start (by_sv: s, v, p).
const (
	aiixCrashEnv      = "FILEENGINE_AIIX_CRASH_DIR"
	aiixCrashCycleEnv = "FILEENGINE_AIIX_CRASH_CYCLE"
	aiixCrashSyncEnv  = "FILEENGINE_AIIX_CRASH_NOSYNC"
	aiixCrashTable    = "aiixcrash"
)

var aiixCrashIndexes = []tablekit.IndexSpec{
	{Name: "by_v", Columns: []tablekit.KeyColumn{{Name: "v", Type: tablekit.TypeInteger}}},
	{Name: "by_sv", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeInteger}, {Name: "v", Type: tablekit.TypeInteger}}},
}

// aiixV is the text of an indexed value v in the child's lines: "-" for
// none (the row has no v and is in no index).
func aiixV(v int64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatInt(v, 10)
}

// TestAutoIncrementIndexedCrashChild is the child's workload; it does
// nothing in a normal run. Each worker w owns the rows it created and
// loops over: a PutRow with AutoIncrement in the shared partition key "s";
// a BatchWriteRow of two such puts in its own partition key "w<w>"; an
// update of one of its rows (a new v, which moves the row in both
// indexes, or 1 in 4 times no v, which takes it out of them); a delete
// of one of its rows; another update. Every row has a column "who",
// unique to the write that created it, and payload columns. It prints,
// after each write is acknowledged:
//
//	ACK P <p> <s> <who> <v>                      a put was given key p, s
//	ACK B <p> <s1> <who1> <v1> <s2> <who2> <v2>   a batch's two puts
//	ACK U <p> <s> <v>                             row p, s now has v
//	ACK D <p> <s>                                 row p, s was deleted
//
// and before each update or delete, "ACK T U ..." or "ACK T D ...": the
// write in flight, which a kill leaves applied or not.
func TestAutoIncrementIndexedCrashChild(t *testing.T) {
	dir := os.Getenv(aiixCrashEnv)
	if dir == "" {
		t.Skip("only run as the indexed auto-increment crash test's child process")
	}
	cycle := os.Getenv(aiixCrashCycleEnv)
	db, ack := openCrashChild(dir, &fileengine.Options{NoSync: os.Getenv(aiixCrashSyncEnv) == "true"})
	tab := db.Table(aiixCrashTable)
	ctx := context.Background()
	fail := func(err error) {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	cols := func(who string, v int64) []tablekit.Column {
		return append(payloadColumns(who), tablekit.Column{Name: "who", Value: tablekit.String(who)}, tablekit.Column{Name: "v", Value: tablekit.Integer(v)})
	}
	keyText := func(k tablekit.PrimaryKey) string {
		p, _ := k[0].Value.Str()
		s, _ := k[1].Value.Int()
		return fmt.Sprintf("%s %d", p, s)
	}
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			var mine []tablekit.PrimaryKey // this worker's rows, acknowledged
			newV := func() int64 { return rng.Int64N(1000) - 500 }
			for n := 0; ; n++ {
				who := fmt.Sprintf("%s/%d/%d", cycle, w, n)
				switch op := n % 5; {
				case op == 0:
					var k tablekit.PrimaryKey
					v := newV()
					if err := tab.PutRow(ctx, aiPlaceholder("s"), cols(who, v), tablekit.ReturnKey(&k)); err != nil {
						fail(err)
					}
					mine = append(mine, k)
					ack(fmt.Sprintf("P %s %s %d", keyText(k), who, v))
				case op == 1:
					own := "w" + strconv.Itoa(w)
					vs := [2]int64{newV(), newV()}
					res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{
						tablekit.BatchPut(aiixCrashTable, aiPlaceholder(own), cols(who+"a", vs[0])),
						tablekit.BatchPut(aiixCrashTable, aiPlaceholder(own), cols(who+"b", vs[1])),
					})
					if err != nil {
						fail(err)
					}
					line := "B " + own
					for i, r := range res {
						if r.Err != nil {
							fail(r.Err)
						}
						s, _ := r.Key[1].Value.Int()
						line += fmt.Sprintf(" %d %s %d", s, who+"ab"[i:i+1], vs[i])
						mine = append(mine, r.Key)
					}
					ack(line)
				case len(mine) == 0:
				case op == 3:
					i := rng.IntN(len(mine))
					k := mine[i]
					ack("T D " + keyText(k))
					if err := tab.DeleteRow(ctx, k, tablekit.ExpectExist); err != nil {
						fail(err)
					}
					mine = append(mine[:i], mine[i+1:]...)
					ack("D " + keyText(k))
				default:
					k := mine[rng.IntN(len(mine))]
					v, hasV := newV(), rng.IntN(4) != 0
					ch := tablekit.Put("v", tablekit.Integer(v))
					if !hasV {
						ch = tablekit.DeleteColumn("v")
					}
					ack(fmt.Sprintf("T U %s %s", keyText(k), aiixV(v, hasV)))
					if _, err := tab.UpdateRow(ctx, k, []tablekit.Change{ch}, tablekit.ExpectExist); err != nil {
						fail(err)
					}
					ack(fmt.Sprintf("U %s %s", keyText(k), aiixV(v, hasV)))
				}
			}
		})
	}
	wg.Wait()
}

// TestAutoIncrementIndexedCrash kills a child writing an indexed table
// with an auto-increment key (puts assigning keys, updates moving rows in
// the indexes and out of them, deletes) with SIGKILL at random moments,
// and reopens the store each time: every acknowledged row is there, whole,
// under the key it was given, with its acknowledged v (or the one of the
// update in flight); no acknowledged delete is undone; no value is handed
// out twice in a partition key, and each is above every value handed out
// before the kill, deleted rows' too (SPEC §14); and both indexes agree
// with the rows (SPEC §16): no entry missing, every row returned under
// its own values, once. With synced commits and with Options.NoSync.
//
// Cycles: 6 per mode, 3 with -short, or -crash.cycles.
func TestAutoIncrementIndexedCrash(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(map[bool]string{false: "sync", true: "nosync"}[noSync], func(t *testing.T) {
			cycles := 6
			switch {
			case *crashCycles > 0:
				cycles = *crashCycles
			case testing.Short():
				cycles = 3
			}
			testAutoIncrementIndexedCrash(t, noSync, cycles)
		})
	}
}

// aiixRow is what the parent knows of a row of the indexed crash table.
type aiixRow struct {
	who  string
	v    int64
	hasV bool
}

// aiixPending is a write in flight: an update to v (hasV) or a delete.
type aiixPending struct {
	del  bool
	v    int64
	hasV bool
}

func testAutoIncrementIndexedCrash(t *testing.T, noSync bool, cycles int) {
	opts := &fileengine.Options{NoSync: noSync}
	dir := t.TempDir()
	ctx := context.Background()
	{
		eng, err := fileengine.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		db := tablekit.NewClient(eng)
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: aiixCrashTable, Key: aiCrashSchema, Indexes: aiixCrashIndexes}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var (
		owner = map[rowID]string{}  // every value handed out: acknowledged, or found after a kill
		live  = map[rowID]aiixRow{} // the rows that must be there
		gone  = map[rowID]bool{}    // rows deleted, acknowledged or found so
		floor = map[string]int64{}  // per partition key, the greatest value handed out before the cycle
		acks  int
		puts  int
		// Writes in flight at a kill found committed: puts, updates, deletes.
		flightP, flightU, flightD int
	)
	parseV := func(f string) (int64, bool) {
		if f == "-" {
			return 0, false
		}
		v, _ := strconv.ParseInt(f, 10, 64)
		return v, true
	}
	for cycle := range cycles {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAutoIncrementIndexedCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), aiixCrashEnv+"="+dir, aiixCrashCycleEnv+"="+strconv.Itoa(cycle), aiixCrashSyncEnv+"="+strconv.FormatBool(noSync))
		pending := map[rowID]aiixPending{}
		run := map[string]int64{} // per own partition key, the greatest value acknowledged so far
		assigned := func(id rowID, who string, v int64, hasV bool) {
			if prev, ok := owner[id]; ok {
				t.Errorf("cycle %d: %s=%d was assigned to write %s, and before to %s", cycle, id.p, id.s, who, prev)
			}
			if id.s <= floor[id.p] {
				t.Errorf("cycle %d: write %s was assigned %s=%d, not above %d, handed out before the kill", cycle, who, id.p, id.s, floor[id.p])
			}
			owner[id] = who
			live[id] = aiixRow{who: who, v: v, hasV: hasV}
			puts++
		}
		for _, l := range killChild(t, cmd, cycle, time.Duration(50+rand.IntN(300))*time.Millisecond) {
			f := strings.Fields(l)
			id := func(i int) rowID {
				s, _ := strconv.ParseInt(f[i+1], 10, 64)
				return rowID{f[i], s}
			}
			switch f[0] {
			case "P":
				v, _ := parseV(f[4])
				assigned(id(1), f[3], v, true)
			case "B":
				p := f[1]
				hi, ok := run[p]
				if !ok {
					hi = floor[p]
				}
				for i := 2; i+2 < len(f); i += 3 {
					s, _ := strconv.ParseInt(f[i], 10, 64)
					v, _ := parseV(f[i+2])
					// One writer per own partition key: each batch's values
					// are above the ones acknowledged before it.
					if s <= hi {
						t.Errorf("cycle %d: batch write %s was assigned %s=%d, not above %d, acknowledged before", cycle, f[i+1], p, s, hi)
					}
					assigned(rowID{p, s}, f[i+1], v, true)
					run[p] = max(run[p], s, hi)
				}
			case "T":
				switch f[1] {
				case "U":
					v, hasV := parseV(f[4])
					pending[id(2)] = aiixPending{v: v, hasV: hasV}
				case "D":
					pending[id(2)] = aiixPending{del: true}
				}
			case "U":
				r := id(1)
				cur, ok := live[r]
				if !ok {
					t.Errorf("cycle %d: update of %s=%d acknowledged, a row never acknowledged", cycle, r.p, r.s)
					continue
				}
				cur.v, cur.hasV = parseV(f[3])
				live[r] = cur
				delete(pending, r)
			case "D":
				r := id(1)
				delete(live, r)
				delete(pending, r)
				gone[r] = true
			}
			if f[0] != "T" {
				acks++
			}
		}

		found := map[rowID]aiixRow{}
		db := reopenRows(t, dir, opts, cycle, aiixCrashTable, func(id rowID, who string, r tablekit.Row) {
			p, s := id.p, id.s
			vv, hasV := r.Get("v")
			v, _ := vv.Int()
			found[id] = aiixRow{who: who, v: v, hasV: hasV}
			n := len(payloadColumns(who)) + 1 // and who
			if hasV {
				n++
			}
			if want := payloadColumns(who); len(r.Columns) != n || !r.Columns[0].Value.Equal(want[0].Value) {
				t.Errorf("cycle %d: row %s=%d is torn", cycle, p, s)
			}
			if gone[id] {
				t.Errorf("cycle %d: row %s=%d, deleted, is back", cycle, p, s)
			}
			if o, ok := owner[id]; ok && o != who {
				t.Errorf("cycle %d: row %s=%d holds write %s, but was assigned to %s", cycle, p, s, who, o)
			} else if !ok {
				// Committed, not acknowledged: handed out, and kept from now on.
				assigned(id, who, v, hasV)
				flightP++
			}
		})
		for id, want := range live {
			got, ok := found[id]
			pend, inFlight := pending[id]
			switch {
			case !ok && inFlight && pend.del:
				delete(live, id) // the delete in flight was committed
				gone[id] = true
				flightD++
			case !ok:
				t.Errorf("cycle %d: acknowledged row %s=%d (write %s) is missing", cycle, id.p, id.s, want.who)
			case got.hasV == want.hasV && got.v == want.v:
			case inFlight && !pend.del && got.hasV == pend.hasV && got.v == pend.v:
				live[id] = got // the update in flight was committed
				flightU++
			default:
				t.Errorf("cycle %d: row %s=%d has v=%s; acknowledged %s, in flight %+v", cycle, id.p, id.s,
					aiixV(got.v, got.hasV), aiixV(want.v, want.hasV), pend)
			}
		}
		for id := range owner {
			floor[id.p] = max(floor[id.p], id.s)
		}
		for _, ix := range aiixCrashIndexes {
			verifyIndexAgrees(t, db, cycle, aiixCrashTable, ix)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}
	if acks < cycles {
		t.Errorf("only %d writes acknowledged in %d cycles: the child hardly ran", acks, cycles)
	}
	t.Logf("%d cycles, %d acknowledged writes, %d rows assigned, %d deleted, %d live; found committed in flight: %d puts, %d updates, %d deletes",
		cycles, acks, puts, len(gone), len(live), flightP, flightU, flightD)
}
