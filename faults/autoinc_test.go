package faults_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
)

// The wrapper has auto-increment keys exactly when the wrapped backend
// has them, and a write with AutoIncrement goes through it with its
// faults: a lost answer comes after a row was made (the next put makes
// another row, with the next value), and the key assigned comes back
// through the wrapper.
func TestAutoIncrement(t *testing.T) {
	ctx := context.Background()
	eng := localengine.New()
	inj := faults.New(5, faults.Rule{Ops: faults.OpWrite, Lost: true, Times: 1})
	inj.Disable()
	db := tablekit.NewClient(inj.Wrap(eng))
	defer db.Close()
	if !db.Capabilities().AutoIncrement {
		t.Fatal("the wrapper of the local engine does not claim AutoIncrement")
	}
	schema := tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
		t.Fatal(err)
	}
	ph := tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.AutoIncrement)
	inj.Enable()
	var k tablekit.PrimaryKey
	if err := db.Table("t").PutRow(ctx, ph, nil, tablekit.ReturnKey(&k)); !errors.Is(err, tablekit.ErrUnavailable) || !errors.Is(err, faults.ErrInjected) || k != nil {
		t.Fatalf("a put whose answer is lost: %v (key %v), want ErrUnavailable (injected) and no key", err, k)
	}
	if err := db.Table("t").PutRow(ctx, ph, nil, tablekit.ReturnKey(&k)); err != nil {
		t.Fatal(err)
	}
	if s, _ := k[1].Value.Int(); s != 2 {
		t.Errorf("the put after a lost one was assigned %d, want 2 (the lost one made row 1)", s)
	}
	n := 0
	for _, err := range tablekit.NewClient(eng).Table("t").PrefixRows(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d rows, want 2 (the lost put's and the last)", n)
	}

	bareDB := tablekit.NewClient(faults.New(1).Wrap(bare{localengine.New()}))
	defer bareDB.Close()
	if bareDB.Capabilities().AutoIncrement {
		t.Error("the wrapper claims AutoIncrement over a backend without it")
	}
	if err := bareDB.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Errorf("CreateTable with an auto-increment column through the wrapper of a backend without them: %v, want ErrUnimplemented", err)
	}
}
