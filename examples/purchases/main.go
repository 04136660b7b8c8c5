// Command purchases is seed 001's purchase history: one row per purchase,
// keyed (customer, Long.MAX_VALUE - purchase time), so a customer's rows are
// contiguous and newest first. It reads the latest purchase, the latest N,
// and a date range, each as one forward range read.
package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
)

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
	var writes []tablekit.BatchWrite
	for _, c := range []string{"c1", "c2", "c3"} {
		for day := range 30 {
			at := base.AddDate(0, 0, day)
			writes = append(writes, tablekit.BatchPut("purchases", key(c, at), []tablekit.Column{
				{Name: "item", Value: tablekit.String(fmt.Sprintf("item-%s-%02d", c, day))},
				{Name: "amount", Value: tablekit.Double(float64(10 + day))},
				{Name: "at", Value: tablekit.String(at.Format(time.RFC3339))},
			}))
		}
	}
	res, err := db.BatchWriteRow(ctx, writes)
	if err != nil {
		return err
	}
	for i, r := range res {
		if r.Err != nil {
			return fmt.Errorf("write %d: %w", i, r.Err)
		}
	}
	fmt.Fprintf(out, "wrote %d purchases of 3 customers in one batch\n", len(writes))

	// Everything of customer c2: from (c2, InfMin) to (c2, InfMax).
	first := tablekit.Key("customer", tablekit.String("c2")).Add("rts", tablekit.InfMin)
	last := tablekit.Key("customer", tablekit.String("c2")).Add("rts", tablekit.InfMax)

	// The latest purchase is the first row of the customer's range.
	latest, err := tbl.GetRange(ctx, first, last, tablekit.Limit(1))
	if err != nil {
		return err
	}
	check.Expect(len(latest.Rows) == 1, "latest: got %d rows", len(latest.Rows))
	if len(latest.Rows) == 1 {
		item, _ := latest.Rows[0].Get("item")
		fmt.Fprintf(out, "latest purchase of c2: %v\n", item)
		check.Expect(item == tablekit.String("item-c2-29"), "latest is %v", item)
	}

	// The latest 5, newest first.
	top, err := tbl.GetRange(ctx, first, last, tablekit.Limit(5), tablekit.Columns("item"))
	if err != nil {
		return err
	}
	for i, r := range top.Rows {
		item, _ := r.Get("item")
		fmt.Fprintf(out, "  #%d %v\n", i+1, item)
		check.Expect(item == tablekit.String(fmt.Sprintf("item-c2-%02d", 29-i)), "latest-5[%d] is %v", i, item)
	}
	check.Expect(len(top.Rows) == 5 && top.Next != nil, "latest 5: %d rows", len(top.Rows))

	// A date range [Mar 10, Mar 15): in reversed keys the later date is the lower key.
	from, to := base.AddDate(0, 0, 9), base.AddDate(0, 0, 14)
	n := 0
	// at < to  <=>  rts >= reverse(to - 1ms);  at >= from  <=>  rts < reverse(from - 1ms).
	for r, err := range tbl.Rows(ctx, key("c2", to.Add(-time.Millisecond)), key("c2", from.Add(-time.Millisecond))) {
		if err != nil {
			return err
		}
		at, _ := r.Get("at")
		fmt.Fprintf(out, "  in range: %v\n", at)
		n++
	}
	check.Expect(n == 5, "date range returned %d rows, want 5", n)
	return check.Err()
}
