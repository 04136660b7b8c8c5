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

// The atomic crash test's child: this test binary with atomicCrashEnv set
// to the directory. Each worker loops over one atomic write in its own
// partition key: an increment of the counter n of rows 0..5 and a put of
// row 1000+n (a payload of up to 3 KB, so that a write spans WAL blocks),
// and prints "ACK <worker> <n>" after each is acknowledged.
const (
	atomicCrashEnv   = "FILEENGINE_ATOMIC_CRASH_DIR"
	atomicCrashTable = "acrash"
	atomicCrashRows  = 6
)

func atomicCrashKey(w int, r int64) tablekit.PrimaryKey {
	return tablekit.Key("p", tablekit.String("w"+strconv.Itoa(w))).Add("r", tablekit.Integer(r))
}

func TestAtomicCrashChild(t *testing.T) {
	dir := os.Getenv(atomicCrashEnv)
	if dir == "" {
		t.Skip("only run as the atomic crash test's child process")
	}
	db, ack := openCrashChild(dir, nil)
	tab := db.Table(atomicCrashTable)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			for {
				ws := make([]tablekit.BatchWrite, 0, atomicCrashRows+1)
				for r := range int64(atomicCrashRows) {
					ws = append(ws, tablekit.BatchUpdate("", atomicCrashKey(w, r), []tablekit.Change{tablekit.Increment("n", 1)}))
				}
				// The counter's next value names the new row; the condition
				// makes the put fail (and so the whole write) if a row of
				// that name exists, which a lost increment would cause.
				cur, _, err := tab.GetRow(ctx, atomicCrashKey(w, 0))
				if err != nil {
					fmt.Println("ERROR", err)
					os.Exit(3)
				}
				v, _ := cur.Get("n")
				n, _ := v.Int()
				k := fmt.Sprintf("w%d/%d", w, n+1)
				ws = append(ws, tablekit.BatchPut("", atomicCrashKey(w, 1000+n+1), payloadColumns(k), tablekit.ExpectNotExist))
				res, err := tab.AtomicWrite(ctx, ws)
				if err != nil {
					fmt.Println("ERROR", err)
					os.Exit(3)
				}
				got, _ := res[0].Increments[0].Value.Int()
				ack(fmt.Sprintf("%d %d", w, got))
			}
		})
	}
	wg.Wait()
}

// TestAtomicCrash kills a child making atomic writes with SIGKILL at
// random moments, reopens the directory and checks that every atomic
// write is there whole or not at all: each worker's six counters are
// equal, at least the last acknowledged value and at most one more (a
// write committed but not acknowledged), and the rows put by the writes
// are exactly those of the counter's values, each whole.
func TestAtomicCrash(t *testing.T) {
	cycles := 10
	if testing.Short() {
		cycles = 3
	}
	dir := t.TempDir()
	ctx := context.Background()
	{
		eng, err := fileengine.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		db := tablekit.NewClient(eng)
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: atomicCrashTable, Key: tablekit.KeySchema{
			{Name: "p", Type: tablekit.TypeString}, {Name: "r", Type: tablekit.TypeInteger}}}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var acked [crashWorkers]int64
	acks := 0
	for cycle := range cycles {
		for _, l := range runAtomicCrashChild(t, dir, cycle, time.Duration(50+rand.IntN(300))*time.Millisecond) {
			f := strings.Fields(l)
			w, _ := strconv.Atoi(f[0])
			n, _ := strconv.ParseInt(f[1], 10, 64)
			if n <= acked[w] {
				t.Errorf("cycle %d: worker %d acknowledged %d after %d", cycle, w, n, acked[w])
			}
			acked[w] = n
			acks++
		}
		eng, err := fileengine.Open(dir, nil)
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", cycle, err)
		}
		tab := tablekit.NewClient(eng).Table(atomicCrashTable)
		for w := range crashWorkers {
			var counters []int64
			var puts []int64
			for r, err := range tab.PrefixRows(ctx, tablekit.Key("p", tablekit.String("w"+strconv.Itoa(w)))) {
				if err != nil {
					t.Fatalf("cycle %d: read: %v", cycle, err)
				}
				id, _ := r.Key[1].Value.Int()
				if id < atomicCrashRows {
					v, _ := r.Get("n")
					n, _ := v.Int()
					counters = append(counters, n)
					continue
				}
				puts = append(puts, id-1000)
				k := fmt.Sprintf("w%d/%d", w, id-1000)
				want := payloadColumns(k)
				whole := len(r.Columns) == len(want)
				for i := range r.Columns {
					whole = whole && r.Columns[i].Name == want[i].Name && r.Columns[i].Value.Equal(want[i].Value)
				}
				if !whole {
					t.Errorf("cycle %d: row %v is torn", cycle, r.Key)
				}
			}
			if acked[w] == 0 && len(counters) == 0 {
				continue
			}
			if len(counters) != atomicCrashRows {
				t.Fatalf("cycle %d: worker %d has %d counter rows, want %d (a part of an atomic write)", cycle, w, len(counters), atomicCrashRows)
			}
			n := counters[0]
			for _, c := range counters {
				if c != n {
					t.Fatalf("cycle %d: worker %d's counters %v differ: an atomic write survived in part", cycle, w, counters)
				}
			}
			if n < acked[w] || n > acked[w]+1 {
				t.Errorf("cycle %d: worker %d's counters are %d, acknowledged %d", cycle, w, n, acked[w])
			}
			acked[w] = n // a write committed but not acknowledged counts from now on
			if int64(len(puts)) != n || len(puts) > 0 && (puts[0] != 1 || puts[len(puts)-1] != n) {
				t.Errorf("cycle %d: worker %d's counter is %d but its put rows are %v", cycle, w, n, puts)
			}
		}
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}
	if acks < cycles {
		t.Errorf("only %d atomic writes acknowledged in %d cycles: the child hardly ran", acks, cycles)
	}
	t.Logf("%d cycles, %d acknowledged atomic writes", cycles, acks)
}

func runAtomicCrashChild(t *testing.T, dir string, cycle int, d time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), atomicCrashEnv+"="+dir)
	return killChild(t, cmd, cycle, d)
}
