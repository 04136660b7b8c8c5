package faults_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
)

// The wrapper forwards AtomicWrite with the faults of OpAtomicWrite,
// decided for the whole call, and has the capability exactly when the
// wrapped backend has it; without it, its AtomicWrite answers ErrSkip and
// the Client refuses the call.
func TestAtomicWrite(t *testing.T) {
	ctx := context.Background()
	// The table's key has one column, so an atomic write holds one row.
	writes := []tablekit.BatchWrite{
		tablekit.BatchPut("t", key(1), []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}),
	}

	inj := faults.New(3, faults.Rule{Ops: faults.OpAtomicWrite, Err: tablekit.ErrUnavailable})
	db, clean := setup(t, inj, localengine.New())
	if !db.Capabilities().AtomicWrite {
		t.Fatal("the wrapped local engine does not claim AtomicWrite")
	}
	_, err := db.AtomicWrite(ctx, writes)
	if !errors.Is(err, tablekit.ErrUnavailable) || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("AtomicWrite with an injected fault = %v, want ErrUnavailable (injected)", err)
	}
	if _, found, err := clean.Table("t").GetRow(ctx, key(1)); err != nil || found {
		t.Fatalf("row 1 after the failed AtomicWrite: found=%v err=%v", found, err)
	}
	inj.Disable()
	if _, err := db.AtomicWrite(ctx, writes); err != nil {
		t.Fatalf("AtomicWrite with faults disabled: %v", err)
	}
	if inj.TotalHits() != 1 {
		t.Errorf("%d hits, want 1", inj.TotalHits())
	}

	bareDB := tablekit.NewClient(faults.New(1).Wrap(bare{localengine.New()}))
	defer bareDB.Close()
	if err := bareDB.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
		t.Fatal(err)
	}
	if bareDB.Capabilities().AtomicWrite {
		t.Error("the wrapper claims AtomicWrite over a backend without it")
	}
	if _, err := bareDB.AtomicWrite(ctx, writes); !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Errorf("AtomicWrite through the wrapper of a backend without it = %v, want ErrUnimplemented", err)
	}
	if _, found, err := bareDB.Table("t").GetRow(ctx, key(1)); err != nil || found {
		t.Errorf("row 1 after the refused AtomicWrite: found=%v err=%v", found, err)
	}
	w := faults.New(1).Wrap(bare{localengine.New()}).(tablekit.AtomicWriter)
	if _, err := w.AtomicWrite(ctx, nil); !errors.Is(err, tablekit.ErrSkip) {
		t.Errorf("the wrapper's AtomicWrite over a backend without it = %v, want ErrSkip", err)
	}
}
