package fileengine_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	_ "github.com/tablekit/tablekit/fileengine"
)

func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "db")
	meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}
	key := tablekit.PrimaryKey{{Name: "id", Value: tablekit.String("a")}}

	db, err := tablekit.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("t").PutRow(ctx, key, []tablekit.Column{{Name: "c", Value: tablekit.Integer(7)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = tablekit.Open(ctx, "file://"+dir+"?mustexist=true&nosync=true")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	row, found, err := db.Table("t").GetRow(ctx, key)
	if err != nil || !found {
		t.Fatalf("after reopen: found=%v err=%v", found, err)
	}
	if v, ok := row.Get("c"); !ok || v.String() != tablekit.Integer(7).String() {
		t.Fatalf("after reopen: c = %v", v)
	}

	// file://localhost/ABS is /ABS (RFC 8089); a host that is not "." or
	// ".." is refused with the two forms that say what was meant.
	// db holds dir locked: the same directory opened again is ErrUnavailable.
	if _, err := tablekit.Open(ctx, "file://localhost"+dir+"?mustexist=true"); !errors.Is(err, tablekit.ErrUnavailable) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(file://localhost%s) = %v; want the locked store at %s", dir, err, dir)
	}
	_, err = tablekit.Open(ctx, "file://data/x")
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "file:///data/x") || !strings.Contains(err.Error(), "file://./data/x") {
		t.Errorf("Open(file://data/x) = %v; want ErrInvalidArgument showing file:///data/x and file://./data/x", err)
	}

	for _, bad := range []string{"file://", "file://" + dir + "?nosync=maybe", "file://" + dir + "?bogus=1",
		"file://" + filepath.Join(t.TempDir(), "none") + "?mustexist=1"} {
		if _, err := tablekit.Open(ctx, bad); !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("Open(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}
