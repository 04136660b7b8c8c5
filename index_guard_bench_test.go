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
	db := twoColumnIndexClient(b, localengine.New())
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
