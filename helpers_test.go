package tablekit_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

func TestWriteAll(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	const n = 1030
	var ws []tablekit.BatchWrite
	for i := range n {
		cols := []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i))}}
		if i == 777 {
			cols[0].Name = "bad name" // refused: one row's own error
		}
		ws = append(ws, tablekit.BatchPut("t", tablekit.Key("id", tablekit.Integer(int64(i))), cols))
	}
	res, err := db.WriteAll(ctx, ws)
	if len(res) != n {
		t.Fatalf("%d results for %d writes", len(res), n)
	}
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !errors.Is(res[777].Err, tablekit.ErrInvalidArgument) {
		t.Fatalf("joined error %v, row 777: %v", err, res[777].Err)
	}
	got := 0
	for r, err := range db.Table("t").Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := r.Get("n"); v != r.Key[0].Value {
			t.Fatalf("row %v holds %v", r.Key, v)
		}
		got++
	}
	if got != n-1 {
		t.Fatalf("%d rows stored, want %d", got, n-1)
	}
	// The same row written in several batches: applied in order.
	ws = ws[:0]
	for i := range 450 {
		ws = append(ws, tablekit.BatchUpdate("t", tablekit.Key("id", tablekit.Integer(1)), []tablekit.Change{tablekit.Put("last", tablekit.Integer(int64(i)))}))
	}
	if _, err := db.WriteAll(ctx, ws); err != nil {
		t.Fatal(err)
	}
	r, _, err := db.Table("t").GetRow(ctx, tablekit.Key("id", tablekit.Integer(1)))
	if v, _ := r.Get("last"); err != nil || v != tablekit.Integer(449) {
		t.Fatalf("last = %v (%v), want 449", v, err)
	}
}

func TestPrefixRange(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	schema := tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
		t.Fatal(err)
	}
	var ws []tablekit.BatchWrite
	for _, u := range []string{"a", "b", "bb", "c"} {
		for s := range 3 {
			ws = append(ws, tablekit.BatchPut("t", tablekit.Key("user", tablekit.String(u)).Add("seq", tablekit.Integer(int64(s))), nil))
		}
	}
	if _, err := db.WriteAll(ctx, ws); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	var seqs []int64
	for r, err := range tbl.PrefixRows(ctx, tablekit.Key("user", tablekit.String("b")), tablekit.Backward()) {
		if err != nil {
			t.Fatal(err)
		}
		if u, _ := r.Key[0].Value.Str(); u != "b" {
			t.Fatalf("row %v outside the prefix", r.Key)
		}
		s, _ := r.Key[1].Value.Int()
		seqs = append(seqs, s)
	}
	if len(seqs) != 3 || seqs[0] != 2 || seqs[2] != 0 {
		t.Fatalf("backward prefix rows %v, want [2 1 0]", seqs)
	}
	for _, bad := range []tablekit.PrimaryKey{
		tablekit.Key("seq", tablekit.Integer(1)),
		tablekit.Key("user", tablekit.Integer(1)),
		tablekit.Key("user", tablekit.InfMin),
		tablekit.Key("user", tablekit.String("a")).Add("seq", tablekit.Integer(1)).Add("x", tablekit.Integer(1)),
	} {
		if _, _, err := tbl.PrefixRange(ctx, bad); !errors.Is(err, tablekit.ErrInvalidPrimaryKey) {
			t.Errorf("PrefixRange(%v): %v, want ErrInvalidPrimaryKey", bad, err)
		}
	}
	// A nil prefix names the whole table; a whole key names its one row,
	// in both directions (SPEC §8).
	count := func(prefix tablekit.PrimaryKey, opts ...tablekit.RangeOption) (keys []string) {
		for r, err := range tbl.PrefixRows(ctx, prefix, opts...) {
			if err != nil {
				t.Fatalf("PrefixRows(%v): %v", prefix, err)
			}
			keys = append(keys, r.Key.String())
		}
		return keys
	}
	if n := len(count(nil)); n != 12 {
		t.Errorf("PrefixRows(nil) read %d rows, want the whole table's 12", n)
	}
	if n := len(count(nil, tablekit.Backward())); n != 12 {
		t.Errorf("PrefixRows(nil, Backward) read %d rows, want 12", n)
	}
	for _, u := range []string{"a", "b", "bb", "c"} {
		for s := range int64(3) {
			whole := tablekit.Key("user", tablekit.String(u)).Add("seq", tablekit.Integer(s))
			for _, opts := range [][]tablekit.RangeOption{nil, {tablekit.Backward()}} {
				if got := count(whole, opts...); len(got) != 1 || got[0] != whole.String() {
					t.Errorf("PrefixRows(%v, %d options) = %v, want that one row", whole, len(opts), got)
				}
			}
			start, end, err := tbl.PrefixRange(ctx, whole)
			if err != nil {
				t.Fatal(err)
			}
			page, err := tbl.GetRange(ctx, start, end)
			if err != nil || len(page.Rows) != 1 || !page.Rows[0].Key.Equal(whole) {
				t.Errorf("GetRange of PrefixRange(%v) = %v, %v; want that one row", whole, page.Rows, err)
			}
		}
	}
	if v := tablekit.VersionAt(time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC)); v != 1468972800000 || !tablekit.VersionTime(v).Equal(time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("VersionAt = %d", v)
	}
}

// A whole-key prefix of the longest key values still names exactly one
// row: its successor is not the value followed by a zero byte (too long)
// but the next value of at most MaxKeyValueSize bytes.
func TestPrefixRangeLongestKey(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeBinary}}}); err != nil {
		t.Fatal(err)
	}
	long := append(bytes.Repeat([]byte("a"), tablekit.MaxKeyValueSize-1), 0xff)
	next := append(bytes.Repeat([]byte("a"), tablekit.MaxKeyValueSize-2), 'b')
	for _, k := range [][]byte{long, next, append(long[:len(long):len(long)], 0)[:tablekit.MaxKeyValueSize-1]} {
		if err := db.Table("t").PutRow(ctx, tablekit.Key("k", tablekit.Binary(k)), nil); err != nil {
			t.Fatal(err)
		}
	}
	var got int
	for r, err := range db.Table("t").PrefixRows(ctx, tablekit.Key("k", tablekit.Binary(long))) {
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := r.Key[0].Value.Bytes(); !bytes.Equal(b, long) {
			t.Errorf("row %v is not the prefix's", r.Key)
		}
		got++
	}
	if got != 1 {
		t.Fatalf("PrefixRows of a %d-byte key read %d rows, want 1", len(long), got)
	}
}
