// Command tenants is seed 004's multi-tenant table: every tenant's rows share
// a key prefix (the first key column), so one tenant's data is contiguous,
// is listed by a prefix range, and is deleted by walking that range and
// deleting in batches, leaving the other tenants untouched.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
)

func main() { exampledb.Main(run) }

func key(tenant string, order int64) tablekit.PrimaryKey {
	return tablekit.Key("tenant", tablekit.String(tenant)).Add("order", tablekit.Integer(order))
}

// prefix returns the range bounds of every row of tenant.
func prefix(tenant string) (start, end tablekit.PrimaryKey) {
	return key(tenant, 0)[:1].Add("order", tablekit.InfMin), key(tenant, 0)[:1].Add("order", tablekit.InfMax)
}

func count(ctx context.Context, tbl *tablekit.Table, tenant string) (int, error) {
	start, end := prefix(tenant)
	n := 0
	for _, err := range tbl.Rows(ctx, start, end, tablekit.Columns()) {
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
	tenants := map[string]int{"acme": 450, "globex": 120, "initech": 80}
	for tenant, n := range tenants {
		for lo := 0; lo < n; lo += tablekit.MaxBatchWrite {
			var batch []tablekit.BatchWrite
			for i := lo; i < min(n, lo+tablekit.MaxBatchWrite); i++ {
				batch = append(batch, tablekit.BatchPut("orders", key(tenant, int64(i)), []tablekit.Column{
					{Name: "total", Value: tablekit.Integer(int64(100 + i))},
				}))
			}
			if _, err := db.BatchWriteRow(ctx, batch); err != nil {
				return err
			}
		}
	}
	for _, tenant := range []string{"acme", "globex", "initech"} {
		n, err := count(ctx, tbl, tenant)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "tenant %-8s %d rows\n", tenant, n)
		check.Expect(n == tenants[tenant], "tenant %s has %d rows, want %d", tenant, n, tenants[tenant])
	}

	// globex leaves: delete its prefix range in batches of 200.
	start, end := prefix("globex")
	var batch []tablekit.BatchWrite
	deleted := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := db.BatchWriteRow(ctx, batch)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				return r.Err
			}
		}
		deleted += len(batch)
		batch = batch[:0]
		return nil
	}
	for r, err := range tbl.Rows(ctx, start, end, tablekit.Columns()) {
		if err != nil {
			return err
		}
		batch = append(batch, tablekit.BatchDelete("orders", r.Key))
		if len(batch) == tablekit.MaxBatchWrite {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
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
