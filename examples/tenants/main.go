// Command tenants is for readers learning prefix ranges: seed 004's
// multi-tenant table: every tenant's rows share a key prefix (the first key
// column), so one tenant's data is contiguous, is listed by a prefix range,
// and is deleted by walking that range and deleting in batches, leaving the
// other tenants untouched.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
	"github.com/tablekit/tablekit/typed"
)

func main() { exampledb.Main(run) }

// Order is one row of the orders table: tenant and order are its key.
type Order struct {
	Tenant string `tablekit:"tenant,key"`
	Order  int64  `tablekit:"order,key"`
	Total  int64  `tablekit:"total"`
}

func tenantKey(tenant string) tablekit.PrimaryKey {
	return tablekit.Key("tenant", tablekit.String(tenant))
}

func count(ctx context.Context, tbl *tablekit.Table, tenant string) (int, error) {
	n := 0
	for _, err := range tbl.PrefixRows(ctx, tenantKey(tenant), tablekit.Columns()) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func run(ctx context.Context, db *tablekit.Client, out io.Writer) error {
	var check exampledb.Checker
	if err := db.CreateTable(ctx, tablekit.TableMeta{
		Name: "orders",
		Key:  tablekit.KeySchema{{Name: "tenant", Type: tablekit.TypeString}, {Name: "order", Type: tablekit.TypeInteger}},
	}); err != nil {
		return err
	}
	tbl := db.Table("orders")
	orders := typed.Of[Order](tbl)
	tenants := map[string]int{"acme": 450, "globex": 120, "initech": 80}
	var all []Order
	for tenant, n := range tenants {
		for i := range n {
			all = append(all, Order{Tenant: tenant, Order: int64(i), Total: int64(100 + i)})
		}
	}
	if _, err := typed.PutAll(ctx, db, orders, all); err != nil { // 650 rows, one call
		return err
	}
	for _, tenant := range []string{"acme", "globex", "initech"} {
		n, err := count(ctx, tbl, tenant)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "tenant %-8s %d rows\n", tenant, n)
		check.Expect(n == tenants[tenant], "tenant %s has %d rows, want %d", tenant, n, tenants[tenant])
	}
	var sum int64
	for o, err := range orders.PrefixRows(ctx, tenantKey("initech")) {
		if err != nil {
			return err
		}
		sum += o.Total
	}
	fmt.Fprintf(out, "initech total %d\n", sum)
	check.Expect(sum == 80*100+79*80/2, "initech total %d", sum)

	// globex leaves: delete its prefix range, any number of rows in one call.
	var deletes []tablekit.BatchWrite
	for r, err := range tbl.PrefixRows(ctx, tenantKey("globex"), tablekit.Columns()) {
		if err != nil {
			return err
		}
		deletes = append(deletes, tablekit.BatchDelete("orders", r.Key))
	}
	if _, err := db.WriteAll(ctx, deletes); err != nil {
		return err
	}
	deleted := len(deletes)
	fmt.Fprintf(out, "deleted %d rows of globex by key prefix\n", deleted)
	for _, tenant := range []string{"acme", "globex", "initech"} {
		n, err := count(ctx, tbl, tenant)
		if err != nil {
			return err
		}
		want := tenants[tenant]
		if tenant == "globex" {
			want = 0
		}
		check.Expect(n == want, "after delete: tenant %s has %d rows, want %d", tenant, n, want)
	}
	check.Expect(deleted == tenants["globex"], "deleted %d", deleted)
	return check.Err()
}
