package tablekit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// An order and its lines, one partition key (the customer), written all or
// nothing: the order is created only if it does not exist yet, and the
// customer's order counter moves with it.
func ExampleTable_AtomicWrite() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	err := db.CreateTable(ctx, tablekit.TableMeta{
		Name: "purchases",
		Key:  tablekit.KeySchema{{Name: "customer", Type: tablekit.TypeString}, {Name: "item", Type: tablekit.TypeString}},
	})
	if err != nil {
		panic(err)
	}
	purchases := db.Table("purchases")
	key := func(item string) tablekit.PrimaryKey {
		return tablekit.Key("customer", tablekit.String("c1")).Add("item", tablekit.String(item))
	}
	order := func(id string) []tablekit.BatchWrite {
		return []tablekit.BatchWrite{
			tablekit.BatchPut("", key("order/"+id), []tablekit.Column{{Name: "total", Value: tablekit.Integer(30)}}, tablekit.ExpectNotExist),
			tablekit.BatchPut("", key("order/"+id+"/line/1"), []tablekit.Column{{Name: "sku", Value: tablekit.String("tea")}}),
			tablekit.BatchPut("", key("order/"+id+"/line/2"), []tablekit.Column{{Name: "sku", Value: tablekit.String("cup")}}),
			tablekit.BatchUpdate("", key("profile"), []tablekit.Change{tablekit.Increment("orders", 1)}),
		}
	}
	res, err := purchases.AtomicWrite(ctx, order("o1"))
	if err != nil {
		panic(err)
	}
	fmt.Println("orders:", res[3].Increments[0].Value)

	// The same order again: its first write's condition fails, and none of
	// the four writes is applied.
	_, err = purchases.AtomicWrite(ctx, order("o1"))
	var aerr *tablekit.AtomicWriteError
	fmt.Println(errors.Is(err, tablekit.ErrConditionFailed), errors.As(err, &aerr) && aerr.Index == 0)
	row, _, _ := purchases.GetRow(ctx, key("profile"))
	n, _ := row.Get("orders")
	fmt.Println("orders:", n)
	// Output:
	// orders: 1
	// true true
	// orders: 1
}

// counting is a backend without atomic writes that counts the calls made
// to it.
type counting struct {
	tablekit.Backend
	calls atomic.Int64
}

func (c *counting) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	c.calls.Add(1)
	return c.Backend.DescribeTable(ctx, name)
}

func (c *counting) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	c.calls.Add(1)
	return c.Backend.Write(ctx, w)
}

func atomicTable(t *testing.T, b tablekit.Backend) (*tablekit.Client, *tablekit.Table) {
	t.Helper()
	db := tablekit.NewClient(b)
	t.Cleanup(func() { db.Close() })
	err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "t",
		Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "r", Type: tablekit.TypeInteger}}})
	if err != nil {
		t.Fatal(err)
	}
	return db, db.Table("t")
}

func pr(p string, r int64) tablekit.PrimaryKey {
	return tablekit.Key("p", tablekit.String(p)).Add("r", tablekit.Integer(r))
}

// A backend without atomic writes: the Client refuses before any backend
// call (never a batch of single-row writes instead).
func TestAtomicWriteRefusedWithoutCapability(t *testing.T) {
	b := &counting{Backend: localengine.New()}
	db, tbl := atomicTable(t, b)
	if db.Capabilities().AtomicWrite {
		t.Fatal("a backend without AtomicWrite claims it")
	}
	before := b.calls.Load()
	_, err := tbl.AtomicWrite(context.Background(), []tablekit.BatchWrite{
		tablekit.BatchPut("", pr("a", 1), nil), tablekit.BatchPut("", pr("a", 2), nil)})
	var te *tablekit.Error
	if !errors.Is(err, tablekit.ErrUnimplemented) || !errors.As(err, &te) || te.Op != "AtomicWrite" || te.Table != "t" {
		t.Fatalf("AtomicWrite: %v, want ErrUnimplemented of AtomicWrite on table t", err)
	}
	if n := b.calls.Load() - before; n != 0 {
		t.Errorf("the refused AtomicWrite made %d backend calls", n)
	}
	if _, found, _ := tbl.GetRow(context.Background(), pr("a", 1)); found {
		t.Error("the refused AtomicWrite wrote a row")
	}
}

// The error of a failing write: ErrConditionFailed, an *Error of the
// operation and table, an *AtomicWriteError with the index; the message
// names the write.
func TestAtomicWriteErrorShape(t *testing.T) {
	_, tbl := atomicTable(t, localengine.New())
	ctx := context.Background()
	_, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{
		tablekit.BatchPut("", pr("a", 1), nil),
		tablekit.BatchPut("", pr("a", 2), nil),
		tablekit.BatchDelete("", pr("a", 3), tablekit.ExpectExist),
	})
	var te *tablekit.Error
	var ae *tablekit.AtomicWriteError
	switch {
	case !errors.Is(err, tablekit.ErrConditionFailed):
		t.Fatalf("AtomicWrite: %v, want ErrConditionFailed", err)
	case !errors.As(err, &ae) || ae.Index != 2:
		t.Errorf("AtomicWrite: %v, want an *AtomicWriteError of index 2", err)
	case !errors.As(err, &te) || te.Op != "AtomicWrite" || te.Table != "t":
		t.Errorf("AtomicWrite: %v, want an *Error of AtomicWrite on t", err)
	case !strings.Contains(err.Error(), "write 2"):
		t.Errorf("AtomicWrite: message %q does not name write 2", err)
	}
	for r := int64(1); r <= 2; r++ {
		if _, found, _ := tbl.GetRow(ctx, pr("a", r)); found {
			t.Errorf("row %d written by a failed AtomicWrite", r)
		}
	}
}

// A table deleted and created again behind the Client's cache: the
// atomic write is retried once with the new metadata (the one stale
// retry) and applies to the new table.
func TestAtomicWriteStaleRetry(t *testing.T) {
	e := localengine.New()
	db, tbl := atomicTable(t, e)
	ctx := context.Background()
	if _, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", pr("a", 1), nil)}); err != nil {
		t.Fatal(err)
	}
	other := tablekit.NewClient(e)
	if err := other.DeleteTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx, tablekit.TableMeta{Name: "t",
		Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "r", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{
		tablekit.BatchUpdate("", pr("a", 1), []tablekit.Change{tablekit.Increment("n", 1)}, tablekit.ExpectNotExist),
		tablekit.BatchPut("", pr("a", 2), nil),
	})
	if err != nil {
		t.Fatalf("AtomicWrite after the table was created again: %v", err)
	}
	if len(res) != 2 || len(res[0].Increments) != 1 || !res[0].Increments[0].Value.Equal(tablekit.Integer(1)) {
		t.Errorf("results %+v, want the increment n=1 first", res)
	}
	_ = db
}

// BenchmarkAtomicWrite: 10 rows of one partition key as one AtomicWrite,
// as one BatchWriteRow and as 10 PutRows, on the local engine and on the
// file engine (synced commits, its default), side by side:
//
//	go test -run '^$' -bench BenchmarkAtomicWrite -count 6 . | benchstat -col /op -
func BenchmarkAtomicWrite(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchAtomic(b, localengine.New()) })
	b.Run("file", func(b *testing.B) {
		e, err := fileengine.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		benchAtomic(b, e)
	})
}

// benchAtomic compares, on one backend, 10 rows of one partition key
// written as one AtomicWrite, as 10 PutRows, and as one BatchWriteRow.
func benchAtomic(b *testing.B, e tablekit.Backend) {
	ctx := context.Background()
	db := tablekit.NewClient(e)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t",
		Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "r", Type: tablekit.TypeInteger}}}); err != nil {
		b.Fatal(err)
	}
	tbl := db.Table("t")
	cols := []tablekit.Column{{Name: "v", Value: tablekit.String(strings.Repeat("x", 100))}}
	one := make([]tablekit.BatchWrite, 10)
	for i := range one {
		one[i] = tablekit.BatchPut("t", pr("p", int64(i)), cols)
	}
	b.Run("op=atomic10", func(b *testing.B) {
		for b.Loop() {
			if _, err := tbl.AtomicWrite(ctx, one); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("op=batch10", func(b *testing.B) {
		for b.Loop() {
			res, err := db.BatchWriteRow(ctx, one)
			if err != nil || res[0].Err != nil {
				b.Fatal(err, res[0].Err)
			}
		}
	})
	b.Run("op=single10", func(b *testing.B) {
		for b.Loop() {
			for _, w := range one {
				if err := tbl.PutRow(ctx, w.Key, w.Columns); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
