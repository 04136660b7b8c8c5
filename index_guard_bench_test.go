package tablekit_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// BenchmarkIndexGuardedUpdate: UpdateRow of one column of a two-column
// index (the guarded path, with its second read) on the local engine.
func BenchmarkIndexGuardedUpdate(b *testing.B) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	spec := tablekit.IndexSpec{Name: "by_ab", Columns: []tablekit.KeyColumn{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: 3}, Indexes: []tablekit.IndexSpec{spec}}); err != nil {
		b.Fatal(err)
	}
	tbl := db.Table("t")
	key := tablekit.Key("id", tablekit.Integer(1))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "a", Value: tablekit.String("p")}, {Name: "b", Value: tablekit.Integer(1)}}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("b", tablekit.Integer(int64(i%4)))}); err != nil {
			b.Fatal(err)
		}
	}
}
