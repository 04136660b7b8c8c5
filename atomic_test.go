package tablekit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
// file engine (synced commits, its default; and NoSync). Each iteration
// runs the three, in a rotating order, so that they meet the same load;
// the metrics are the median time of each and the ratios of the medians:
//
//	go test -run '^$' -bench BenchmarkAtomicWrite -benchtime 3000x .
func BenchmarkAtomicWrite(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchAtomic(b, localengine.New()) })
	for _, nosync := range []bool{false, true} {
		b.Run(fmt.Sprintf("file/nosync=%v", nosync), func(b *testing.B) {
			e, err := fileengine.Open(b.TempDir(), &fileengine.Options{NoSync: nosync})
			if err != nil {
				b.Fatal(err)
			}
			benchAtomic(b, e)
		})
	}
}

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
	ws := make([]tablekit.BatchWrite, 10)
	for i := range ws {
		ws[i] = tablekit.BatchPut("t", pr("p", int64(i)), cols)
	}
	ops := [3]func(){
		func() {
			if _, err := tbl.AtomicWrite(ctx, ws); err != nil {
				b.Fatal(err)
			}
		},
		func() {
			res, err := db.BatchWriteRow(ctx, ws)
			if err != nil || res[0].Err != nil {
				b.Fatal(err, res[0].Err)
			}
		},
		func() {
			for _, w := range ws {
				if err := tbl.PutRow(ctx, w.Key, w.Columns); err != nil {
					b.Fatal(err)
				}
			}
		},
	}
	var took [3][]float64
	n := 0
	for b.Loop() {
		for k := range 3 {
			op := (n + k) % 3
			start := time.Now()
			ops[op]()
			took[op] = append(took[op], float64(time.Since(start).Nanoseconds()))
		}
		n++
	}
	var med [3]float64
	for i := range took {
		slices.Sort(took[i])
		med[i] = took[i][len(took[i])/2]
	}
	b.ReportMetric(med[0], "atomic-ns/op")
	b.ReportMetric(med[1], "batch-ns/op")
	b.ReportMetric(med[2], "single10-ns/op")
	b.ReportMetric(med[0]/med[1], "atomic/batch")
	b.ReportMetric(med[0]/med[2], "atomic/single10")
}
