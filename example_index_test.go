package tablekit_test

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// An index on an attribute column: rows come back in index-key order with
// the included columns, and an update moves a row at once.
func ExampleIndexTable_Rows() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	byStatus := tablekit.IndexSpec{Name: "by_status",
		Columns: []tablekit.KeyColumn{{Name: "status", Type: tablekit.TypeString}}, Include: []string{"total"}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "orders",
		Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}, Indexes: []tablekit.IndexSpec{byStatus}}); err != nil {
		panic(err)
	}
	orders := db.Table("orders")
	for id, status := range map[string]string{"o1": "open", "o2": "paid", "o3": "open"} {
		cols := []tablekit.Column{{Name: "status", Value: tablekit.String(status)}, {Name: "total", Value: tablekit.Integer(int64(len(id) * 10))}}
		if err := orders.PutRow(ctx, tablekit.Key("id", tablekit.String(id)), cols); err != nil {
			panic(err)
		}
	}
	if _, err := orders.UpdateRow(ctx, tablekit.Key("id", tablekit.String("o1")), []tablekit.Change{tablekit.Put("status", tablekit.String("paid"))}); err != nil {
		panic(err)
	}
	lo := tablekit.Key("status", tablekit.InfMin).Add("id", tablekit.InfMin)
	hi := tablekit.Key("status", tablekit.InfMax).Add("id", tablekit.InfMax)
	for row, err := range orders.Index("by_status").Rows(ctx, lo, hi) {
		if err != nil {
			panic(err)
		}
		total, _ := row.Get("total")
		fmt.Println(row.Key, total)
	}
	// Output:
	// (status=String("open"), id=String("o3")) 20
	// (status=String("paid"), id=String("o1")) 20
	// (status=String("paid"), id=String("o2")) 20
}
