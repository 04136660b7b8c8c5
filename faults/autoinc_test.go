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

// TestAutoIncrementIndexed: a write with AutoIncrement of an indexed table
// goes through the wrapper's WriteIndexed with the faults of its row and
// of each entry (the entries' keys still hold the placeholder there): a
// fault of any of them fails the write whole, nothing written; a lost
// answer is that of a write applied, row and entries. No index read
// misses a row, none returns a row that is not there.
func TestAutoIncrementIndexed(t *testing.T) {
	ctx := context.Background()
	eng := localengine.New()
	boot := tablekit.NewClient(eng)
	defer boot.Close()
	schema := tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}
	byV := tablekit.IndexSpec{Name: "by_v", Columns: []tablekit.KeyColumn{{Name: "v", Type: tablekit.TypeString}}}
	if err := boot.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema, Indexes: []tablekit.IndexSpec{byV}}); err != nil {
		t.Fatal(err)
	}
	m, err := boot.DescribeTable(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	ph := tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.AutoIncrement)
	rows := 0
	for i, tc := range []struct {
		name    string
		rule    faults.Rule
		applied bool
	}{
		{"entry put fails", faults.Rule{Ops: faults.OpWrites, Table: m.Indexes[0].Storage, Err: tablekit.ErrUnavailable, Times: 1}, false},
		{"row write fails", faults.Rule{Ops: faults.OpWrites, Table: "t", Err: tablekit.ErrUnavailable, Times: 1}, false},
		{"row write lost", faults.Rule{Ops: faults.OpWrites, Table: "t", Lost: true, Times: 1}, true},
	} {
		inj := faults.New(uint64(i), tc.rule)
		db := tablekit.NewClient(inj.Wrap(sharedLocal{eng})) // its Close leaves eng open
		err := db.Table("t").PutRow(ctx, ph, []tablekit.Column{{Name: "v", Value: tablekit.String(tc.name)}})
		db.Close()
		if !errors.Is(err, faults.ErrInjected) {
			t.Fatalf("%s: PutRow: %v, want the injected fault", tc.name, err)
		}
		if tc.applied {
			rows++
		}
		n := 0
		for r, err := range boot.Table("t").PrefixRows(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			v, _ := r.Get("v")
			lo := tablekit.Key("v", v).Add("p", tablekit.InfMin).Add("s", tablekit.InfMin)
			hi := tablekit.Key("v", v).Add("p", tablekit.InfMax).Add("s", tablekit.InfMax)
			found := 0
			for ir, err := range boot.Table("t").Index("by_v").Rows(ctx, lo, hi) {
				if err != nil {
					t.Fatal(err)
				}
				if !tablekit.PrimaryKey(ir.Key[1:]).Equal(r.Key) {
					t.Errorf("%s: by_v returns %v under v %v, a row that is not there", tc.name, ir.Key, v)
				}
				found++
			}
			if found != 1 {
				t.Errorf("%s: by_v returns row %v %d times, want once", tc.name, r.Key, found)
			}
		}
		if n != rows {
			t.Errorf("%s: %d rows, want %d", tc.name, n, rows)
		}
		if rep, err := boot.Reindex(ctx, "t", "by_v", true); err != nil || rep.Missing != 0 {
			t.Errorf("%s: Reindex verify %+v, %v: want no entry missing", tc.name, rep, err)
		}
	}
}
