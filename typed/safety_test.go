package typed_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/typed"
)

// wantInvalid fails t unless err is an ErrInvalidArgument whose message
// contains every one of names.
func wantInvalid(t *testing.T, what string, err error, names ...string) {
	t.Helper()
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		return
	}
	var te *tablekit.Error
	if !errors.As(err, &te) {
		t.Errorf("%s: %T is not a *tablekit.Error", what, err)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("%s: %q does not name %s", what, err, n)
		}
	}
}

// countRows returns how many rows tbl holds.
func countRows(t *testing.T, tbl *tablekit.Table) int {
	t.Helper()
	n := 0
	start := tablekit.Key("id", tablekit.InfMin).Add("seq", tablekit.InfMin)
	end := tablekit.Key("id", tablekit.InfMax).Add("seq", tablekit.InfMax)
	for _, err := range tbl.Rows(context.Background(), start, end) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func TestNilIsAnErrorNotAPanic(t *testing.T) {
	ctx := context.Background()
	_, tbl := newTable(t)
	recs := typed.Of[Record](tbl)
	var nilRec *Record
	for what, call := range map[string]func() error{
		"Marshal(nil)":           func() error { _, _, err := typed.Marshal(nil); return err },
		"Marshal((*Record)nil)":  func() error { _, _, err := typed.Marshal(nilRec); return err },
		"Key(nil)":               func() error { _, err := typed.Key(nil); return err },
		"Unmarshal(row, nil)":    func() error { return typed.Unmarshal(tablekit.Row{}, nil) },
		"Put(ctx, nil)":          func() error { return recs.Put(ctx, nil) },
		"PutWrite(nil)":          func() error { _, err := recs.PutWrite(nil); return err },
		"Update(ctx, nil)":       func() error { return recs.Update(ctx, nil) },
		"UpdateFields(ctx, nil)": func() error { return recs.UpdateFields(ctx, nil, []string{"Name"}) },
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s panicked: %v", what, p)
				}
			}()
			wantInvalid(t, what, call(), "nil")
		}()
	}
	if n := countRows(t, tbl); n != 0 {
		t.Errorf("%d rows written", n)
	}
}

func TestFloat32OverflowIsAnError(t *testing.T) {
	type F struct {
		K string  `tablekit:"k,key"`
		X float32 `tablekit:"x"`
	}
	for _, c := range []struct {
		v    float64
		fail bool
	}{
		{1e300, true}, {-1e300, true}, {math.MaxFloat64, true},
		{math.MaxFloat32, false}, {-math.MaxFloat32, false}, {math.Inf(1), false}, {math.Inf(-1), false}, {1.5, false}, {1e-300, false},
	} {
		f := F{X: 7}
		err := typed.Unmarshal(tablekit.Row{Key: tablekit.Key("k", tablekit.String("a")),
			Columns: []tablekit.Column{{Name: "x", Value: tablekit.Double(c.v)}}}, &f)
		if !c.fail {
			if err != nil || f.X != float32(c.v) {
				t.Errorf("%g: %v, field %g", c.v, err, f.X)
			}
			continue
		}
		wantInvalid(t, "stored Double into float32", err, "field X", `"x"`, "float32")
		if f.X != 7 {
			t.Errorf("%g: the field holds %g after the error, want 7 (unchanged), not ±Inf", c.v, f.X)
		}
	}
}

func TestTaggedUnexportedFieldIsAnError(t *testing.T) {
	type secretive struct {
		ID     string `tablekit:"id,key"`
		secret string `tablekit:"secret"`
		opt    int    `tablekit:",omitempty"`
		plain  int    // untagged: not stored, as encoding/json does
	}
	_, _, err := typed.Marshal(secretive{ID: "a", secret: "s", opt: 1, plain: 2})
	wantInvalid(t, "tagged unexported field", err, "secret", "unexported")

	type untagged struct {
		ID    string `tablekit:"id,key"`
		plain int
		skip  int `tablekit:"-"`
	}
	if _, cols, err := typed.Marshal(untagged{ID: "a", plain: 1, skip: 2}); err != nil || len(cols) != 0 {
		t.Errorf("untagged or \"-\" unexported fields: %v %v", cols, err)
	}

	_, tbl := newTable(t)
	type R struct {
		ID    string `tablekit:"id,key"`
		Seq   int64  `tablekit:"seq,key"`
		total int    `tablekit:"total"`
	}
	wantInvalid(t, "typed.Of of a tagged unexported field", typed.Of[R](tbl).Put(context.Background(), &R{ID: "a", total: 1}), "total")
}

// PutAll with one value that cannot be stored: one error per value, in
// order, and every good value written.
func TestPutAllOneBadValue(t *testing.T) {
	ctx := context.Background()
	db, tbl := newTable(t)
	recs := typed.Of[Record](tbl)
	vs := []Record{{ID: "p", Seq: 1}, {ID: "p", Seq: 2, Big: math.MaxUint64}, {ID: "p", Seq: 3}}
	errs, err := typed.PutAll(ctx, db, recs, vs)
	if len(errs) != len(vs) {
		t.Fatalf("%d errors for %d values: %v", len(errs), len(vs), errs)
	}
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("good values failed: %v", errs)
	}
	wantInvalid(t, "errs[1]", errs[1], "value 1", "Big", `"big"`)
	wantInvalid(t, "joined", err, "Big")
	for _, seq := range []int64{1, 3} {
		if _, found, err := recs.Get(ctx, tablekit.Key("id", tablekit.String("p")).Add("seq", tablekit.Integer(seq))); err != nil || !found {
			t.Errorf("value seq=%d not written: %v", seq, err)
		}
	}
	if n := countRows(t, tbl); n != 2 {
		t.Errorf("%d rows, want 2", n)
	}
}

type Page struct {
	URL    string  `tablekit:"url,key"`
	Seq    int64   `tablekit:"seq,key"`
	Hits   int64   `tablekit:"hits"`
	Title  string  `tablekit:"title"`
	Status string  `tablekit:"status,omitempty"`
	Note   *string `tablekit:"note"`
}

func TestUpdateFieldsIsAPatch(t *testing.T) {
	ctx := context.Background()
	_, tbl := newTable2(t)
	pages := typed.Of[Page](tbl)
	key := tablekit.Key("url", tablekit.String("/a")).Add("seq", tablekit.Integer(1))
	note := "n"
	if err := pages.Put(ctx, &Page{URL: "/a", Seq: 1, Hits: 5, Title: "A", Status: "new", Note: &note}); err != nil {
		t.Fatal(err)
	}
	// The case: a partial struct. Update writes its zero into hits
	// (as documented); UpdateFields writes only the fields named.
	if err := pages.UpdateFields(ctx, &Page{URL: "/a", Seq: 1, Title: "B"}, []string{"Title"}); err != nil {
		t.Fatal(err)
	}
	got, _, err := pages.Get(ctx, key)
	if err != nil || got.Hits != 5 || got.Title != "B" || got.Status != "new" || got.Note == nil || *got.Note != "n" {
		t.Fatalf("after UpdateFields(Title): %+v %v", got, err)
	}
	// A zero can be written on purpose, by column name too; a named nil
	// pointer or empty omitempty field deletes its column.
	if err := pages.UpdateFields(ctx, &Page{URL: "/a", Seq: 1}, []string{"hits", "Note", "Status"}); err != nil {
		t.Fatal(err)
	}
	row, _, err := tbl.GetRow(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := row.Get("hits"); !ok || v != tablekit.Integer(0) {
		t.Errorf("hits = %v %v, want Integer(0)", v, ok)
	}
	for _, c := range []string{"note", "status"} {
		if v, ok := row.Get(c); ok {
			t.Errorf("column %s = %v, want deleted", c, v)
		}
	}
	if v, _ := row.Get("title"); v != tablekit.String("B") {
		t.Errorf("title = %v", v)
	}
	// Update, documented as writing zeros, does.
	if err := pages.Update(ctx, &Page{URL: "/a", Seq: 1, Title: "C"}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := pages.Get(ctx, key); got.Hits != 0 || got.Title != "C" {
		t.Errorf("after Update: %+v", got)
	}

	// A conditional patch: fails, writing nothing, when the row lacks the value.
	pending := tablekit.IfMatch(tablekit.SingleColumnValue("status", tablekit.Equal, tablekit.String("pending")).Required())
	err = pages.UpdateFields(ctx, &Page{URL: "/a", Seq: 1, Hits: 9}, []string{"Hits"}, pending)
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("conditional UpdateFields on a row without status: %v", err)
	}
	if got, _, _ := pages.Get(ctx, key); got.Hits != 0 {
		t.Errorf("a failed condition wrote hits = %d", got.Hits)
	}

	// Bad field lists: nothing written.
	for _, c := range []struct {
		fields []string
		names  []string
	}{
		{nil, []string{"names no field"}},
		{[]string{"Nope"}, []string{`"Nope"`, "Hits"}},
		{[]string{"URL"}, []string{"key field", "URL"}},
		{[]string{"Hits", "hits"}, []string{"twice", "Hits"}},
	} {
		err := pages.UpdateFields(ctx, &Page{URL: "/a", Seq: 1, Hits: 77}, c.fields)
		wantInvalid(t, strings.Join(c.fields, ","), err, c.names...)
	}
	if got, _, _ := pages.Get(ctx, key); got.Hits != 0 {
		t.Errorf("a refused UpdateFields wrote hits = %d", got.Hits)
	}
}

func newTable2(t *testing.T) (*tablekit.Client, *tablekit.Table) {
	t.Helper()
	db, _ := newTable(t)
	schema := tablekit.KeySchema{{Name: "url", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}
	if err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "pages", Key: schema}); err != nil {
		t.Fatal(err)
	}
	return db, db.Table("pages")
}
