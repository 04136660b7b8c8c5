package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// writeSource applies writes of every kind to table t at url, in this
// process (the store is not open elsewhere while it runs).
func writeSource(t *testing.T, url string, f func(ctx context.Context, tbl *tablekit.Table) error) {
	t.Helper()
	ctx := context.Background()
	db, err := tablekit.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := f(ctx, db.Table("t")); err != nil {
		t.Fatal(err)
	}
}

func feedLines(t *testing.T, out string) []feedLine {
	t.Helper()
	var ls []feedLine
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		if s == "" {
			continue
		}
		var l feedLine
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("tail printed %q: %v", s, err)
		}
		ls = append(ls, l)
	}
	return ls
}

// tail prints each change as a JSON line, and with --checkpoint goes on
// where the last run stopped.
func TestTail(t *testing.T) {
	t.Parallel()
	url := fileURL(t)
	ok(t, url, "create", "t", "--key", "id:String")
	if r := tk(t, url, "", "tail", "t"); r.code != 1 || !strings.Contains(r.stderr, "no change feed") {
		t.Fatalf("tail of a table without a feed: %+v", r)
	}
	if out := ok(t, url, "feed", "t", "on"); !strings.Contains(out, `"enabled":true,"retention":"24h0m0s"`) {
		t.Fatalf("feed t on printed %q", out)
	}
	ok(t, url, "put", "t", "id=a", "--col", "n=i:1")
	writeSource(t, url, func(ctx context.Context, tbl *tablekit.Table) error {
		_, err := tbl.UpdateRow(ctx, tablekit.Key("id", tablekit.String("a")), []tablekit.Change{tablekit.Increment("n", 2), tablekit.DeleteColumn("x")})
		return err
	})
	ok(t, url, "delete", "t", "id=a")
	cp := filepath.Join(t.TempDir(), "tail.json")
	ls := feedLines(t, ok(t, "", "tail", url, "t", "--checkpoint", cp))
	if len(ls) != 3 || ls[0].Kind != "put" || ls[1].Kind != "update" || ls[2].Kind != "delete" {
		t.Fatalf("tail printed %+v, want put, update, delete", ls)
	}
	if c := ls[0].Changes; len(c) != 1 || c[0].Op != "put" || c[0].Version == 0 || c[0].Value == nil || *c[0].Value.I != 1 {
		t.Errorf("put's changes: %+v", c)
	}
	if c := ls[1].Changes; len(c) != 2 || c[0].Op != "put" || *c[0].Value.I != 3 || c[1].Op != "delete_column" || c[1].Column != "x" {
		t.Errorf("update's changes (increment by 2 of 1, delete column x): %+v", c)
	}
	if k := ls[2].Key["id"]; k.S == nil || *k.S != "a" {
		t.Errorf("delete's key: %+v", ls[2].Key)
	}
	ok(t, url, "put", "t", "id=b")
	ls = feedLines(t, ok(t, "", "tail", url, "t", "--checkpoint", cp))
	if len(ls) != 1 || *ls[0].Key["id"].S != "b" {
		t.Fatalf("tail from its checkpoint printed %+v, want only the put of b", ls)
	}
	if ls = feedLines(t, ok(t, url, "tail", "t", "--checkpoint", cp)); len(ls) != 0 {
		t.Fatalf("tail with nothing new printed %+v", ls)
	}
	if out := ok(t, url, "feed", "t", "off"); !strings.Contains(out, `"enabled":false`) || !strings.Contains(out, `"ended":true`) {
		t.Fatalf("feed t off printed %q", out)
	}
}

// copy --catch-up copies a table and applies its feed: the records
// written before and during the copy are applied over the copied rows
// (twice, for those) and the exports are equal; run again it applies only
// what is new; copy --follow stops cleanly on Ctrl-C.
func TestCopyFollow(t *testing.T) {
	t.Parallel()
	src, dst := fileURL(t), fileURL(t)
	ok(t, src, "create", "t", "--key", "id:String,n:Integer", "--max-versions", "3")
	ok(t, src, "feed", "t", "on")
	writes := func(round int) {
		writeSource(t, src, func(ctx context.Context, tbl *tablekit.Table) error {
			for i := range 20 {
				k := tablekit.Key("id", tablekit.String("k")).Add("n", tablekit.Integer(int64(i)))
				if err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(round*100 + i))}}); err != nil {
					return err
				}
				if _, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Increment("c", 1), tablekit.Put("s", tablekit.String("x"))}); err != nil {
					return err
				}
				if i%5 == round%5 {
					if err := tbl.DeleteRow(ctx, k); err != nil {
						return err
					}
				}
				if i%7 == 0 {
					if _, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.DeleteColumn("s")}); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	writes(1)
	cp := filepath.Join(t.TempDir(), "cp.json")
	out := ok(t, "", "copy", src, dst, "--checkpoint", cp, "--catch-up")
	if !strings.Contains(out, "t: followed") || !strings.Contains(out, "caught up") {
		t.Errorf("copy --catch-up printed %q", out)
	}
	if a, b := ok(t, src, "export", "t"), ok(t, dst, "export", "t"); a != b {
		t.Fatalf("after copy --catch-up the exports differ:\n%s\nvs\n%s", a, b)
	}
	writes(2)
	out = ok(t, "", "copy", src, dst, "--checkpoint", cp, "--catch-up")
	if !strings.Contains(out, "t: followed 47 change records, caught up") {
		t.Errorf("second copy --catch-up printed %q, want only round 2's 47 records (20 puts, 20 updates, 4 deletes, 3 column deletes)", out)
	}
	if a, b := ok(t, src, "export", "t"), ok(t, dst, "export", "t"); a != b {
		t.Fatalf("after the second copy --catch-up the exports differ:\n%s\nvs\n%s", a, b)
	}
	// --follow waits until interrupted, saving its place as it goes, and
	// exits 0 on Ctrl-C; run again, it goes on from its place.
	feedPos := func() string {
		b, _ := os.ReadFile(cp)
		var c checkpoint
		if json.Unmarshal(b, &c) != nil || c.Tables["t"] == nil {
			return ""
		}
		p, _ := json.Marshal(c.Tables["t"].Feed)
		return string(p)
	}
	before := feedPos()
	writes(3)
	cmd := exec.Command(tkBinary, "copy", src, dst, "--checkpoint", cp, "--follow")
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for feedPos() == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("copy --follow after Ctrl-C: %v; stdout %s", err, stdout.String())
	}
	if !strings.Contains(stdout.String(), "t: followed") || !strings.Contains(stdout.String(), "interrupted") {
		t.Errorf("copy --follow printed %q", stdout.String())
	}
	if feedPos() == before {
		t.Fatalf("copy --follow did not move its checkpoint")
	}
	ok(t, "", "copy", src, dst, "--checkpoint", cp, "--catch-up")
	if a, b := ok(t, src, "export", "t"), ok(t, dst, "export", "t"); a != b {
		t.Fatalf("after copy --follow, Ctrl-C and --catch-up the exports differ")
	}
}
