package fileengine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablekit/tablekit"
)

// syncCountFS counts the syncs that reach the write-ahead-log files it
// creates.
type syncCountFS struct {
	vfs.FS
	walSyncs *atomic.Int64
}

func (fs syncCountFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return fs.wrap(f, category), err
}

func (fs syncCountFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return fs.wrap(f, category), err
}

func (fs syncCountFS) wrap(f vfs.File, category vfs.DiskWriteCategory) vfs.File {
	if f == nil || category != walCategory {
		return f
	}
	return syncCountFile{f, fs.walSyncs}
}

type syncCountFile struct {
	vfs.File
	n *atomic.Int64
}

func (f syncCountFile) Sync() error     { f.n.Add(1); return f.File.Sync() }
func (f syncCountFile) SyncData() error { f.n.Add(1); return f.File.SyncData() }
func (f syncCountFile) SyncTo(n int64) (bool, error) {
	f.n.Add(1)
	return f.File.SyncTo(n)
}

// TestNoSyncWritesReachTheFile checks Options.NoSync's promise to a
// process: when a write is acknowledged, its log record is in the log
// file (the operating system has it, so the death of the process cannot
// lose it), while no sync of the log reaches the disk; and that the
// default mode does sync the log. TestCrash/nosync checks the same by
// killing a writer.
func TestNoSyncWritesReachTheFile(t *testing.T) {
	for _, noSync := range []bool{true, false} {
		t.Run(fmt.Sprintf("nosync=%v", noSync), func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var syncs atomic.Int64
			eng, err := Open(dir, &Options{NoSync: noSync, fs: syncCountFS{vfs.Default, &syncs}})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			db := tablekit.NewClient(eng)
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
				t.Fatal(err)
			}
			tab := db.Table("t")
			before := syncs.Load()
			// 200 short rows: the new store's log stays in its first 32 KiB
			// block, so that no chunk header splits a value in the file.
			for i := range 200 {
				v := fmt.Sprintf("value-%06d", i)
				if err := tab.PutRow(ctx, tablekit.Key("k", tablekit.Integer(int64(i))), []tablekit.Column{{Name: "c", Value: tablekit.String(v)}}); err != nil {
					t.Fatal(err)
				}
				if !walHolds(t, dir, v) {
					t.Fatalf("write %d was acknowledged before its log record reached the log file", i)
				}
			}
			n := syncs.Load() - before
			switch {
			case noSync && n != 0:
				t.Errorf("NoSync: %d syncs of the log for 200 writes, want 0", n)
			case !noSync && n == 0:
				t.Errorf("default mode: no sync of the log for 200 writes")
			}
		})
	}
}

// walHolds reports whether a write-ahead-log file in dir holds v.
func walHolds(t *testing.T, dir, v string) bool {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(v)) {
			return true
		}
	}
	return false
}
