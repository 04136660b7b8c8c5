package localengine

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// TestStripeHeldByAWriter: while a writer holds a row's stripe (as one
// does while it builds the row), a write to a row of another stripe and
// reads of the held row itself complete, and a write to the held row waits
// until the stripe is released, then applies. (A write that waited for the
// other stripe, or a read that took stripes, would hang: the test waits for
// each at most a minute before failing.)
func TestStripeHeldByAWriter(t *testing.T) {
	ctx := context.Background()
	e := New()
	db := tablekit.NewClient(e)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	key := func(i int) tablekit.PrimaryKey { return tablekit.Key("k", tablekit.Integer(int64(i))) }
	put := func(i int, v int64) error {
		return tbl.PutRow(ctx, key(i), []tablekit.Column{{Name: "v", Value: tablekit.Integer(v)}})
	}
	if err := put(0, 1); err != nil {
		t.Fatal(err)
	}
	held := stripeOf(codec.EncodeKey(key(0)))
	other := 1
	for stripeOf(codec.EncodeKey(key(other))) == held {
		other++
	}
	done := func(what string, f func() error) {
		t.Helper()
		ch := make(chan error, 1)
		go func() { ch <- f() }()
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s did not complete while another writer held row 0's stripe", what)
		}
	}
	st := &e.tables["t"].stripes[held]
	st.Lock()
	done("a write to a row of another stripe", func() error { return put(other, 2) })
	done("a read of the held row", func() error {
		_, found, err := tbl.GetRow(ctx, key(0))
		if !found && err == nil {
			t.Error("row 0 not found")
		}
		return err
	})
	done("a range read over the held row", func() error {
		res, err := tbl.GetRange(ctx, key(0), tablekit.Key("k", tablekit.InfMax))
		if err == nil && len(res.Rows) != 2 {
			t.Errorf("%d rows", len(res.Rows))
		}
		return err
	})
	waiting := make(chan error, 1)
	go func() { waiting <- put(0, 3) }()
	select {
	case err := <-waiting:
		t.Fatalf("a write to the held row completed (%v) while its stripe was held", err)
	case <-time.After(10 * time.Millisecond): // not proof that it waits, but a write that does not would usually be seen
	}
	st.Unlock()
	if err := <-waiting; err != nil {
		t.Fatal(err)
	}
	row, _, err := tbl.GetRow(ctx, key(0))
	if err != nil || len(row.Columns) != 1 {
		t.Fatal(row, err)
	}
	if v, _ := row.Columns[0].Value.Int(); v != 3 {
		t.Fatalf("row 0 holds %d, want 3", v)
	}
}
