package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Copy keeps every version, every type and the table options, even for
// versions far outside the destination's default version window and a
// TTL set, and copies all tables when none is named.
func TestCopyKeepsVersionsTypesAndOptions(t *testing.T) {
	t.Parallel()
	src, dst := seededURL(t), fileURL(t)
	// A second table with a TTL: its 2001 versions stay visible (30 years).
	exp := ok(t, src, "export", "t")
	exp2 := strings.Replace(exp, `"table":"t"`, `"table":"t2"`, 1)
	exp2 = strings.Replace(exp2, `"ttl":-1`, `"ttl":946080000`, 1)
	if r := tk(t, src, exp2, "import"); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	want2 := ok(t, src, "export", "t2")
	if !strings.Contains(want2, `"ttl":946080000`) {
		t.Fatalf("t2 has no TTL:\n%s", want2)
	}
	cp := filepath.Join(t.TempDir(), "cp.json")
	out := ok(t, "", "copy", src, dst, "--checkpoint", cp)
	for _, want := range []string{"t: 6 rows copied and verified", "t2: 6 rows copied and verified"} {
		if !strings.Contains(out, want) {
			t.Errorf("copy printed %q, want %q", out, want)
		}
	}
	if got := ok(t, dst, "export", "t"); got != exp {
		t.Errorf("destination's t differs:\n%s\nwant\n%s", got, exp)
	}
	if got := ok(t, dst, "export", "t2"); got != want2 {
		t.Errorf("destination's t2 differs:\n%s\nwant\n%s", got, want2)
	}
	// Run again: nothing to do.
	if out := ok(t, "", "copy", src, dst, "--checkpoint", cp); !strings.Contains(out, "t: done already (6 rows") {
		t.Errorf("second copy printed %q", out)
	}
	// Without a checkpoint, the tables exist: refused unless --existing.
	if r := tk(t, "", "", "copy", src, dst, "--table", "t"); r.code != 1 || !strings.Contains(r.stderr, "--existing") {
		t.Errorf("copy onto an existing table: %+v", r)
	}
	// A checkpoint of another copy is refused.
	if r := tk(t, "", "", "copy", src, fileURL(t), "--checkpoint", cp); r.code != 1 || !strings.Contains(r.stderr, "belongs to the copy of") {
		t.Errorf("copy with a foreign checkpoint: %+v", r)
	}
	// Verification catches a row the destination has and the source has not.
	ok(t, dst, "put", "t", "id=zzz,n=2,bin=0x", "--col", "x=i:1")
	r := tk(t, "", "", "copy", src, dst, "--table", "t", "--existing")
	if r.code != 1 || !strings.Contains(r.stderr, "1 row does not match: row id=zzz,n=2,bin=0x at the destination is not in the source") {
		t.Errorf("copy onto a table with an extra row: %+v", r)
	}
}

// writeBigExport writes an export of table big with n rows, each with two
// versions of an Integer, a Double, a String and a Binary, ~1 KB a row.
func writeBigExport(t testing.TB, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, `{"table":"big","key":[{"name":"k","type":"String"},{"name":"n","type":"Integer"}],"options":{"ttl":-1,"max_versions":2,"max_version_offset":2147483647}}`)
	pad := strings.Repeat("x", 900)
	for i := range n {
		fmt.Fprintf(f, `{"key":{"k":{"s":"k\u0000%06d"},"n":{"i":%d}},"columns":{"d":[{"ts":1000000000000,"d":%d.5}],"i":[{"ts":1000000001000,"i":%d},{"ts":1000000000000,"i":%d}],"p":[{"ts":1000000000000,"s":"%s"}]}}`+"\n",
			i, -i, i, i*3, i*2, pad)
	}
}

// A copy killed with SIGKILL half-way and run again with its checkpoint
// ends with every row, none lost or duplicated, and does not start over.
func TestCopyResumesAfterKill(t *testing.T) {
	t.Parallel()
	const n = 12000
	src, dst := fileURL(t), fileURL(t)
	dir := t.TempDir()
	exp := filepath.Join(dir, "big.jsonl")
	writeBigExport(t, exp, n)
	ok(t, src, "import", "-i", exp)
	cp := filepath.Join(dir, "cp.json")

	cmd := exec.Command(tkBinary, "copy", src, dst, "--checkpoint", cp, "--max-rate", "3000", "--batch", "50", "--workers", "2")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var before int64
	deadline := time.Now().Add(60 * time.Second)
	for before < n/4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		before = checkpointRows(t, cp, "big")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	before = checkpointRows(t, cp, "big")
	if before < n/4 || before >= n {
		t.Fatalf("killed after %d of %d rows; want a copy killed half-way", before, n)
	}
	out := ok(t, "", "copy", src, dst, "--checkpoint", cp)
	if want := fmt.Sprintf("big: resuming after %d rows", before); !strings.Contains(out, want) {
		t.Errorf("second run printed %q, want %q", out, want)
	}
	if want := fmt.Sprintf("big: %d rows copied and verified", n); !strings.Contains(out, want) {
		t.Errorf("second run printed %q, want %q", out, want)
	}
	if got := checkpointRows(t, cp, "big"); got != n {
		t.Errorf("checkpoint counts %d rows, want %d (none counted twice)", got, n)
	}
	a, b := ok(t, src, "export", "big"), ok(t, dst, "export", "big")
	if a != b {
		t.Fatalf("the destination differs from the source after the resumed copy")
	}
	if got := strings.Count(b, "\n"); got != n+1 {
		t.Fatalf("destination export has %d lines, want %d", got, n+1)
	}
}

// checkpointRows reads the rows a checkpoint file records for table (0
// before it exists).
func checkpointRows(t *testing.T, path, table string) int64 {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var cp checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		t.Fatalf("checkpoint %s: %v\n%s", path, err, b)
	}
	if tc := cp.Tables[table]; tc != nil {
		return tc.Rows
	}
	return 0
}

// Ctrl-C during a copy sets the destination's options back (not the
// widened ones the copy writes with) and prints the command that goes on;
// that command, pasted into a shell, finishes the copy.
func TestCopyInterruptPrintsResume(t *testing.T) {
	t.Parallel()
	const n = 3000
	src, dst := fileURL(t), fileURL(t)
	dir := t.TempDir()
	exp := filepath.Join(dir, "big.jsonl")
	writeBigExport(t, exp, n)
	b, err := os.ReadFile(exp)
	if err != nil {
		t.Fatal(err)
	}
	// A 30-year TTL: the 2001 versions stay visible, and differ from the copy's -1.
	if err := os.WriteFile(exp, []byte(strings.Replace(string(b), `"ttl":-1`, `"ttl":946080000`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ok(t, src, "import", "-i", exp)
	cp := filepath.Join(dir, "cp.json")
	args := []string{"copy", src, dst, "--checkpoint", cp, "--max-rate", "1000", "--batch", "50", "--workers", "2"}
	cmd := exec.Command(tkBinary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for checkpointRows(t, cp, "big") < n/4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("interrupted copy: exit %d, stderr %s", cmd.ProcessState.ExitCode(), stderr.String())
	}
	rows := checkpointRows(t, cp, "big")
	if rows >= n {
		t.Fatalf("the copy finished (%d rows) before it was interrupted", rows)
	}
	resume := commandLine(append([]string{"tablekit"}, args...))
	want := fmt.Sprintf("tablekit copy: interrupted after %d rows of table \"big\" (its options at the destination are set back; the checkpoint keeps the place); to go on, run: %s\n", rows, resume)
	if stderr.String() != want {
		t.Fatalf("interrupted copy printed\n%s\nwant\n%s", stderr.String(), want)
	}
	if got := options(t, nil, dst, "big"); got.TTL != 946080000 || got.MaxVersionOffset != 2147483647 {
		t.Fatalf("after Ctrl-C the destination's options are %+v, want the source's", got)
	}
	// The printed command, run by a shell, finishes the copy.
	sh := exec.Command("sh", "-c", strings.Replace(resume, "tablekit", tkBinary, 1))
	out, err := sh.CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("big: resuming after %d rows", rows)) || !strings.Contains(string(out), fmt.Sprintf("big: %d rows copied and verified", n)) {
		t.Fatalf("the printed command: %v\n%s", err, out)
	}
}

// A copy into a table that exists at the destination is refused, saying
// before anything is written that --existing replaces the rows whose key
// the source has too; the command it prints carries --existing, and the
// same command run again (a checkpoint given) is refused again, never
// taken as a resumed copy that overwrites.
func TestCopyIntoExistingTableSaysWhatExistingDoes(t *testing.T) {
	t.Parallel()
	src, dst := fileURL(t), fileURL(t)
	for _, u := range []string{src, dst} {
		ok(t, u, "create", "t", "--key", "id:String")
	}
	ok(t, src, "put", "t", "id=a", "--col", "x=s:source")
	ok(t, dst, "put", "t", "id=a", "--col", "x=s:destination")
	cp := filepath.Join(t.TempDir(), "cp.json")
	args := []string{"copy", src, dst, "--table", "t", "--checkpoint", cp}
	for run := 1; run <= 2; run++ {
		r := tk(t, "", "", args...)
		if r.code != 1 {
			t.Fatalf("run %d of a copy onto an existing table: %+v", run, r)
		}
		for _, want := range []string{"replaces every row whose key the source has too", "to go on, run: " + commandLine(append([]string{"tablekit"}, args...)) + " --existing"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("run %d: stderr %q, want it to say %q", run, r.stderr, want)
			}
		}
		if got := ok(t, dst, "get", "t", "id=a"); !strings.Contains(got, "destination") {
			t.Fatalf("run %d refused, yet the destination's row is now %s", run, got)
		}
	}
	ok(t, "", append(args, "--existing")...)
	if got := ok(t, dst, "get", "t", "id=a"); !strings.Contains(got, "source") {
		t.Errorf("after copy --existing the destination's row is %s, want the source's", got)
	}
}

// copy creates a destination table with the source's change feed on (and
// its retention), and without one when the source has none.
func TestCopyCarriesTheFeedSetting(t *testing.T) {
	t.Parallel()
	src, dst := fileURL(t), fileURL(t)
	ok(t, src, "create", "fed", "--key", "id:String")
	ok(t, src, "create", "plain", "--key", "id:String")
	ok(t, src, "feed", "fed", "on")
	ok(t, "", "copy", src, dst)
	if got := ok(t, dst, "feed", "fed"); !strings.Contains(got, `"enabled":true`) {
		t.Errorf("the copy of a table with a feed: %s", got)
	}
	if got := ok(t, dst, "feed", "plain"); !strings.Contains(got, `"enabled":false`) {
		t.Errorf("the copy of a table without a feed: %s", got)
	}
}
