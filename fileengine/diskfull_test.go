//go:build linux

package fileengine_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

const (
	fullDirEnv   = "FILEENGINE_DISKFULL_DIR"
	fullLimitEnv = "FILEENGINE_DISKFULL_LIMIT"
)

// TestDiskFullChild is TestDiskFull's child: it lowers its file-size limit
// (RLIMIT_FSIZE: a write past it fails with EFBIG, as a write to a full
// file system fails with ENOSPC, with no root needed), opens the store and
// writes 1 KB rows one at a time until a write fails, printing
// "ACK <i>" after each acknowledged write and "ERR <text>" for the error.
func TestDiskFullChild(t *testing.T) {
	dir := os.Getenv(fullDirEnv)
	if dir == "" {
		t.Skip("only run as TestDiskFull's child process")
	}
	limit, err := strconv.ParseUint(os.Getenv(fullLimitEnv), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := fileengine.Open(dir, nil)
	if err != nil {
		fmt.Println("OPENERR", err)
		os.Exit(3)
	}
	if limit > 0 { // 0: the directory is on a small file system
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			t.Fatal(err)
		}
	}
	db := tablekit.NewClient(eng)
	tab := db.Table("t")
	ctx := context.Background()
	val := tablekit.String(strings.Repeat("x", 1000))
	for i := 0; ; i++ {
		err := tab.PutRow(ctx, tablekit.Key("k", tablekit.Integer(int64(i))), []tablekit.Column{{Name: "v", Value: val}})
		if err != nil {
			var te *tablekit.Error
			fmt.Printf("ERR typed=%v unavailable=%v efbig=%v enospc=%v: %v\n", errors.As(err, &te), errors.Is(err, tablekit.ErrUnavailable), errors.Is(err, syscall.EFBIG), errors.Is(err, syscall.ENOSPC), err)
			// Later writes fail at once, the same way; reads still work;
			// Close returns.
			err2 := tab.PutRow(ctx, tablekit.Key("k", tablekit.Integer(-2)), []tablekit.Column{{Name: "v", Value: val}})
			fmt.Printf("ERR2 same=%v\n", err2 != nil && err2.Error() == err.Error())
			_, ok, rerr := tab.GetRow(ctx, tablekit.Key("k", tablekit.Integer(0)))
			fmt.Printf("READ ok=%v err=%v\n", ok, rerr)
			done := make(chan error)
			go func() { done <- db.Close() }()
			select {
			case err := <-done:
				fmt.Printf("CLOSED %v\n", err)
			case <-time.After(10 * time.Second):
				fmt.Println("CLOSE HANGS")
			}
			os.Exit(0)
		}
		fmt.Println("ACK", i)
	}
}

// TestDiskFull: the store's writes fail for lack of space. Whatever the
// engine does then (a typed error or, if pebble finds the failure fatal, a
// panic), every write it acknowledged before is there when the store is
// opened again with room, and the store takes writes again.
//
// The file-size limit stands in for a full file system. To run it on a
// real one, mount a small one and name an empty directory on it (as root:
// mount -t tmpfs -o size=6m tmpfs /mnt/small):
//
//	FILEENGINE_DISKFULL_FS=/mnt/small/store go test -run 'TestDiskFull$' -v ./fileengine/
func TestDiskFull(t *testing.T) {
	dir, limit := t.TempDir(), 1<<20
	if fs := os.Getenv("FILEENGINE_DISKFULL_FS"); fs != "" {
		dir, limit = fs, 0
	}
	eng, err := fileengine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(eng)
	if err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fullDirEnv+"="+dir, fullLimitEnv+"="+strconv.Itoa(limit))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	acked := -1
	var report []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "ACK "); ok {
			acked, _ = strconv.Atoi(n)
		} else if !strings.HasPrefix(line, "=== ") && !strings.HasPrefix(line, "--- ") {
			report = append(report, line)
		}
	}
	t.Logf("child: %d writes acknowledged, exit %v:\n%s", acked+1, runErr, strings.Join(report, "\n"))
	if runErr != nil {
		s := stderr.String()
		t.Fatalf("the child failed: %v\n%s", runErr, s[max(0, len(s)-3000):])
	}
	all := strings.Join(report, "\n")
	cause := "efbig=true"
	if limit == 0 {
		cause = "" // ENOSPC, or whichever error the file system gives
	}
	for _, want := range []string{"ERR typed=true unavailable=true " + cause, "ERR2 same=true", "READ ok=true err=<nil>", "CLOSED "} {
		if !strings.Contains(all, want) {
			t.Errorf("the child's report lacks %q", want)
		}
	}
	if acked < 10 {
		t.Fatalf("the child acknowledged %d writes before the disk was full: %s", acked+1, out)
	}

	if limit == 0 {
		// Still full: Open refuses it (pebble's own Open would wait for ever
		// for the flush of the replayed log), typed, naming the directory.
		_, err := fileengine.Open(dir, nil)
		if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, tablekit.ErrUnavailable) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("Open of a store on a full file system: %v; want ENOSPC and ErrUnavailable naming the directory", err)
		}
		t.Logf("Open on the full file system: %v", err)
		return // making room is the operator's part
	}

	// Reopen with room: every acknowledged write is there.
	eng, err = fileengine.Open(dir, nil)
	if err != nil {
		t.Fatal("reopen after the full disk:", err)
	}
	db = tablekit.NewClient(eng)
	defer db.Close()
	tab := db.Table("t")
	ctx := context.Background()
	n := 0
	for r, err := range tab.Rows(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := r.Key[0].Value.Int(); k != int64(n) {
			t.Fatalf("row %d has key %d", n, k)
		}
		n++
	}
	if n < acked+1 {
		t.Fatalf("after reopening, %d rows; %d were acknowledged", n, acked+1)
	}
	if err := tab.PutRow(ctx, tablekit.Key("k", tablekit.Integer(-1)), nil); err != nil {
		t.Fatal("a write after reopening:", err)
	}
}
