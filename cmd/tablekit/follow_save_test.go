package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// copy --follow saves its checkpoint from a saver of its own; a save that
// fails stops the followers and is followTables' error, as it was when
// the follower saved.
func TestFollowStopsWhenTheCheckpointCannotBeSaved(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, dst := tablekit.NewClient(localengine.New()), tablekit.NewClient(localengine.New())
	if err := src.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cp")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cp, err := loadCheckpoint(filepath.Join(dir, "cp.json"), "src", "dst")
	if err != nil {
		t.Fatal(err)
	}
	cfg := copyConfig{tables: []string{"t"}, workers: 1, batch: 10, quiet: true, follow: true}
	if err := copyTables(ctx, src, dst, cp, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil { // no file can be written there now
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- followTables(ctx, src, dst, cp, cfg, io.Discard) }()
	if err := src.Table("t").PutRow(ctx, tablekit.Key("k", tablekit.Integer(1)), []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "saving the checkpoint") {
			t.Fatalf("followTables = %v, want the failed save", err)
		}
	case <-ctx.Done():
		t.Fatal("followTables went on after its checkpoint could not be saved")
	}
}
