// Command purchases is for readers learning reverse-timestamp keys: seed
// 001's purchase history: one row per purchase, keyed (customer,
// Long.MAX_VALUE - purchase time), so a customer's rows are contiguous and
// newest first. It reads the latest purchase, the latest N, and a date
// range, each as one forward range read.
package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
	"github.com/tablekit/tablekit/typed"
)

// Purchase is one row: customer and the reversed time are its key.
type Purchase struct {
	Customer string  `tablekit:"customer,key"`
	RTS      int64   `tablekit:"rts,key"` // reverse(at): newest first
	Item     string  `tablekit:"item"`
	Amount   float64 `tablekit:"amount"`
	At       string  `tablekit:"at"`
}

func main() {
	exampledb.Main(run)
}

// reverse turns a time into the second key column: newer sorts first.
func reverse(t time.Time) int64 { return math.MaxInt64 - t.UnixMilli() }

func key(customer string, t time.Time) tablekit.PrimaryKey {
	return tablekit.Key("customer", tablekit.String(customer)).Add("rts", tablekit.Integer(reverse(t)))
}

func run(ctx context.Context, db *tablekit.Client, out io.Writer) error {
	var check exampledb.Checker
	err := db.CreateTable(ctx, tablekit.TableMeta{
		Name: "purchases",
		Key:  tablekit.KeySchema{{Name: "customer", Type: tablekit.TypeString}, {Name: "rts", Type: tablekit.TypeInteger}},
	})
	if err != nil {
		return err
	}
	tbl := db.Table("purchases")
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	purchases := typed.Of[Purchase](tbl)
	var writes []Purchase
	for _, c := range []string{"c1", "c2", "c3"} {
		for day := range 30 {
			at := base.AddDate(0, 0, day)
			writes = append(writes, Purchase{Customer: c, RTS: reverse(at), Item: fmt.Sprintf("item-%s-%02d", c, day),
				Amount: float64(10 + day), At: at.Format(time.RFC3339)})
		}
	}
	if _, err := typed.PutAll(ctx, db, purchases, writes); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %d purchases of 3 customers in one call\n", len(writes))

	// Everything of customer c2: from (c2, InfMin) to (c2, InfMax).
	first, last, err := tbl.PrefixRange(ctx, tablekit.Key("customer", tablekit.String("c2")))
	if err != nil {
		return err
	}

	// The latest purchase is the first row of the customer's range.
	latest, err := tbl.GetRange(ctx, first, last, tablekit.Limit(1))
	if err != nil {
		return err
	}
	check.Expect(len(latest.Rows) == 1, "latest: got %d rows", len(latest.Rows))
	if len(latest.Rows) == 1 {
		var p Purchase
		if err := typed.Unmarshal(latest.Rows[0], &p); err != nil {
			return err
		}
		fmt.Fprintf(out, "latest purchase of c2: %s (%.2f)\n", p.Item, p.Amount)
		check.Expect(p.Item == "item-c2-29" && p.Amount == 39, "latest is %+v", p)
	}

	// The latest 5, newest first.
	top, err := tbl.GetRange(ctx, first, last, tablekit.Limit(5), tablekit.Columns("item"))
	if err != nil {
		return err
	}
	for i, r := range top.Rows {
		var p Purchase // only the item was read: the other columns stay zero
		if err := typed.Unmarshal(r, &p); err != nil {
			return err
		}
		fmt.Fprintf(out, "  #%d %s\n", i+1, p.Item)
		check.Expect(p.Item == fmt.Sprintf("item-c2-%02d", 29-i), "latest-5[%d] is %q", i, p.Item)
	}
	check.Expect(len(top.Rows) == 5 && top.Next != nil, "latest 5: %d rows", len(top.Rows))

	// A date range [Mar 10, Mar 15): in reversed keys the later date is the lower key.
	from, to := base.AddDate(0, 0, 9), base.AddDate(0, 0, 14)
	n := 0
	// at < to  <=>  rts >= reverse(to - 1ms);  at >= from  <=>  rts < reverse(from - 1ms).
	for p, err := range purchases.Rows(ctx, key("c2", to.Add(-time.Millisecond)), key("c2", from.Add(-time.Millisecond))) {
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  in range: %s %s\n", p.At, p.Item)
		n++
	}
	check.Expect(n == 5, "date range returned %d rows, want 5", n)
	return check.Err()
}
