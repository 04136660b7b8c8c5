package fileengine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/internal/testkit/batchcheck"
)

var ctx = context.Background()

func mustOpen(t *testing.T, dir string) *fileengine.Engine {
	t.Helper()
	e, err := fileengine.Open(dir, nil)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return e
}

func intKey(i int) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.Integer(int64(i))) }

// TestReopen writes rows (with versions), changes a table's options,
// closes, and finds everything again after Open.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db := tablekit.NewClient(mustOpen(t, dir), tablekit.WithClock(clock))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}))
	must(db.CreateTable(ctx, tablekit.TableMeta{Name: "gone", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}))
	must(db.UpdateTable(ctx, "t", tablekit.TableOptions{MaxVersions: 3}))
	tab := db.Table("t")
	now := clock.Now().UnixMilli()
	for i := range 50 {
		must(tab.PutRow(ctx, intKey(i), []tablekit.Column{
			{Name: "s", Value: tablekit.String(fmt.Sprint("row", i)), Version: now - 2},
			{Name: "b", Value: tablekit.Binary([]byte{0, byte(i), 0xff})},
			{Name: "d", Value: tablekit.Double(float64(i) / 3)},
			{Name: "f", Value: tablekit.Boolean(i%2 == 0)},
		}))
		must2[tablekit.UpdateResult](t)(tab.UpdateRow(ctx, intKey(i), []tablekit.Change{tablekit.PutAt("s", tablekit.String("newer"), now-1), tablekit.Increment("n", int64(i))}))
	}
	must(tab.PutRow(ctx, intKey(1000), nil)) // a key-only row
	must(db.Table("gone").PutRow(ctx, intKey(1), []tablekit.Column{{Name: "x", Value: tablekit.Integer(1)}}))
	must(db.DeleteTable(ctx, "gone"))
	before, err := db.DescribeTable(ctx, "t")
	must(err)
	readAll := func(db *tablekit.Client) []tablekit.Row {
		var rows []tablekit.Row
		for r, err := range db.Table("t").Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax), tablekit.MaxVersions(3)) {
			must(err)
			rows = append(rows, r)
		}
		return rows
	}
	rowsBefore := readAll(db)
	if len(rowsBefore) != 51 {
		t.Fatalf("%d rows before reopening, want 51", len(rowsBefore))
	}
	must(db.Close())

	db = tablekit.NewClient(mustOpen(t, dir), tablekit.WithClock(clock))
	defer db.Close()
	after, err := db.DescribeTable(ctx, "t")
	must(err)
	if after.Generation != 2 || after.Options.MaxVersions != 3 || after.Incarnation != before.Incarnation || !slices.Equal(after.Key, before.Key) || after.Options != before.Options {
		t.Errorf("meta after reopening: %+v, before: %+v", after, before)
	}
	names, err := db.ListTables(ctx)
	must(err)
	if !slices.Equal(names, []string{"t"}) {
		t.Errorf("tables after reopening: %q, want [t]", names)
	}
	rowsAfter := readAll(db)
	if fmt.Sprint(rowsAfter) != fmt.Sprint(rowsBefore) {
		t.Errorf("rows differ after reopening:\n%v\n%v", rowsAfter, rowsBefore)
	}
	r, found, err := db.Table("t").GetRow(ctx, intKey(7), tablekit.MaxVersions(3))
	must(err)
	if vs := r.Versions("s"); !found || len(vs) != 2 || vs[0].Version != now-1 || vs[1].Version != now-2 {
		t.Errorf("row 7's versions of s after reopening: %v", vs)
	}
	if n, _ := r.Get("n"); !n.Equal(tablekit.Integer(7)) {
		t.Errorf("row 7's n = %v, want Integer(7)", n)
	}
	// The stored Generation still guards the rows: the meta is the same, so
	// a write goes through.
	must(db.Table("t").PutRow(ctx, intKey(7), []tablekit.Column{{Name: "s", Value: tablekit.String("again")}}))
	// A table created again under the deleted name starts empty.
	must(db.CreateTable(ctx, tablekit.TableMeta{Name: "gone", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}))
	if _, found, err := db.Table("gone").GetRow(ctx, intKey(1)); err != nil || found {
		t.Errorf("row of the deleted table: found=%v err=%v", found, err)
	}
}

func must2[T any](t *testing.T) func(T, error) {
	return func(_ T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSecondOpen: a directory is opened by one engine at a time.
func TestSecondOpen(t *testing.T) {
	dir := t.TempDir()
	e := mustOpen(t, dir)
	_, err := fileengine.Open(dir, nil)
	if !errors.Is(err, fileengine.ErrLocked) || !errors.Is(err, tablekit.ErrUnavailable) || !strings.Contains(err.Error(), dir) {
		t.Errorf("second Open: %v; want ErrLocked and ErrUnavailable naming %s", err, dir)
	}
	var te *tablekit.Error
	if !errors.As(err, &te) {
		t.Errorf("second Open: %T is not a *tablekit.Error", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = mustOpen(t, dir) // the lock was released
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenErrors: a file, an unwritable directory, a missing store with
// MustExist.
func TestOpenErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := fileengine.Open(file, nil)
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), file) {
		t.Errorf("Open(file): %v; want ErrInvalidArgument naming the path", err)
	}
	_, err = fileengine.Open(filepath.Join(file, "sub"), nil)
	if err == nil || errors.Is(err, tablekit.ErrUnavailable) || !strings.Contains(err.Error(), file) {
		t.Errorf("Open(file/sub): %v; want a typed, non-retryable error naming the path", err)
	}

	ro := t.TempDir()
	if os.Geteuid() == 0 {
		ro = "/sys/kernel" // root writes anywhere chmod allows; sysfs refuses it
	} else if err := os.Chmod(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	_, err = fileengine.Open(ro, nil)
	if !errors.Is(err, tablekit.ErrPermissionDenied) || !strings.Contains(err.Error(), ro) {
		t.Errorf("Open(read-only %s): %v; want ErrPermissionDenied naming the path", ro, err)
	}

	missing := filepath.Join(t.TempDir(), "missing")
	_, err = fileengine.Open(missing, &fileengine.Options{MustExist: true})
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Open(missing, MustExist): %v; want fs.ErrNotExist and ErrInvalidArgument naming the path", err)
	}
	empty := t.TempDir()
	_, err = fileengine.Open(empty, &fileengine.Options{MustExist: true})
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("Open(empty, MustExist): %v; want fs.ErrNotExist and ErrInvalidArgument", err)
	}
	e := mustOpen(t, missing) // without MustExist, Open creates it
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = fileengine.Open(missing, &fileengine.Options{MustExist: true})
	if err != nil {
		t.Fatalf("Open(existing, MustExist): %v", err)
	}
	_ = e.Close()
}

// TestAfterClose: calls after Close fail with ErrUnavailable, never panic.
func TestAfterClose(t *testing.T) {
	e := mustOpen(t, t.TempDir())
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}, Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}, Incarnation: "0123456789abcdef", Generation: 1}
	if err := e.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	errs := []error{
		e.CreateTable(ctx, meta),
		e.DeleteTable(ctx, "t"),
		e.Checkpoint(ctx, t.TempDir()+"/cp"),
	}
	_, err := e.DescribeTable(ctx, "t")
	errs = append(errs, err)
	_, err = e.ListTables(ctx)
	errs = append(errs, err)
	_, err = e.GetRow(ctx, &tablekit.GetRowRequest{Meta: meta, Key: intKey(1), Read: tablekit.ReadSpec{MaxVersions: 1}})
	errs = append(errs, err)
	_, err = e.GetRange(ctx, &tablekit.GetRangeRequest{Meta: meta, Start: tablekit.Key("id", tablekit.InfMin), End: tablekit.Key("id", tablekit.InfMax), Limit: 10, Read: tablekit.ReadSpec{MaxVersions: 1}})
	errs = append(errs, err)
	_, err = e.Write(ctx, &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WritePut, Key: intKey(1)})
	errs = append(errs, err)
	_, err = e.BatchWriteRow(ctx, []*tablekit.WriteRequest{{Meta: meta, Kind: tablekit.WritePut, Key: intKey(1)}})
	errs = append(errs, err)
	_, err = e.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: meta, Options: meta.Options})
	errs = append(errs, err)
	for i, err := range errs {
		if !errors.Is(err, tablekit.ErrUnavailable) {
			t.Errorf("call %d after Close: %v; want ErrUnavailable", i, err)
		}
	}
}

// fill writes n rows of incompressible ~1 KB values through a client and
// returns them by key.
func fill(t *testing.T, db *tablekit.Client, n int) map[int64]string {
	t.Helper()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	state := uint64(42)
	for i := range n {
		b := make([]byte, 1000)
		for j := range b {
			state = state*6364136223846793005 + 1442695040888963407
			b[j] = byte(state >> 56)
		}
		want[int64(i)] = string(b)
		if err := db.Table("t").PutRow(ctx, intKey(i), []tablekit.Column{{Name: "v", Value: tablekit.Binary(b)}}); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

// readBack opens dir and reads every row, checking each against want. It
// returns the keys found and the first error met (on Open or on a read);
// a row with other data than was written is a test failure.
func readBack(t *testing.T, dir string, want map[int64]string) (found []int64, err error) {
	t.Helper()
	e, err := fileengine.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	db := tablekit.NewClient(e)
	defer db.Close()
	for r, err := range db.Table("t").Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			return found, err
		}
		id, _ := r.Key[0].Value.Int()
		v, _ := r.Get("v")
		got, _ := v.BytesString()
		if got != want[id] {
			t.Errorf("row %d: wrong data returned after corruption", id)
		}
		found = append(found, id)
	}
	for id := range want { // point reads too: a different path through pebble
		r, ok, err := db.Table("t").GetRow(ctx, intKey(int(id)))
		if err != nil {
			return found, err
		}
		if ok {
			v, _ := r.Get("v")
			if got, _ := v.BytesString(); got != want[id] {
				t.Errorf("row %d: wrong data returned by GetRow after corruption", id)
			}
		}
	}
	return found, nil
}

// files returns the paths in dir whose names end with suffix.
func files(t *testing.T, dir, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x10
	if _, err := f.WriteAt(b[:], off); err != nil {
		t.Fatal(err)
	}
}

// checkCorruptionError checks that err is a typed error matching
// ErrCorrupt.
func checkCorruptionError(t *testing.T, what string, err error) {
	t.Helper()
	var te *tablekit.Error
	switch {
	case err == nil:
		t.Errorf("%s: no error: the corruption went undetected", what)
	case !errors.As(err, &te):
		t.Errorf("%s: %v (%T) is not a *tablekit.Error", what, err, err)
	case !errors.Is(err, fileengine.ErrCorrupt):
		t.Errorf("%s: %v does not match ErrCorrupt", what, err)
	}
}

// TestCorruptSSTable flips a byte in the first data block of a table
// file, then truncates another copy: both are detected on Open or on the
// read that meets them, never returned as data.
func TestCorruptSSTable(t *testing.T) {
	dir := t.TempDir()
	db := tablekit.NewClient(mustOpen(t, dir))
	want := fill(t, db, 300)
	if err := db.Close(); err != nil { // Close flushes: the rows are in sstables
		t.Fatal(err)
	}
	ssts := files(t, dir, ".sst")
	if len(ssts) == 0 {
		t.Fatal("no sstable after Close")
	}
	flipped := t.TempDir()
	copyDir(t, dir, flipped)
	for _, p := range files(t, flipped, ".sst") {
		flipByte(t, p, 200)
	}
	_, err := readBack(t, flipped, want)
	checkCorruptionError(t, "bit flip", err)

	truncated := t.TempDir()
	copyDir(t, dir, truncated)
	for _, p := range files(t, truncated, ".sst") {
		st, _ := os.Stat(p)
		if err := os.Truncate(p, st.Size()/2); err != nil {
			t.Fatal(err)
		}
	}
	_, err = readBack(t, truncated, want)
	checkCorruptionError(t, "truncated sstable", err)

	found, err := readBack(t, dir, want) // the original is intact
	if err != nil || len(found) != len(want) {
		t.Errorf("intact copy: %d rows, %v", len(found), err)
	}
}

// TestCorruptWAL takes the directory of an engine that has not closed (as
// a crash leaves it: synced rows in the WAL only), flips a byte early in
// the WAL of one copy and truncates the WAL of another. A flip followed by
// valid records is corruption (pebble reads ahead to tell it from a torn
// tail) and fails Open; a truncation is a torn tail: the rows before it
// come back, intact and in write order, and none after it.
func TestCorruptWAL(t *testing.T) {
	dir := t.TempDir()
	e := mustOpen(t, dir)
	db := tablekit.NewClient(e)
	want := fill(t, db, 300)
	crashed := t.TempDir()
	copyDir(t, dir, crashed) // a crash image: nothing was flushed
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if ssts := files(t, crashed, ".sst"); len(ssts) != 0 {
		t.Fatalf("the crash image already has sstables %q: the rows are not in the WAL alone", ssts)
	}
	logs := files(t, crashed, ".log")
	if len(logs) == 0 {
		t.Fatal("no WAL in the crash image")
	}
	// Copies first: opening a crash image replays its WAL into a table file.
	flipped, truncated := t.TempDir(), t.TempDir()
	copyDir(t, crashed, flipped)
	copyDir(t, crashed, truncated)
	found, err := readBack(t, crashed, want)
	if err != nil || len(found) != len(want) {
		t.Fatalf("uncorrupted crash image: %d rows of %d, %v", len(found), len(want), err)
	}

	for _, p := range files(t, flipped, ".log") {
		st, _ := os.Stat(p)
		if st.Size() > 64<<10 {
			flipByte(t, p, 40<<10)
		}
	}
	_, err = readBack(t, flipped, want)
	checkCorruptionError(t, "WAL bit flip", err)

	// Only the newest WAL may end torn; a cut older one is corruption.
	logs = files(t, truncated, ".log")
	newest := slices.Max(logs) // zero-padded numbers sort as numbers
	st, _ := os.Stat(newest)
	if err := os.Truncate(newest, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	found, err = readBack(t, truncated, want)
	if err != nil {
		t.Fatalf("truncated WAL: %v", err)
	}
	if len(found) == 0 || len(found) >= len(want) {
		t.Errorf("truncated WAL: %d rows of %d came back; want a proper, non-empty prefix", len(found), len(want))
	}
	for i, id := range found {
		if id != int64(i) {
			t.Errorf("truncated WAL: row %d came back but row %d did not: not a prefix of the writes", id, i)
			break
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if ent.IsDir() || ent.Name() == "LOCK" {
			continue
		}
		src, err := os.Open(filepath.Join(from, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(to, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		if err := dst.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckpoint takes an online checkpoint while writes continue, and
// opens it: every write acknowledged before the checkpoint is there.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	e := mustOpen(t, dir)
	db := tablekit.NewClient(e)
	defer db.Close()
	want := fill(t, db, 100)
	stop := make(chan struct{})
	done := make(chan error)
	go func() { // writes go on during the checkpoint
		for i := 1000; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := db.Table("t").PutRow(ctx, intKey(i), []tablekit.Column{{Name: "v", Value: tablekit.Binary([]byte("later"))}}); err != nil {
				done <- err
				return
			}
		}
	}()
	cp := filepath.Join(t.TempDir(), "backup")
	err := e.Checkpoint(ctx, cp)
	close(stop)
	if werr := <-done; werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	c := tablekit.NewClient(mustOpen(t, cp))
	defer c.Close()
	for id, v := range want {
		r, ok, err := c.Table("t").GetRow(ctx, intKey(int(id)))
		if err != nil || !ok {
			t.Fatalf("checkpoint: row %d: found=%v err=%v", id, ok, err)
		}
		got, _ := r.Get("v")
		if s, _ := got.BytesString(); s != v {
			t.Fatalf("checkpoint: row %d has other data", id)
		}
	}
	if err := e.Checkpoint(ctx, cp); err == nil {
		t.Error("a checkpoint into an existing directory succeeded")
	}
}

// BatchGetRow returns what GetRow returns, request by request.
func TestBatchGetRowMatchesGetRow(t *testing.T) {
	e, err := fileengine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	batchcheck.Run(t, e)
}
