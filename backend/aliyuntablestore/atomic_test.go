package aliyuntablestore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// TestAtomicWriteOverBackendWithout checks the adapter against a tsemu
// server whose Backend has no atomic writes: the server refuses is_atomic
// (400 OTSParameterInvalid), the adapter reports ErrInvalidArgument with
// no write index, and nothing is written.
func TestAtomicWriteOverBackendWithout(t *testing.T) {
	srv, err := tsemu.NewServer(tsemu.Options{Backend: struct{ tablekit.Backend }{localengine.New()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	db := tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil))
	if !db.Capabilities().AtomicWrite {
		t.Fatal("the adapter does not declare atomic writes")
	}
	ctx := context.Background()
	meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "r", Type: tablekit.TypeInteger}}}
	if err := db.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	key := func(r int64) tablekit.PrimaryKey {
		return tablekit.Key("p", tablekit.String("a")).Add("r", tablekit.Integer(r))
	}
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}
	_, err = tbl.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", key(1), cols), tablekit.BatchPut("", key(2), cols)})
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("AtomicWrite over a backend without atomic writes: %v, want ErrInvalidArgument", err)
	}
	var ae *tablekit.AtomicWriteError
	if errors.As(err, &ae) {
		t.Fatalf("a refusal of the whole call names write %d", ae.Index)
	}
	for r := int64(1); r <= 2; r++ {
		if _, found, err := tbl.GetRow(ctx, key(r)); err != nil || found {
			t.Fatalf("row %d after a refused atomic write: found %v, %v", r, found, err)
		}
	}
}
