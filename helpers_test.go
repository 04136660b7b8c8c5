package tablekit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

func TestWriteAll(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	const n = 1030
	var ws []tablekit.BatchWrite
	for i := range n {
		cols := []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i))}}
		if i == 777 {
			cols[0].Name = "bad name" // refused: one row's own error
		}
		ws = append(ws, tablekit.BatchPut("t", tablekit.Key("id", tablekit.Integer(int64(i))), cols))
	}
	res, err := db.WriteAll(ctx, ws)
	if len(res) != n {
		t.Fatalf("%d results for %d writes", len(res), n)
	}
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !errors.Is(res[777].Err, tablekit.ErrInvalidArgument) {
		t.Fatalf("joined error %v, row 777: %v", err, res[777].Err)
	}
	got := 0
	for r, err := range db.Table("t").Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := r.Get("n"); v != r.Key[0].Value {
			t.Fatalf("row %v holds %v", r.Key, v)
		}
		got++
	}
	if got != n-1 {
		t.Fatalf("%d rows stored, want %d", got, n-1)
	}
	// The same row written in several batches: applied in order.
	ws = ws[:0]
	for i := range 450 {
		ws = append(ws, tablekit.BatchUpdate("t", tablekit.Key("id", tablekit.Integer(1)), []tablekit.Change{tablekit.Put("last", tablekit.Integer(int64(i)))}))
	}
	if _, err := db.WriteAll(ctx, ws); err != nil {
		t.Fatal(err)
	}
	r, _, err := db.Table("t").GetRow(ctx, tablekit.Key("id", tablekit.Integer(1)))
	if v, _ := r.Get("last"); err != nil || v != tablekit.Integer(449) {
		t.Fatalf("last = %v (%v), want 449", v, err)
	}
}

func TestPrefixRange(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	schema := tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
		t.Fatal(err)
	}
	var ws []tablekit.BatchWrite
	for _, u := range []string{"a", "b", "bb", "c"} {
		for s := range 3 {
			ws = append(ws, tablekit.BatchPut("t", tablekit.Key("user", tablekit.String(u)).Add("seq", tablekit.Integer(int64(s))), nil))
		}
	}
	if _, err := db.WriteAll(ctx, ws); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	var seqs []int64
	for r, err := range tbl.PrefixRows(ctx, tablekit.Key("user", tablekit.String("b")), tablekit.Backward()) {
		if err != nil {
			t.Fatal(err)
		}
		if u, _ := r.Key[0].Value.Str(); u != "b" {
			t.Fatalf("row %v outside the prefix", r.Key)
		}
		s, _ := r.Key[1].Value.Int()
		seqs = append(seqs, s)
	}
	if len(seqs) != 3 || seqs[0] != 2 || seqs[2] != 0 {
		t.Fatalf("backward prefix rows %v, want [2 1 0]", seqs)
	}
	for _, bad := range []tablekit.PrimaryKey{
		tablekit.Key("seq", tablekit.Integer(1)),
		tablekit.Key("user", tablekit.Integer(1)),
		tablekit.Key("user", tablekit.InfMin),
		nil,
	} {
		if _, _, err := tbl.PrefixRange(ctx, bad); !errors.Is(err, tablekit.ErrInvalidPrimaryKey) {
			t.Errorf("PrefixRange(%v): %v, want ErrInvalidPrimaryKey", bad, err)
		}
	}
	if v := tablekit.VersionAt(time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC)); v != 1468972800000 || !tablekit.VersionTime(v).Equal(time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("VersionAt = %d", v)
	}
}
