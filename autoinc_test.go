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

// aiSpy is a local engine that claims auto-increment columns and counts the
// requests holding the placeholder that reach it: the Client's refusals
// must come before any call.
type aiSpy struct {
	tablekit.Backend
	placeholders atomic.Int64
}

func (s *aiSpy) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

func (s *aiSpy) saw(keys ...tablekit.PrimaryKey) {
	for _, k := range keys {
		if k.AutoIncrementIndex() >= 0 {
			s.placeholders.Add(1)
		}
	}
}

func (s *aiSpy) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	s.saw(req.Key)
	return s.Backend.GetRow(ctx, req)
}

func (s *aiSpy) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	s.saw(req.Start, req.End)
	return s.Backend.GetRange(ctx, req)
}

func (s *aiSpy) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	s.saw(req.Key)
	return s.Backend.Write(ctx, req)
}

var aiSchema = tablekit.KeySchema{
	{Name: "conv", Type: tablekit.TypeString},
	{Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true},
	{Name: "part", Type: tablekit.TypeInteger},
}

func aiKey(seq tablekit.Value) tablekit.PrimaryKey {
	return tablekit.Key("conv", tablekit.String("c1")).Add("seq", seq).Add("part", tablekit.Integer(1))
}

// wantInvalid fails unless err is ErrInvalidArgument naming the table and
// the column.
func wantInvalid(t *testing.T, what string, err error, column string) {
	t.Helper()
	var te *tablekit.Error
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !errors.As(err, &te) || te.Table == "" || !strings.Contains(err.Error(), `"`+column+`"`) {
		t.Errorf("%s: %v, want ErrInvalidArgument naming the table and column %q", what, err, column)
	}
}

func TestAutoIncrementCreateTable(t *testing.T) {
	ctx := context.Background()
	spy := &aiSpy{Backend: localengine.New()}
	db := tablekit.NewClient(spy)
	defer db.Close()
	for _, tc := range []struct {
		name, column string
		key          tablekit.KeySchema
	}{
		{"first", "id", tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger, AutoIncrement: true}, {Name: "b", Type: tablekit.TypeInteger}}},
		{"string", "b", tablekit.KeySchema{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeString, AutoIncrement: true}}},
		{"two", "c", tablekit.KeySchema{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger, AutoIncrement: true}, {Name: "c", Type: tablekit.TypeInteger, AutoIncrement: true}}},
	} {
		err := db.CreateTable(ctx, tablekit.TableMeta{Name: tc.name, Key: tc.key})
		wantInvalid(t, "CreateTable "+tc.name, err, tc.column)
		if names, _ := db.ListTables(ctx); len(names) != 0 {
			t.Fatalf("refused CreateTable %s created %v", tc.name, names)
		}
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "ok", Key: aiSchema}); err != nil {
		t.Fatal(err)
	}
	m, err := db.DescribeTable(ctx, "ok")
	if err != nil || !m.Key[1].AutoIncrement || m.Key[0].AutoIncrement || m.Key[2].AutoIncrement {
		t.Fatalf("DescribeTable: %+v, %v; want seq auto-increment", m.Key, err)
	}

	// A backend without the capability: refused before any call.
	bare := tablekit.NewClient(struct{ tablekit.Backend }{localengine.New()}) // hides its Capabilities
	defer bare.Close()
	if bare.Capabilities().AutoIncrement {
		t.Fatal("the backend under test claims AutoIncrement: use one that does not")
	}
	err = bare.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: aiSchema})
	var te *tablekit.Error
	if !errors.Is(err, tablekit.ErrUnimplemented) || !errors.As(err, &te) || te.Table != "t" {
		t.Fatalf("CreateTable on a backend without AutoIncrement: %v, want ErrUnimplemented naming the table", err)
	}
	if names, _ := bare.ListTables(ctx); len(names) != 0 {
		t.Fatalf("refused CreateTable created %v", names)
	}
}

func TestAutoIncrementRefused(t *testing.T) {
	ctx := context.Background()
	spy := &aiSpy{Backend: localengine.New()}
	db := tablekit.NewClient(spy)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "msgs", Key: aiSchema}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table("msgs")
	ph := aiKey(tablekit.AutoIncrement)
	real := aiKey(tablekit.Integer(5))
	cols := []tablekit.Column{{Name: "body", Value: tablekit.String("hi")}}
	onPart := tablekit.Key("conv", tablekit.String("c1")).Add("seq", tablekit.Integer(1)).Add("part", tablekit.AutoIncrement)
	onFirst := tablekit.Key("conv", tablekit.AutoIncrement).Add("seq", tablekit.Integer(1)).Add("part", tablekit.Integer(1))

	_, _, err := tb.GetRow(ctx, ph)
	wantInvalid(t, "GetRow", err, "seq")
	wantInvalid(t, "DeleteRow", tb.DeleteRow(ctx, ph), "seq")
	wantInvalid(t, "PutRow on a non-auto-increment column", tb.PutRow(ctx, onPart, cols), "part")
	wantInvalid(t, "PutRow on the first column", tb.PutRow(ctx, onFirst, cols), "conv")
	_, err = tb.UpdateRow(ctx, onPart, []tablekit.Change{tablekit.Put("body", tablekit.String("x"))})
	wantInvalid(t, "UpdateRow on a non-auto-increment column", err, "part")
	wantInvalid(t, "stored value", tb.PutRow(ctx, real, []tablekit.Column{{Name: "body", Value: tablekit.AutoIncrement}}), "body")
	_, err = tb.UpdateRow(ctx, real, []tablekit.Change{tablekit.Put("body", tablekit.AutoIncrement)})
	wantInvalid(t, "stored value in an update", err, "body")
	wantInvalid(t, "condition", tb.PutRow(ctx, real, cols, tablekit.IfMatch(tablekit.SingleColumnValue("n", tablekit.Equal, tablekit.AutoIncrement))), "n")
	_, _, err = tb.GetRow(ctx, real, tablekit.WithFilter(tablekit.SingleColumnValue("n", tablekit.Less, tablekit.AutoIncrement)))
	wantInvalid(t, "filter", err, "n")
	_, err = tb.GetRange(ctx, ph, aiKey(tablekit.InfMax))
	wantInvalid(t, "range start", err, "seq")
	for _, err := range tb.Rows(ctx, aiKey(tablekit.InfMin), ph) {
		wantInvalid(t, "range end", err, "seq")
		break
	}
	_, _, err = tb.PrefixRange(ctx, tablekit.Key("conv", tablekit.String("c1")).Add("seq", tablekit.AutoIncrement))
	wantInvalid(t, "PrefixRange", err, "seq")
	got, err := db.BatchGetRow(ctx, []tablekit.BatchGet{{Table: "msgs", Key: ph}})
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "BatchGetRow", got[0].Err, "seq")
	res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{tablekit.BatchDelete("msgs", ph), tablekit.BatchPut("msgs", onPart, cols)})
	if err != nil {
		t.Fatal(err)
	}
	wantInvalid(t, "BatchDelete", res[0].Err, "seq")
	wantInvalid(t, "BatchPut on a non-auto-increment column", res[1].Err, "part")
	if n := spy.placeholders.Load(); n != 0 {
		t.Fatalf("%d requests holding AutoIncrement reached the backend", n)
	}
	n := 0
	for _, err := range tb.PrefixRows(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 0 {
		t.Fatalf("refused writes left %d rows", n)
	}
}

func TestAutoIncrementKeyHelpers(t *testing.T) {
	k := aiKey(tablekit.AutoIncrement)
	if i := k.AutoIncrementIndex(); i != 1 {
		t.Fatalf("AutoIncrementIndex = %d, want 1", i)
	}
	got := k.WithAutoIncrement(42)
	if !got.Equal(aiKey(tablekit.Integer(42))) || !k[1].Value.IsAutoIncrement() {
		t.Fatalf("WithAutoIncrement(42) = %v (the original now %v)", got, k)
	}
	if i := got.AutoIncrementIndex(); i != -1 {
		t.Fatalf("AutoIncrementIndex of a real key = %d, want -1", i)
	}
	if tablekit.AutoIncrement.IsValid() || tablekit.Integer(1).IsAutoIncrement() {
		t.Fatal("AutoIncrement is valid, or Integer(1) a placeholder")
	}
	if s := k.String(); !strings.Contains(s, "seq=AutoIncrement") {
		t.Fatalf("key formats as %s", s)
	}
}

// Messages of a conversation get their sequence numbers from the store
// (SPEC §14): the key's "seq" is AutoIncrement, and ReturnKey says what the
// store assigned.
func ExampleReturnKey() {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: "messages", Key: tablekit.KeySchema{
		{Name: "conversation", Type: tablekit.TypeString},
		{Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true},
	}})
	if err != nil {
		panic(err)
	}
	msgs := db.Table("messages")
	for _, text := range []string{"hello", "how are you?"} {
		var key tablekit.PrimaryKey
		key0 := tablekit.Key("conversation", tablekit.String("c1")).Add("seq", tablekit.AutoIncrement)
		if err := msgs.PutRow(ctx, key0, []tablekit.Column{{Name: "text", Value: tablekit.String(text)}}, tablekit.ReturnKey(&key)); err != nil {
			panic(err)
		}
		fmt.Println(key)
	}
	// Output:
	// (conversation=String("c1"), seq=Integer(1))
	// (conversation=String("c1"), seq=Integer(2))
}

func TestAutoIncrementBatches(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "msgs", Key: aiSchema}); err != nil {
		t.Fatal(err)
	}
	// 450 writes of one request key: each a new row (no same-row waves).
	var ws []tablekit.BatchWrite
	for i := range 450 {
		ws = append(ws, tablekit.BatchPut("msgs", aiKey(tablekit.AutoIncrement), []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i))}}))
	}
	res, err := db.WriteAll(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for i, r := range res {
		s, ok := r.Key[1].Value.Int()
		if !ok || seen[s] || !r.Key.Equal(aiKey(tablekit.Integer(s))) {
			t.Fatalf("write %d: key %v (seen before: %v)", i, r.Key, seen[s])
		}
		seen[s] = true
		row, found, err := db.Table("msgs").GetRow(ctx, r.Key)
		if v, _ := row.Get("n"); err != nil || !found || v != tablekit.Integer(int64(i)) {
			t.Fatalf("row %v: %v %v %v, want n = %d", r.Key, row, found, err, i)
		}
	}
	// Two in one atomic write: two rows, not one row twice.
	var k0 tablekit.PrimaryKey
	ares, err := db.Table("msgs").AtomicWrite(ctx, []tablekit.BatchWrite{
		tablekit.BatchPut("", aiKey(tablekit.AutoIncrement), nil, tablekit.ReturnKey(&k0)),
		tablekit.BatchUpdate("", aiKey(tablekit.AutoIncrement), []tablekit.Change{tablekit.Increment("n", 1)}),
	})
	if err != nil || len(ares) != 2 || ares[0].Key.Equal(ares[1].Key) || !k0.Equal(ares[0].Key) || ares[1].Increments == nil {
		t.Fatalf("AtomicWrite: %+v, %v (ReturnKey %v)", ares, err, k0)
	}
	// ReturnKey on a delete is ignored; on a real key it is that key.
	var kd, kr tablekit.PrimaryKey
	if err := db.Table("msgs").DeleteRow(ctx, k0, tablekit.ReturnKey(&kd)); err != nil || kd != nil {
		t.Fatalf("DeleteRow: %v, ReturnKey %v", err, kd)
	}
	if _, err := db.Table("msgs").UpdateRow(ctx, ares[1].Key, []tablekit.Change{tablekit.Increment("n", 1)}, tablekit.ReturnKey(&kr)); err != nil || !kr.Equal(ares[1].Key) {
		t.Fatalf("UpdateRow: %v, ReturnKey %v", err, kr)
	}
}

// BenchmarkAutoIncrementPut: a PutRow of a new row whose key holds
// AutoIncrement against a PutRow of a new row with a real key (the same
// schema, without the auto-increment flag), on the local engine and on
// the file engine (synced commits, its default; and NoSync). Each
// iteration runs both, in alternating order, so that they meet the same
// load; the metrics are the median time of each and their ratio:
//
//	go test -run '^$' -bench BenchmarkAutoIncrementPut -benchtime 5000x .
func BenchmarkAutoIncrementPut(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchAutoInc(b, localengine.New()) })
	for _, nosync := range []bool{false, true} {
		b.Run(fmt.Sprintf("file/nosync=%v", nosync), func(b *testing.B) {
			e, err := fileengine.Open(b.TempDir(), &fileengine.Options{NoSync: nosync})
			if err != nil {
				b.Fatal(err)
			}
			benchAutoInc(b, e)
		})
	}
}

func benchAutoInc(b *testing.B, e tablekit.Backend) {
	ctx := context.Background()
	db := tablekit.NewClient(e)
	defer db.Close()
	for name, ai := range map[string]bool{"plain": false, "auto": true} {
		err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{
			{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: ai}}})
		if err != nil {
			b.Fatal(err)
		}
	}
	plain, auto := db.Table("plain"), db.Table("auto")
	cols := []tablekit.Column{{Name: "v", Value: tablekit.String(strings.Repeat("x", 100))}}
	ph := tablekit.Key("p", tablekit.String("conv")).Add("s", tablekit.AutoIncrement)
	var seq int64
	ops := [2]func(){
		func() {
			seq++
			if err := plain.PutRow(ctx, tablekit.Key("p", tablekit.String("conv")).Add("s", tablekit.Integer(seq)), cols); err != nil {
				b.Fatal(err)
			}
		},
		func() {
			if err := auto.PutRow(ctx, ph, cols); err != nil {
				b.Fatal(err)
			}
		},
	}
	var took [2][]float64
	n := 0
	for b.Loop() {
		for k := range 2 {
			op := (n + k) % 2
			start := time.Now()
			ops[op]()
			took[op] = append(took[op], float64(time.Since(start).Nanoseconds()))
		}
		n++
	}
	var med [2]float64
	for i := range took {
		slices.Sort(took[i])
		med[i] = took[i][len(took[i])/2]
	}
	b.ReportMetric(med[0], "plain-ns/op")
	b.ReportMetric(med[1], "auto-ns/op")
	b.ReportMetric(med[1]/med[0], "auto/plain")
}
