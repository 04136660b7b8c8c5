package tablekit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// orderSchema keeps an order (line 0) and its lines (1..n) under one
// partition key, the customer; the order number is auto-increment.
var orderSchema = tablekit.KeySchema{
	{Name: "customer", Type: tablekit.TypeString},
	{Name: "order", Type: tablekit.TypeInteger, AutoIncrement: true},
	{Name: "line", Type: tablekit.TypeInteger},
}

func orderKey(order tablekit.Value, line int64) tablekit.PrimaryKey {
	return tablekit.Key("customer", tablekit.String("c42")).Add("order", order).Add("line", tablekit.Integer(line))
}

// placeOrder writes an order and its lines under one assigned order
// number (SPEC §14): AutoIncrement in several writes of one AtomicWrite
// gives each its own value, so it is used once, alone, for the order; the
// lines reuse the key that write returned. The order is written as a
// draft first; one AtomicWrite then marks it placed and writes its lines,
// so a reader sees a draft with no lines or a placed order with all of
// them; a crash between the two leaves a draft, which readers skip.
func placeOrder(ctx context.Context, t *tablekit.Table, lines []string) (int64, error) {
	var key tablekit.PrimaryKey
	err := t.PutRow(ctx, orderKey(tablekit.AutoIncrement, 0),
		[]tablekit.Column{{Name: "status", Value: tablekit.String("draft")}}, tablekit.ReturnKey(&key))
	if err != nil {
		return 0, err
	}
	order, _ := key[1].Value.Int() // the assigned order number
	writes := []tablekit.BatchWrite{tablekit.BatchUpdate("", key,
		[]tablekit.Change{tablekit.Put("status", tablekit.String("placed"))}, tablekit.ExpectExist)}
	for i, item := range lines {
		writes = append(writes, tablekit.BatchPut("", orderKey(tablekit.Integer(order), int64(i+1)),
			[]tablekit.Column{{Name: "item", Value: tablekit.String(item)}}, tablekit.ExpectNotExist))
	}
	_, err = t.AtomicWrite(ctx, writes)
	return order, err
}

// An order and its lines share one assigned order number: assign it on
// the order alone, then reuse the returned key in one AtomicWrite.
func ExampleTable_AtomicWrite_autoIncrementOrder() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: orderSchema}); err != nil {
		panic(err)
	}
	orders := db.Table("orders")
	for _, lines := range [][]string{{"hat", "scarf"}, {"gloves"}} {
		if _, err := placeOrder(ctx, orders, lines); err != nil {
			panic(err)
		}
	}
	for row, err := range orders.PrefixRows(ctx, nil) {
		if err != nil {
			panic(err)
		}
		fmt.Println(row.Key[1].Value, row.Key[2].Value, row.Columns[0].Value)
	}
	// Output:
	// 1 0 placed
	// 1 1 hat
	// 1 2 scarf
	// 2 0 placed
	// 2 1 gloves
}

// AutoIncrement in several writes of one AtomicWrite assigns each its own
// value (the lines detach from their order), which is why the recipe above
// assigns once and reuses the key; the recipe keeps them together.
func TestAutoIncrementOrderAndLines(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "orders", Key: orderSchema}); err != nil {
		t.Fatal(err)
	}
	orders := db.Table("orders")
	res, err := orders.AtomicWrite(ctx, []tablekit.BatchWrite{
		tablekit.BatchPut("", orderKey(tablekit.AutoIncrement, 0), nil),
		tablekit.BatchPut("", orderKey(tablekit.AutoIncrement, 1), nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := res[0].Key[1].Value, res[1].Key[1].Value; a == b {
		t.Errorf("two AutoIncrement writes of one AtomicWrite got one value %v; the docs say each gets its own", a)
	}
	order, err := placeOrder(ctx, orders, []string{"hat", "scarf", "belt"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for row, err := range orders.PrefixRows(ctx, tablekit.Key("customer", tablekit.String("c42")).Add("order", tablekit.Integer(order))) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if line, _ := row.Key[2].Value.Int(); line == 0 {
			if v, _ := row.Get("status"); v != tablekit.String("placed") {
				t.Errorf("order %d is %v, want placed", order, v)
			}
		}
	}
	if n != 4 {
		t.Errorf("order %d has %d rows, want the order and its 3 lines", order, n)
	}
}
