package typed_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/typed"
)

type order struct {
	ID     string `tablekit:"id,key,index=by_status"`
	Status string `tablekit:"status,index=by_status,index=by_status_total"`
	Total  int64  `tablekit:"total,include=by_status,index=by_status_total"`
	Note   string `tablekit:"note"`
}

// TestIndexTags: the tags make the specs, and structs read through an
// index carry the key, the index columns and the included columns.
func TestIndexTags(t *testing.T) {
	specs, err := typed.IndexSpecs[order]()
	if err != nil {
		t.Fatal(err)
	}
	want := []tablekit.IndexSpec{
		{Name: "by_status", Columns: []tablekit.KeyColumn{{Name: "id"}, {Name: "status", Type: tablekit.TypeString}}, Include: []string{"total"}},
		{Name: "by_status_total", Columns: []tablekit.KeyColumn{{Name: "status", Type: tablekit.TypeString}, {Name: "total", Type: tablekit.TypeInteger}}},
	}
	if len(specs) != 2 || specs[0].Name != want[0].Name || !slices.Equal(specs[0].Columns, want[0].Columns) || !slices.Equal(specs[0].Include, want[0].Include) ||
		specs[1].Name != want[1].Name || !slices.Equal(specs[1].Columns, want[1].Columns) {
		t.Fatalf("IndexSpecs = %+v, want %+v", specs, want)
	}
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}, Indexes: specs}); err != nil {
		t.Fatal(err)
	}
	orders := typed.Of[order](db.Table("orders"))
	for _, o := range []order{{ID: "a", Status: "open", Total: 30, Note: "x"}, {ID: "b", Status: "closed", Total: 10}, {ID: "c", Status: "open", Total: 20}} {
		if err := orders.Put(ctx, &o); err != nil {
			t.Fatal(err)
		}
	}
	lo := tablekit.Key("status", tablekit.InfMin).Add("total", tablekit.InfMin).Add("id", tablekit.InfMin)
	hi := tablekit.Key("status", tablekit.InfMax).Add("total", tablekit.InfMax).Add("id", tablekit.InfMax)
	var got []order
	for o, err := range orders.IndexRows(ctx, "by_status_total", lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o)
	}
	wantRows := []order{{ID: "b", Status: "closed", Total: 10}, {ID: "c", Status: "open", Total: 20}, {ID: "a", Status: "open", Total: 30}}
	if !slices.Equal(got, wantRows) {
		t.Fatalf("IndexRows by_status_total = %+v, want %+v (note is not included)", got, wantRows)
	}
	got = nil
	for o, err := range orders.IndexRows(ctx, "by_status", tablekit.Key("id", tablekit.InfMin).Add("status", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax).Add("status", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o)
	}
	if len(got) != 3 || got[0] != (order{ID: "a", Status: "open", Total: 30}) {
		t.Fatalf("IndexRows by_status = %+v", got)
	}
	type bad struct {
		X string `tablekit:"x,index="`
	}
	if _, err := typed.IndexSpecs[bad](); err == nil {
		t.Error("an empty index= option was accepted")
	}
}
