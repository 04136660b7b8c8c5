package tablekit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// A row that lacks a filter's column passes it (Tablestore's default, kept
// by SPEC §10). Where the intent is "only rows that have this value", add
// Required: here 3 of 10 customers have a region, 2 of them "eu".
func ExampleColumnFilter_Required() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	must(db.CreateTable(ctx, tablekit.TableMeta{Name: "customers", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}))
	customers := db.Table("customers")
	for i := range 10 {
		var cols []tablekit.Column
		switch i {
		case 0, 1:
			cols = []tablekit.Column{{Name: "region", Value: tablekit.String("eu")}}
		case 2:
			cols = []tablekit.Column{{Name: "region", Value: tablekit.String("us")}}
		}
		must(customers.PutRow(ctx, tablekit.Key("id", tablekit.Integer(int64(i))), cols))
	}
	count := func(f tablekit.Filter) int {
		n := 0
		for _, err := range customers.Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax), tablekit.WithFilter(f)) {
			must(err)
			n++
		}
		return n
	}
	eu := tablekit.SingleColumnValue("region", tablekit.Equal, tablekit.String("eu"))
	fmt.Println("region == eu:           ", count(eu))             // the 2, and the 7 without a region
	fmt.Println("region == eu, Required():", count(eu.Required())) // only the 2

	// The same holds for a condition: on a missing row, only Required refuses the write.
	pending := tablekit.SingleColumnValue("status", tablekit.Equal, tablekit.String("pending"))
	err := customers.PutRow(ctx, tablekit.Key("id", tablekit.Integer(100)), nil, tablekit.IfMatch(pending.Required()))
	fmt.Println("Required on a missing row:", errors.Is(err, tablekit.ErrConditionFailed))
	err = customers.PutRow(ctx, tablekit.Key("id", tablekit.Integer(101)), nil, tablekit.IfMatch(pending))
	fmt.Println("default on a missing row: ", err) // nil: the row was created
	// Output:
	// region == eu:            9
	// region == eu, Required(): 2
	// Required on a missing row: true
	// default on a missing row:  <nil>
}

// A version is a millisecond: two writes of a column in the same
// millisecond leave one version, the later. To keep every step of a
// history in versions, give each step its own version (PutAt), or keep the
// history in rows, one per step, under a key column (see package typed's
// history example).
func ExamplePutAt() {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)) // time stands still
	db := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	defer db.Close()
	must(db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{MaxVersions: 10}}))
	orders := db.Table("orders")
	versions := func(id string) []tablekit.Column {
		row, _, err := orders.GetRow(ctx, tablekit.Key("id", tablekit.String(id)), tablekit.MaxVersions(10))
		must(err)
		return row.Versions("status")
	}

	// Put: each write is a version at now; within one millisecond they collapse.
	for _, s := range []string{"placed", "paid", "shipped"} {
		_, err := orders.UpdateRow(ctx, tablekit.Key("id", tablekit.String("a")), []tablekit.Change{tablekit.Put("status", tablekit.String(s))})
		must(err)
	}
	kept := versions("a")
	fmt.Println("Put:  ", len(kept), "version:", kept[0].Value)

	// PutAt: each step its own version (here now, now+1, now+2 ms).
	now := tablekit.VersionAt(clock.Now())
	for i, s := range []string{"placed", "paid", "shipped"} {
		_, err := orders.UpdateRow(ctx, tablekit.Key("id", tablekit.String("b")), []tablekit.Change{tablekit.PutAt("status", tablekit.String(s), now+int64(i))})
		must(err)
	}
	for _, c := range versions("b") {
		fmt.Println("PutAt:", c.Version-now, c.Value)
	}
	// Output:
	// Put:   1 version: shipped
	// PutAt: 2 shipped
	// PutAt: 1 paid
	// PutAt: 0 placed
}
