package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/testkit/mototest"
	"github.com/tablekit/tablekit/tsemu"
)

// copy --follow end to end, through the built binaries: a writer keeps
// changing the source while `tablekit copy --follow` copies the table and
// then follows its change feed into the destination. A follower is
// SIGKILLed mid-way and run again from its checkpoint; once the writer
// stops and the follower has caught up, the exports of the source and the
// destination are identical.
//
// A file store is open in one process at a time, so a writer cannot share
// it with the follower: the source of a hop that a writer changes is a
// store a server shares. The file store is served by the Tablestore
// emulator (tsemu/cmd/tablestore-emulator -backend file://DIR): the writer
// writes through the emulator, and the follower reads the file store's
// feed through the emulator's Stream API. DynamoDB is moto (with DynamoDB
// Streams).

var (
	emuOnce sync.Once
	emuPath string
	emuErr  error
)

// emulatorBinary builds tsemu/cmd/tablestore-emulator once.
func emulatorBinary(t *testing.T) string {
	t.Helper()
	emuOnce.Do(func() {
		emuPath = filepath.Join(tmpRoot, "tablestore-emulator")
		if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", emuPath, "github.com/tablekit/tablekit/tsemu/cmd/tablestore-emulator").CombinedOutput(); err != nil {
			emuErr = fmt.Errorf("building tablestore-emulator: %v\n%s", err, out)
		}
	})
	if emuErr != nil {
		t.Fatal(emuErr)
	}
	return emuPath
}

// startEmulator runs the emulator binary over backend and returns its
// tablestore:// URL; it is killed when the test ends.
func startEmulator(t *testing.T, backend string) string {
	t.Helper()
	cmd := exec.Command(emulatorBinary(t), "-addr", "127.0.0.1:0", "-backend", backend)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case ep := <-line:
		if !strings.HasPrefix(ep, "http://127.0.0.1:") {
			t.Fatalf("tablestore-emulator printed %q", ep)
		}
		return "tablestore://" + tsemu.DefaultInstanceName + "?endpoint=" + ep
	case <-time.After(60 * time.Second):
		t.Fatal("tablestore-emulator printed no endpoint")
	}
	return ""
}

// e2eEnv is the environment of every process: the emulator's and moto's
// credentials.
var e2eEnv = []string{
	aliyuntablestore.EnvAccessKeyID + "=" + tsemu.DefaultAccessKeyID,
	aliyuntablestore.EnvAccessKeySecret + "=" + tsemu.DefaultAccessKeySecret,
	"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=" + mototest.Region,
}

// openE2E opens url in this process with e2eEnv's credentials.
func openE2E(t *testing.T, url string) *tablekit.Client {
	t.Helper()
	for _, kv := range e2eEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	db, err := tablekit.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// writer changes table t at db with every kind of write until stop is
// closed: puts, updates (an increment and a put, a column deletion),
// deletions and batches, over 40 rows. It returns how many writes were
// acknowledged.
func writer(ctx context.Context, db *tablekit.Client, stop <-chan struct{}, pace time.Duration) (int64, error) {
	tbl := db.Table("t")
	key := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("id", tablekit.String(fmt.Sprintf("r%02d", i%40))).Add("n", tablekit.Integer(int64(i%3)))
	}
	var n int64
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return n, nil
		case <-tick.C:
		}
		k := key(i * 7)
		var err error
		switch i % 9 {
		case 0, 4:
			err = tbl.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}, {Name: "s", Value: tablekit.String("p")}})
		case 1, 5, 7:
			_, err = tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Increment("c", 1), tablekit.Put("s", tablekit.String(fmt.Sprint("u", i)))})
		case 2:
			err = tbl.DeleteRow(ctx, k)
		case 3:
			_, err = tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.DeleteColumn("s")})
		case 6:
			var res []tablekit.BatchWriteResult
			res, err = db.BatchWriteRow(ctx, []tablekit.BatchWrite{
				tablekit.BatchPut("t", key(i*7+1), []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(-i))}}),
				tablekit.BatchUpdate("t", key(i*7+2), []tablekit.Change{tablekit.Put("b", tablekit.Binary([]byte{byte(i)}))}),
				tablekit.BatchDelete("t", key(i*7+3)),
			})
			for _, r := range res {
				if err == nil {
					err = r.Err
				}
			}
		case 8:
			_, err = tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put("d", tablekit.Double(float64(i)/3))})
		}
		if err != nil {
			return n, fmt.Errorf("write %d: %w", i, err)
		}
		n++
	}
}

// follower is a running `tablekit copy --follow`.
type follower struct {
	cmd  *exec.Cmd
	out  strings.Builder
	done chan error
}

func startFollower(t *testing.T, src, dst, cp string) *follower {
	t.Helper()
	f := &follower{cmd: exec.Command(tkBinary, "copy", src, dst, "--table", "t", "--checkpoint", cp, "--follow"), done: make(chan error, 1)}
	f.cmd.Env = append(os.Environ(), e2eEnv...)
	f.cmd.Stdout, f.cmd.Stderr = &f.out, &f.out
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { f.done <- f.cmd.Wait() }()
	t.Cleanup(func() { f.cmd.Process.Kill() })
	return f
}

// appliedRecords reads from checkpoint file cp whether the follower has
// applied a record of t's feed yet.
func appliedRecords(cp string) bool {
	b, _ := os.ReadFile(cp)
	var c checkpoint
	if json.Unmarshal(b, &c) != nil || c.Tables["t"] == nil {
		return false
	}
	return len(c.Tables["t"].Feed) > 0
}

func exportOf(t *testing.T, url string) string {
	t.Helper()
	r := tkEnv(t, e2eEnv, url, "", "export", "t")
	if r.code != 0 {
		t.Fatalf("export of %s: exit %d: %s", url, r.code, r.stderr)
	}
	return r.stdout
}

// followChain runs the scenario on stores chain[0] → chain[1] → …: table
// t made at chain[0] and seeded, a writer changing it, one follower per
// hop (copy --follow chain[i] chain[i+1]) all running at once, each
// SIGKILLed once it has applied records and started again; the writer
// stops; once every follower has caught up (every export is the
// source's) they are interrupted, and after more writes a copy --catch-up
// per hop, in order, gives identical exports again.
func followChain(t *testing.T, chain []string, run time.Duration) {
	ctx := context.Background()
	if r := tkEnv(t, e2eEnv, chain[0], "", "create", "t", "--key", "id:String,n:Integer", "--max-versions", "2"); r.code != 0 {
		t.Fatalf("create: %s", r.stderr)
	}
	db := openE2E(t, chain[0])
	for i := range 60 { // rows for the bulk copy
		k := tablekit.Key("id", tablekit.String(fmt.Sprintf("r%02d", i%40))).Add("n", tablekit.Integer(int64(i%3)))
		if err := db.Table("t").PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var written atomic.Int64
	werr := make(chan error, 1)
	go func() {
		n, err := writer(ctx, db, stop, 5*time.Millisecond)
		written.Store(n)
		werr <- err
	}()
	hops := len(chain) - 1
	cps := make([]string, hops)
	fs := make([]*follower, hops)
	dir := t.TempDir()
	for i := range hops {
		// Hop i's source table exists once hop i-1 has copied it.
		cps[i] = filepath.Join(dir, fmt.Sprintf("cp%d.json", i))
		fs[i] = startFollower(t, chain[i], chain[i+1], cps[i])
		for deadline := time.Now().Add(2 * time.Minute); !appliedRecords(cps[i]); {
			if time.Now().After(deadline) {
				t.Fatalf("follower %d applied no record within 2 minutes: %s", i, fs[i].out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(run / 2)
	for i := range hops {
		fs[i].cmd.Process.Signal(syscall.SIGKILL)
		<-fs[i].done
		fs[i] = startFollower(t, chain[i], chain[i+1], cps[i])
	}
	t.Logf("every follower SIGKILLed after applying records, and started again")
	time.Sleep(run / 2)
	close(stop)
	if err := <-werr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	t.Logf("writer stopped after %d writes", written.Load())
	want := exportOf(t, chain[0])
	for i := 1; i < len(chain); i++ {
		for deadline := time.Now().Add(3 * time.Minute); ; {
			got := exportOf(t, chain[i])
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("3 minutes after the writer stopped the exports of %s and %s still differ:\n%s\nfollower: %s", chain[0], chain[i], lineDiff(want, got), fs[i-1].out.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for i := range hops {
		fs[i].cmd.Process.Signal(syscall.SIGINT)
		if err := <-fs[i].done; err != nil {
			t.Fatalf("follower %d after Ctrl-C: %v\n%s", i, err, fs[i].out.String())
		}
	}
	// More writes while no follower runs, then --catch-up hop by hop.
	stop = make(chan struct{})
	go func() {
		n, err := writer(ctx, db, stop, time.Millisecond)
		written.Store(n)
		werr <- err
	}()
	time.Sleep(run / 4)
	close(stop)
	if err := <-werr; err != nil {
		t.Fatalf("writer: %v", err)
	}
	want = exportOf(t, chain[0])
	for i := range hops {
		r := tkEnv(t, e2eEnv, "", "", "copy", chain[i], chain[i+1], "--table", "t", "--checkpoint", cps[i], "--catch-up")
		if r.code != 0 || !strings.Contains(r.stdout, "caught up") {
			t.Fatalf("copy --catch-up %s → %s: exit %d\n%s%s", chain[i], chain[i+1], r.code, r.stdout, r.stderr)
		}
		if got := exportOf(t, chain[i+1]); got != want {
			t.Fatalf("after copy --catch-up the exports of %s and %s differ:\n%s", chain[0], chain[i+1], lineDiff(want, got))
		}
	}
}

// lineDiff lists the lines only one of two exports has.
func lineDiff(src, dst string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	a, b := in(src), in(dst)
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if !b[l] {
			out = append(out, "only in the source:      "+l)
		}
	}
	for _, l := range strings.Split(dst, "\n") {
		if !a[l] {
			out = append(out, "only in the destination: "+l)
		}
	}
	return strings.Join(out, "\n")
}

// hasFeed reports whether url's backend has a change feed.
func hasFeed(t *testing.T, url string) bool {
	return openE2E(t, url).Capabilities().ChangeFeed
}

func TestCopyFollowEndToEnd(t *testing.T) {
	run := 6 * time.Second
	if testing.Short() {
		run = 2 * time.Second
	}
	moto := "dynamodb://?region=" + mototest.Region + "&endpoint=" + mototest.Start(t)
	// file store (served by an emulator) → Tablestore emulator (over the
	// local engine) → moto: each hop's source feed is the emulator's
	// Stream API.
	t.Run("FileToEmulatorToMoto", func(t *testing.T) {
		file := startEmulator(t, fileURL(t))
		if !hasFeed(t, file) {
			t.Fatal("the Tablestore adapter declares no change feed: the emulator cannot be this chain's feed source")
		}
		followChain(t, []string{file, startEmulator(t, "mem://"), moto + "&table_prefix=a."}, run)
	})
	// moto as the source (DynamoDB Streams) → the emulator over a file
	// store.
	t.Run("MotoToEmulatorOverFile", func(t *testing.T) {
		followChain(t, []string{moto + "&table_prefix=b.", startEmulator(t, fileURL(t))}, run)
	})
}
