package aliyuntablestore_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
)

var msgsMeta = tablekit.TableMeta{
	Name: "msgs",
	Key: tablekit.KeySchema{
		{Name: "conv", Type: tablekit.TypeString},
		{Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true},
	},
}

func msgKey(conv string) tablekit.PrimaryKey {
	return tablekit.Key("conv", tablekit.String(conv)).Add("seq", tablekit.AutoIncrement)
}

// seqOf checks that k is (conv, seq) with seq > after and returns seq.
func seqOf(t *testing.T, k tablekit.PrimaryKey, conv string, after int64) int64 {
	t.Helper()
	if len(k) != 2 || k[0].Name != "conv" || !k[0].Value.Equal(tablekit.String(conv)) || k[1].Name != "seq" {
		t.Fatalf("key %v, want (conv=%q, seq=…)", k, conv)
	}
	n, ok := k[1].Value.Int()
	if !ok || n <= after {
		t.Fatalf("key %v: seq must be an Integer > %d", k, after)
	}
	return n
}

// TestAutoIncrement: the adapter creates and describes an AUTO_INCREMENT
// key column and returns the key the server assigned from every kind of
// write (PutRow, UpdateRow with and without increments, BatchWriteRow,
// AtomicWrite).
func TestAutoIncrement(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	b := openAt(t, srv, srv.Endpoint(), nil)
	if !tablekit.CapabilitiesOf(b).AutoIncrement {
		t.Fatal("CapabilitiesOf(b).AutoIncrement is false")
	}
	db := tablekit.NewClient(b)
	if err := db.CreateTable(ctx, msgsMeta); err != nil {
		t.Fatal(err)
	}
	m, err := b.DescribeTable(ctx, "msgs")
	if err != nil {
		t.Fatal(err)
	}
	if m.Key[0].AutoIncrement || !m.Key[1].AutoIncrement {
		t.Fatalf("DescribeTable key %+v, want seq auto-increment", m.Key)
	}
	tbl := db.Table("msgs")
	read := func(k tablekit.PrimaryKey) tablekit.Row {
		t.Helper()
		r, found, err := tbl.GetRow(ctx, k)
		if err != nil || !found {
			t.Fatalf("GetRow %v: found %v, %v", k, found, err)
		}
		return r
	}

	var k tablekit.PrimaryKey
	if err := tbl.PutRow(ctx, msgKey("a"), []tablekit.Column{{Name: "v", Value: tablekit.String("put")}}, tablekit.ReturnKey(&k)); err != nil {
		t.Fatal(err)
	}
	last := seqOf(t, k, "a", 0)
	read(k)

	res, err := tbl.UpdateRow(ctx, msgKey("a"), []tablekit.Change{tablekit.Put("v", tablekit.String("update"))})
	if err != nil {
		t.Fatal(err)
	}
	last = seqOf(t, res.Key, "a", last)
	if v, _ := read(res.Key).Get("v"); !v.Equal(tablekit.String("update")) {
		t.Fatalf("updated row: v = %v", v)
	}

	res, err = tbl.UpdateRow(ctx, msgKey("a"), []tablekit.Change{tablekit.Put("v", tablekit.String("inc")), tablekit.Increment("n", 5)})
	if err != nil {
		t.Fatal(err)
	}
	last = seqOf(t, res.Key, "a", last)
	if len(res.Increments) != 1 || !res.Increments[0].Value.Equal(tablekit.Integer(5)) {
		t.Fatalf("increments %v, want n=5", res.Increments)
	}
	if n, _ := read(res.Key).Get("n"); !n.Equal(tablekit.Integer(5)) {
		t.Fatalf("incremented row: n = %v", n)
	}

	writes := []tablekit.BatchWrite{
		tablekit.BatchPut("msgs", msgKey("a"), []tablekit.Column{{Name: "v", Value: tablekit.String("b0")}}),
		tablekit.BatchUpdate("msgs", msgKey("a"), []tablekit.Change{tablekit.Put("v", tablekit.String("b1"))}),
		tablekit.BatchUpdate("msgs", msgKey("a"), []tablekit.Change{tablekit.Increment("n", 2)}),
	}
	for _, atomic := range []bool{false, true} {
		var out []tablekit.BatchWriteResult
		if atomic {
			out, err = db.AtomicWrite(ctx, writes)
		} else {
			out, err = db.BatchWriteRow(ctx, writes)
		}
		if err != nil {
			t.Fatalf("atomic=%v: %v", atomic, err)
		}
		seen := map[int64]bool{}
		for i, r := range out {
			if r.Err != nil {
				t.Fatalf("atomic=%v: write %d: %v", atomic, i, r.Err)
			}
			n := seqOf(t, r.Key, "a", last)
			if seen[n] {
				t.Fatalf("atomic=%v: seq %d assigned twice", atomic, n)
			}
			seen[n] = true
			read(r.Key)
		}
		if inc := out[2].Increments; len(inc) != 1 || !inc[0].Value.Equal(tablekit.Integer(2)) {
			t.Fatalf("atomic=%v: increments %v, want n=2", atomic, inc)
		}
		for n := range seen {
			last = max(last, n)
		}
	}
	var rows int
	for _, err := range tbl.Rows(ctx, tablekit.Key("conv", tablekit.String("a")).Add("seq", tablekit.InfMin), tablekit.Key("conv", tablekit.String("a")).Add("seq", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		rows++
	}
	if rows != 9 {
		t.Fatalf("%d rows, want 9", rows)
	}
}

// A write whose key the server assigns is never sent twice: when the
// connection fails after the server applied it, the adapter reports the
// failure instead of retrying (a second attempt would write a second row).
func TestAutoIncrementIsNotReplayed(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	if err := tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil)).CreateTable(ctx, msgsMeta); err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, srv)
	applyThenDrop := func(w http.ResponseWriter, r *http.Request) bool {
		srv.Handler().ServeHTTP(httptest.NewRecorder(), r) // applied
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close() // and the answer is lost
		}
		return true
	}
	db := tablekit.NewClient(openAt(t, srv, p.URL, aliyuntablestore.DefaultConfig()))
	tbl := db.Table("msgs")
	if _, _, err := tbl.GetRow(ctx, tablekit.Key("conv", tablekit.String("warm")).Add("seq", tablekit.Integer(1))); err != nil {
		t.Fatal(err)
	}
	count := func(conv string) int {
		n := 0
		for _, err := range tbl.Rows(ctx, tablekit.Key("conv", tablekit.String(conv)).Add("seq", tablekit.InfMin), tablekit.Key("conv", tablekit.String(conv)).Add("seq", tablekit.InfMax)) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	for _, tc := range []struct {
		op    string
		write func(conv string) error
	}{
		{"/PutRow", func(conv string) error {
			return tbl.PutRow(ctx, msgKey(conv), []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}})
		}},
		{"/BatchWriteRow", func(conv string) error {
			_, err := tbl.UpdateRow(ctx, msgKey(conv), []tablekit.Change{tablekit.Put("v", tablekit.Integer(1))})
			return err
		}},
	} {
		conv := "c" + tc.op
		p.on(tc.op, applyThenDrop)
		err := tc.write(conv)
		p.hook.Store(nil)
		if !errors.Is(err, tablekit.ErrUnavailable) {
			t.Fatalf("%s: err = %v, want ErrUnavailable", tc.op, err)
		}
		if n := count(conv); n != 1 {
			t.Errorf("%s: %d rows after one write, want 1", tc.op, n)
		}
	}
}
