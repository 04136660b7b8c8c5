package fileengine_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

// The crash test's child process is this test binary, run with these
// variables set: it writes into the directory until it is killed.
const (
	crashDirEnv   = "FILEENGINE_CRASH_DIR"
	crashCycleEnv = "FILEENGINE_CRASH_CYCLE"
	crashSyncEnv  = "FILEENGINE_CRASH_NOSYNC"
	crashWorkers  = 4
	crashTable    = "crash"
)

// payload is the value every column of row key holds: derived from the key
// alone, so that the parent knows it, and long enough (100 B to 3 KB) that
// a row spans WAL blocks.
func payload(key string) string {
	n := 100 + int(hashString(key)%2900)
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(key)
		b.WriteByte('|')
	}
	return b.String()[:n]
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

func crashKey(k string) tablekit.PrimaryKey { return tablekit.Key("k", tablekit.String(k)) }

func payloadColumns(key string) []tablekit.Column {
	v := tablekit.String(payload(key))
	return []tablekit.Column{{Name: "a", Value: v}, {Name: "b", Value: v}, {Name: "c", Value: v}}
}

// TestCrashChild is the child's workload; it does nothing in a normal run.
// Each of its workers loops over a conditional insert (ExpectNotExist), an
// increment of its own counter and a batch of four puts, and prints a
// line to stdout after each is acknowledged:
//
//	ACK P <key>          the row was inserted
//	ACK I <worker> <n>   the counter's new value is n
//	ACK B <key> ...      the batch's rows were written
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("only run as the crash test's child process")
	}
	cycle := os.Getenv(crashCycleEnv)
	db, ack := openCrashChild(dir, &fileengine.Options{NoSync: os.Getenv(crashSyncEnv) == "true"})
	tab := db.Table(crashTable)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			for n := 0; ; n++ {
				base := fmt.Sprintf("%s/%d/%d", cycle, w, n)
				switch n % 3 {
				case 0:
					k := "p/" + base
					if err := tab.PutRow(ctx, crashKey(k), payloadColumns(k), tablekit.ExpectNotExist); err != nil {
						fmt.Println("ERROR", err)
						os.Exit(3)
					}
					ack("P " + k)
				case 1:
					res, err := tab.UpdateRow(ctx, crashKey("ctr/"+strconv.Itoa(w)), []tablekit.Change{tablekit.Increment("n", 1)})
					if err != nil {
						fmt.Println("ERROR", err)
						os.Exit(3)
					}
					v, _ := res.Increments[0].Value.Int()
					ack(fmt.Sprintf("I %d %d", w, v))
				case 2:
					var ws []tablekit.BatchWrite
					var keys []string
					for i := range 4 {
						k := fmt.Sprintf("b/%s/%d", base, i)
						keys = append(keys, k)
						ws = append(ws, tablekit.BatchWrite{Table: crashTable, Key: crashKey(k), Kind: tablekit.WritePut, Columns: payloadColumns(k)})
					}
					res, err := db.BatchWriteRow(ctx, ws)
					if err != nil {
						fmt.Println("ERROR", err)
						os.Exit(3)
					}
					for _, r := range res {
						if r.Err != nil {
							fmt.Println("ERROR", r.Err)
							os.Exit(3)
						}
					}
					ack("B " + strings.Join(keys, " "))
				}
			}
		})
	}
	wg.Wait()
}

// crashCycles sets how many times TestCrash and
// TestAutoIncrementIndexedCrash kill their child in each mode; 0 means
// the default (TestCrash: 20 synced, 10 with NoSync;
// TestAutoIncrementIndexedCrash: 6 each; 3 each with -short). A longer run:
//
//	go test ./fileengine/ -run '^TestCrash$' -timeout 60m -crash.cycles=200
var crashCycles = flag.Int("crash.cycles", 0, "TestCrash, TestAutoIncrementIndexedCrash: kills per mode (0: the default)")

// TestCrash kills a writing child process with SIGKILL at random moments,
// then reopens the directory and checks that every acknowledged write is
// there exactly once, that increments were counted exactly, that no row
// is torn, and that the table's index agrees with its rows: with the default durable writes, and with Options.NoSync, whose
// acknowledged writes survive the death of the process (only a machine
// crash may lose them).
func TestCrash(t *testing.T) {
	for _, mode := range []struct {
		name   string
		noSync bool
		cycles int
	}{{"sync", false, 20}, {"nosync", true, 10}} {
		t.Run(mode.name, func(t *testing.T) {
			cycles := mode.cycles
			switch {
			case *crashCycles > 0:
				cycles = *crashCycles
			case testing.Short():
				cycles = 3
			}
			testCrash(t, mode.noSync, cycles)
		})
	}
}

func testCrash(t *testing.T, noSync bool, cycles int) {
	dir := t.TempDir()
	ctx := context.Background()
	opts := &fileengine.Options{NoSync: noSync}
	{
		eng, err := fileengine.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		db := tablekit.NewClient(eng)
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: crashTable, Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}, Indexes: []tablekit.IndexSpec{crashIndex}}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Table(crashTable).EnableChangeFeed(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var (
		rows     []string // acknowledged inserted or batch-written rows
		counters [crashWorkers]int64
		acks     int
	)
	for cycle := range cycles {
		lines := runCrashChild(t, dir, cycle, noSync, time.Duration(50+rand.IntN(400))*time.Millisecond)
		for _, l := range lines {
			f := strings.Fields(l)
			switch f[0] {
			case "P":
				rows = append(rows, f[1])
			case "B":
				rows = append(rows, f[1:]...)
			case "I":
				w, _ := strconv.Atoi(f[1])
				v, _ := strconv.ParseInt(f[2], 10, 64)
				// Each increment is acknowledged with the next value: one
				// increment that committed but was not acknowledged before a
				// crash shows as one skipped value after it, never more.
				if v != counters[w]+1 {
					t.Errorf("cycle %d: worker %d's counter went from %d to %d", cycle, w, counters[w], v)
				}
				counters[w] = v
			}
			acks++
		}
		verifyCrash(t, dir, opts, cycle, rows, &counters)
		if t.Failed() {
			return
		}
	}
	if acks < cycles {
		t.Errorf("only %d writes acknowledged in %d cycles: the child hardly ran", acks, cycles)
	}
	t.Logf("%d cycles, %d acknowledged writes, %d rows", cycles, acks, len(rows))
}

// openCrashChild opens a crash child's engine on dir (a failure is
// printed for the parent, and exits), says "ACK READY", and returns the
// client and ack, which prints one acknowledged line for the parent.
func openCrashChild(dir string, opts *fileengine.Options) (*tablekit.Client, func(line string)) {
	eng, err := fileengine.Open(dir, opts)
	if err != nil {
		fmt.Println("OPEN FAILED", err)
		os.Exit(2)
	}
	var out sync.Mutex
	ack := func(line string) {
		out.Lock()
		_, _ = os.Stdout.WriteString("ACK " + line + "\n")
		out.Unlock()
	}
	ack("READY")
	return tablekit.NewClient(eng), ack
}

// runCrashChild runs one child on dir for about d after it is ready, kills
// it, and returns its acknowledged lines (without "ACK ").
func runCrashChild(t *testing.T, dir string, cycle int, noSync bool, d time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashCycleEnv+"="+strconv.Itoa(cycle), crashSyncEnv+"="+strconv.FormatBool(noSync))
	return killChild(t, cmd, cycle, d)
}

// killChild starts cmd, a crash child that prints "ACK READY" and then
// "ACK <line>" per acknowledged write, kills it with SIGKILL about d after it
// is ready, and returns its acknowledged lines (without "ACK ").
func killChild(t *testing.T, cmd *exec.Cmd, cycle int, d time.Duration) []string {
	t.Helper()
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var lines []string
	var other []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(stdout)
		for {
			l, err := r.ReadString('\n')
			if err != nil { // a line cut by the kill was never acknowledged
				_, _ = io.Copy(io.Discard, r)
				return
			}
			l = strings.TrimSuffix(l, "\n")
			switch {
			case l == "ACK READY":
				close(ready)
			case strings.HasPrefix(l, "ACK "):
				lines = append(lines, l[4:])
			default:
				other = append(other, l)
			}
		}
	}()
	select {
	case <-ready:
		time.Sleep(d)
	case <-done:
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	_ = cmd.Wait()
	for _, l := range other {
		if strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "OPEN FAILED") {
			t.Errorf("cycle %d: child: %s", cycle, l)
		}
	}
	select {
	case <-ready:
	default:
		t.Fatalf("cycle %d: the child never became ready: %q", cycle, other)
	}
	return lines
}

// verifyCrash reopens dir and checks the acknowledged rows and counters,
// and that every row present is whole.
func verifyCrash(t *testing.T, dir string, opts *fileengine.Options, cycle int, acked []string, counters *[crashWorkers]int64) {
	t.Helper()
	ctx := context.Background()
	eng, err := fileengine.Open(dir, opts)
	if err != nil {
		t.Fatalf("cycle %d: reopen: %v", cycle, err)
	}
	db := tablekit.NewClient(eng)
	defer db.Close()
	tab := db.Table(crashTable)
	present := map[string]bool{}
	for row, err := range tab.Rows(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
		if err != nil {
			t.Fatalf("cycle %d: scan: %v", cycle, err)
		}
		s, _ := row.Key[0].Value.Str()
		if present[s] {
			t.Errorf("cycle %d: row %s returned twice", cycle, s)
		}
		present[s] = true
		if strings.HasPrefix(s, "ctr/") {
			w, _ := strconv.Atoi(s[4:])
			v, _ := row.Get("n")
			n, _ := v.Int()
			// The counter holds every acknowledged increment, plus at most
			// the one in flight when the child was killed.
			if n != counters[w] && n != counters[w]+1 {
				t.Errorf("cycle %d: counter %d is %d, %d increments were acknowledged", cycle, w, n, counters[w])
			}
			counters[w] = n // the next cycle continues from here
			continue
		}
		want := payload(s)
		if len(row.Columns) != 3 {
			t.Errorf("cycle %d: row %s is torn: %d columns", cycle, s, len(row.Columns))
		}
		for _, c := range row.Columns {
			if got, _ := c.Value.Str(); got != want {
				t.Errorf("cycle %d: row %s column %s: %d bytes differ from the %d written", cycle, s, c.Name, len(got), len(want))
			}
		}
	}
	for w, n := range counters {
		if n > 0 && !present["ctr/"+strconv.Itoa(w)] {
			t.Errorf("cycle %d: counter %d is missing, %d increments were acknowledged", cycle, w, n)
		}
	}
	verifyFeedAgrees(t, db, cycle)
	verifyIndexAgrees(t, db, cycle, crashTable, crashIndex)
	var missing []string
	for _, k := range acked {
		if !present[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("cycle %d: %d of %d acknowledged rows are missing, such as %q", cycle, len(missing), len(acked), missing[:min(len(missing), 5)])
	}
}
