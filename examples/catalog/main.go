// Command catalog is for readers learning tablekit's basic pattern: seed
// 000's product catalog, the basic key-value pattern: DynamoDB's (partition
// key, sort key) = (hats, fedoras#brandA) becomes a two-column primary key
// (category, sku). It lists a category in order, reads one product, and
// updates a price only if it is what the caller last saw (an optimistic,
// conditional write).
//
// Its filter and condition are Required: a row that lacks the column fails
// them. Without Required a missing column passes (Tablestore's default),
// so an unpriced hat would count as cheap, and a compare-and-set on a SKU
// that does not exist would create it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
	"github.com/tablekit/tablekit/typed"
)

func main() { exampledb.Main(run) }

// Product is one row of the catalog: the two key fields, in schema order,
// then the attributes.
type Product struct {
	Category    string `tablekit:"category,key"`
	SKU         string `tablekit:"sku,key"`
	Description string `tablekit:"description"`
	Price       int64  `tablekit:"price"`
	Thumbnail   string `tablekit:"thumbnail,omitempty"`
}

var products = []Product{
	{"hats", "fedoras#brandA", "Made from premium wool.", 30, ""},
	{"hats", "fedoras#brandB", "Crafted from durable waterproof canvas.", 28, ""},
	{"hats", "newsboy#brandB", "Turn vintage charm into an everyday look.", 25, ""},
	{"shoes", "sneakers#brandA", "Style and comfort.", 40, ""},
	{"shoes", "sneakers#brandB", "Classic features with modern materials.", 50, ""},
}

func key(category, sku string) tablekit.PrimaryKey {
	return tablekit.Key("category", tablekit.String(category)).Add("sku", tablekit.String(sku))
}

func run(ctx context.Context, db *tablekit.Client, out io.Writer) error {
	var check exampledb.Checker
	if err := db.CreateTable(ctx, tablekit.TableMeta{
		Name: "catalog",
		Key:  tablekit.KeySchema{{Name: "category", Type: tablekit.TypeString}, {Name: "sku", Type: tablekit.TypeString}},
	}); err != nil {
		return err
	}
	tbl := db.Table("catalog")
	catalog := typed.Of[Product](tbl)
	for _, p := range products {
		p.Thumbnail = "https://storage.example/" + p.SKU + ".png"
		if err := catalog.Put(ctx, &p, tablekit.ExpectNotExist); err != nil { // a SKU is created once
			return err
		}
	}
	fmt.Fprintf(out, "added %d products\n", len(products))

	// All hats, in key order: the rows whose first key column is "hats".
	var hats []string
	for p, err := range catalog.PrefixRows(ctx, tablekit.Key("category", tablekit.String("hats"))) {
		if err != nil {
			return err
		}
		hats = append(hats, p.SKU)
		fmt.Fprintf(out, "  hats/%s: %d\n", p.SKU, p.Price)
	}
	check.Expect(fmt.Sprint(hats) == "[fedoras#brandA fedoras#brandB newsboy#brandB]", "hats listed as %v", hats)
	start, end, err := tbl.PrefixRange(ctx, tablekit.Key("category", tablekit.String("hats")))
	if err != nil {
		return err
	}

	// A hat not priced yet: a row without a price column.
	if err := tbl.PutRow(ctx, key("hats", "beanie#draft"), []tablekit.Column{{Name: "description", Value: tablekit.String("Coming soon.")}}); err != nil {
		return err
	}
	// Hats under 29, filtered by the store. Required: the unpriced hat
	// lacks the column and is not listed (without Required it would be).
	cheapFilter := tablekit.SingleColumnValue("price", tablekit.Less, tablekit.Integer(29)).Required()
	cheap, err := tbl.GetRange(ctx, start, end, tablekit.WithFilter(cheapFilter))
	if err != nil {
		return err
	}
	check.Expect(len(cheap.Rows) == 2, "hats under 29: %d", len(cheap.Rows))
	fmt.Fprintf(out, "hats under 29: %d\n", len(cheap.Rows))

	// Compare-and-set a price: only if it is still 40. UpdateFields writes
	// the named field alone (the struct's empty Description is not written).
	is40 := tablekit.IfMatch(tablekit.SingleColumnValue("price", tablekit.Equal, tablekit.Integer(40)).Required())
	setPrice := func(sku string, price int64) error {
		return catalog.UpdateFields(ctx, &Product{Category: "shoes", SKU: sku, Price: price}, []string{"Price"}, is40)
	}
	k := key("shoes", "sneakers#brandA")
	if err := setPrice("sneakers#brandA", 38); err != nil {
		return err
	}
	// A second writer who also saw 40 loses, and nothing is written.
	stale := setPrice("sneakers#brandA", 45)
	check.Expect(errors.Is(stale, tablekit.ErrConditionFailed), "second compare-and-set: %v", stale)
	p, found, err := catalog.Get(ctx, k)
	if err != nil {
		return err
	}
	check.Expect(found && p.Price == 38 && p.Description == "Style and comfort.", "after CAS: %+v", p)
	fmt.Fprintf(out, "sneakers#brandA price is now %d; the stale update got: %v\n", p.Price, stale)
	// A compare-and-set on a SKU that does not exist fails too, and creates nothing.
	missing := setPrice("boots#brandC", 38)
	_, found, err = catalog.Get(ctx, key("shoes", "boots#brandC"))
	if err != nil {
		return err
	}
	check.Expect(errors.Is(missing, tablekit.ErrConditionFailed) && !found, "compare-and-set of a missing SKU: %v, created %v", missing, found)
	fmt.Fprintf(out, "compare-and-set of a missing SKU: %v\n", missing)

	// Bad input is refused with a typed error that names the problem.
	err = tbl.PutRow(ctx, key("hats", "x"), []tablekit.Column{{Name: "price", Value: tablekit.Double(0)}, {Name: "bad-name", Value: tablekit.Integer(1)}})
	check.Expect(errors.Is(err, tablekit.ErrInvalidArgument), "bad column name: %v", err)
	fmt.Fprintf(out, "refused: %v\n", err)
	return check.Err()
}
