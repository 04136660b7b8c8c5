package tablekit_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// aiSpy is a local engine that claims auto-increment columns and counts the
// requests holding the placeholder that reach it: the Client's refusals
// must come before any call.
type aiSpy struct {
	tablekit.Backend
	placeholders atomic.Int64
}

func (s *aiSpy) Capabilities() tablekit.Capabilities {
	return tablekit.Capabilities{AutoIncrement: true}
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
	bare := tablekit.NewClient(localengine.New())
	defer bare.Close()
	if bare.Capabilities().AutoIncrement {
		t.Fatal("the local engine under test claims AutoIncrement: use a backend that does not")
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
