package typed_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/typed"
)

type Purchase struct {
	Customer string `tablekit:"customer,key"`
	Item     string `tablekit:"item,key"`
	Total    int64  `tablekit:"total"`
}

type Line struct {
	Customer string `tablekit:"customer,key"`
	Item     string `tablekit:"item,key"`
	SKU      string `tablekit:"sku"`
	Qty      int64  `tablekit:"qty"`
}

// An order and its lines, structs of two types in one table, written all
// or nothing.
func ExampleTable_PutWrite() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	_ = db.CreateTable(ctx, tablekit.TableMeta{Name: "purchases", Key: tablekit.KeySchema{
		{Name: "customer", Type: tablekit.TypeString}, {Name: "item", Type: tablekit.TypeString}}})
	orders := typed.Of[Purchase](db.Table("purchases"))
	lines := typed.Of[Line](db.Table("purchases"))

	o, _ := orders.PutWrite(&Purchase{Customer: "c1", Item: "o1", Total: 30}, tablekit.ExpectNotExist)
	l1, _ := lines.PutWrite(&Line{Customer: "c1", Item: "o1/1", SKU: "tea", Qty: 2})
	l2, _ := lines.PutWrite(&Line{Customer: "c1", Item: "o1/2", SKU: "cup", Qty: 1})
	if _, err := db.AtomicWrite(ctx, []tablekit.BatchWrite{o, l1, l2}); err != nil {
		fmt.Println(err)
	}
	// Again: the order exists, so nothing is written.
	_, err := db.AtomicWrite(ctx, []tablekit.BatchWrite{o, l1, l2})
	fmt.Println(errors.Is(err, tablekit.ErrConditionFailed))
	l, found, _ := lines.Get(ctx, tablekit.Key("customer", tablekit.String("c1")).Add("item", tablekit.String("o1/2")))
	fmt.Println(found, l.SKU, l.Qty)
	// Output:
	// true
	// true cup 1
}

func TestPutAtomic(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "p", Key: tablekit.KeySchema{
		{Name: "customer", Type: tablekit.TypeString}, {Name: "item", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	lines := typed.Of[Line](db.Table("p"))
	if err := lines.Put(ctx, &Line{Customer: "c", Item: "b", SKU: "old"}); err != nil {
		t.Fatal(err)
	}
	vs := []Line{{Customer: "c", Item: "a", SKU: "x"}, {Customer: "c", Item: "b", SKU: "y"}}
	err := lines.PutAtomic(ctx, vs, tablekit.ExpectNotExist)
	var ae *tablekit.AtomicWriteError
	if !errors.Is(err, tablekit.ErrConditionFailed) || !errors.As(err, &ae) || ae.Index != 1 {
		t.Fatalf("PutAtomic over an existing row = %v, want ErrConditionFailed at index 1", err)
	}
	if _, found, _ := lines.Get(ctx, tablekit.Key("customer", tablekit.String("c")).Add("item", tablekit.String("a"))); found {
		t.Error("the failed PutAtomic wrote row a")
	}
	if err := lines.PutAtomic(ctx, vs); err != nil {
		t.Fatal(err)
	}
	got, _, _ := lines.Get(ctx, tablekit.Key("customer", tablekit.String("c")).Add("item", tablekit.String("b")))
	if got.SKU != "y" {
		t.Errorf("row b after PutAtomic: %+v", got)
	}
	if err := typed.Of[Line](db.Table("p")).PutAtomic(ctx, []Line{{Customer: "c", Item: "a"}, {Customer: "d", Item: "a"}}); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("PutAtomic across partition keys = %v, want ErrInvalidArgument", err)
	}
}
