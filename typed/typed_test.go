package typed_test

import (
	"context"
	"errors"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/typed"
)

type Level int8

type Base struct {
	Created time.Time `tablekit:"created"`
}

type Record struct {
	Base
	ID     string        `tablekit:"id,key"`
	Seq    uint32        `tablekit:"seq,key"`
	Name   string        `tablekit:"name"`
	Level  Level         `tablekit:"level"`
	Big    uint64        `tablekit:"big"`
	Ratio  float32       `tablekit:"ratio"`
	OK     bool          `tablekit:"ok"`
	Data   []byte        `tablekit:"data"`
	TTL    time.Duration `tablekit:"ttl"`
	Addr   netip.Addr    `tablekit:"addr"` // TextMarshaler
	Note   *string       `tablekit:"note"`
	Score  float64       `tablekit:"score,omitempty"`
	Cache  string        `tablekit:"-"`
	Plain  int
	hidden int
}

func newTable(t *testing.T) (*tablekit.Client, *tablekit.Table) {
	t.Helper()
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	t.Cleanup(func() { db.Close() })
	schema := tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "r", Key: schema}); err != nil {
		t.Fatal(err)
	}
	return db, db.Table("r")
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, tbl := newTable(t)
	note := "hi"
	in := Record{Base: Base{Created: time.UnixMilli(1700000000123)}, ID: "a", Seq: 7, Name: "click", Level: -3, Big: math.MaxInt64,
		Ratio: 0.5, OK: true, Data: []byte{0, 1}, TTL: 1500 * time.Millisecond, Addr: netip.MustParseAddr("10.0.0.1"), Note: &note, Cache: "x", Plain: 9, hidden: 1}
	key, cols, err := typed.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != 2 || key[0].Name != "id" || key[1].Value != tablekit.Integer(7) {
		t.Fatalf("key %v", key)
	}
	for _, c := range cols {
		if c.Name == "score" || c.Name == "Cache" || c.Name == "hidden" {
			t.Fatalf("column %q written", c.Name)
		}
	}
	recs := typed.Of[Record](tbl)
	if err := recs.Put(ctx, &in); err != nil {
		t.Fatal(err)
	}
	out, found, err := recs.Get(ctx, key)
	if err != nil || !found {
		t.Fatal(found, err)
	}
	in.Cache, in.hidden = "", 0
	if out.Created.UnixMilli() != in.Created.UnixMilli() || out.Note == nil || *out.Note != "hi" || string(out.Data) != string(in.Data) || out.Addr != in.Addr {
		t.Fatalf("got %+v", out)
	}
	out.Created, in.Created, out.Note, in.Note, out.Data, in.Data = time.Time{}, time.Time{}, nil, nil, nil, nil
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	// Update keeps other columns; nil pointers stay absent.
	if err := recs.Update(ctx, &Record{ID: "a", Seq: 7, Name: "view"}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for r, err := range recs.PrefixRows(ctx, tablekit.Key("id", tablekit.String("a"))) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != "view" || r.Note == nil || *r.Note != "hi" { // nil pointers leave columns as they are
			t.Fatalf("after Update: %+v", r)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d rows", n)
	}
	errs, err := typed.PutAll(ctx, db, recs, []Record{{ID: "b", Seq: 1}, {ID: "b", Seq: 2}})
	if err != nil || len(errs) != 2 {
		t.Fatal(errs, err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	_, tbl := newTable(t)
	if _, _, err := typed.Marshal(Record{ID: "a", Big: math.MaxUint64}); !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "Big") {
		t.Errorf("uint64 overflow: %v", err)
	}
	if err := tbl.PutRow(ctx, tablekit.Key("id", tablekit.String("x")).Add("seq", tablekit.Integer(1)),
		[]tablekit.Column{{Name: "name", Value: tablekit.Integer(5)}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := typed.Of[Record](tbl).Get(ctx, tablekit.Key("id", tablekit.String("x")).Add("seq", tablekit.Integer(1)))
	for _, want := range []string{"Name", `"name"`, "string", "Integer"} {
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("mismatched type: %v, want it to name %s", err, want)
		}
	}
	if err := tbl.PutRow(ctx, tablekit.Key("id", tablekit.String("y")).Add("seq", tablekit.Integer(1)),
		[]tablekit.Column{{Name: "level", Value: tablekit.Integer(300)}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := typed.Of[Record](tbl).Get(ctx, tablekit.Key("id", tablekit.String("y")).Add("seq", tablekit.Integer(1))); !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "300") {
		t.Errorf("int8 overflow: %v", err)
	}
	type bad struct {
		C chan int
	}
	if _, _, err := typed.Marshal(bad{}); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("unmapped type: %v", err)
	}
}

// FuzzRoundTrip: Marshal then Unmarshal gives the value back.
func FuzzRoundTrip(f *testing.F) {
	f.Add("a", int64(1), uint16(2), 1.5, true, []byte{1}, "n")
	f.Fuzz(func(t *testing.T, id string, i int64, u uint16, x float64, b bool, data []byte, s string) {
		type R struct {
			ID   string  `tablekit:"id,key"`
			I    int64   `tablekit:"i"`
			U    uint16  `tablekit:"u"`
			X    float64 `tablekit:"x"`
			B    bool    `tablekit:"b"`
			Data []byte  `tablekit:"data"`
			S    *string `tablekit:"s"`
		}
		in := R{ID: id, I: i, U: u, X: x, B: b, Data: data, S: &s}
		key, cols, err := typed.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out R
		if err := typed.Unmarshal(tablekit.Row{Key: key, Columns: sortCols(cols)}, &out); err != nil {
			t.Fatal(err)
		}
		if out.ID != in.ID || out.I != in.I || out.U != in.U || math.Float64bits(out.X) != math.Float64bits(in.X) || out.B != in.B ||
			string(out.Data) != string(in.Data) || *out.S != s {
			t.Fatalf("got %+v, want %+v", out, in)
		}
	})
}

func sortCols(c []tablekit.Column) []tablekit.Column { return c }
