package gcpbigtable_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// autoKey is the key schema of the auto-increment tests: (pk Binary, seq
// Integer auto-increment). Binary, so that a partition key may start with
// the bytes closest to the counter rows' (00 00): "" is 00 01, "\x00" is
// 00 FF 00 01.
var autoKey = tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeBinary}, {Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true}}

func autoPK(p string) tablekit.PrimaryKey {
	return tablekit.Key("pk", tablekit.Binary([]byte(p))).Add("seq", tablekit.AutoIncrement)
}

func seqOf(t testing.TB, k tablekit.PrimaryKey) int64 {
	t.Helper()
	v, _ := k.Get("seq")
	n, ok := v.Int()
	if !ok || n <= 0 {
		t.Fatalf("key %v: seq is not a positive Integer", k)
	}
	return n
}

func newAutoTable(t *testing.T) (*tablekit.Client, *gcpbigtable.Backend, *tablekit.Table) {
	t.Helper()
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.SystemClock{})
	if err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "auto", Key: autoKey}); err != nil {
		t.Fatal(err)
	}
	return db, b, db.Table("auto")
}

// TestAutoIncrementConcurrent: 16 writers put rows with AutoIncrement into
// partition keys "" and "\x00" (the keys nearest the counter rows): every
// key assigned is unique within its partition, each writer's keys
// increase, and no range read (the whole table either way, a partition)
// returns a counter row, which holds the last value where the layout says.
func TestAutoIncrementConcurrent(t *testing.T) {
	ctx := context.Background()
	db, b, tbl := newAutoTable(t)
	meta, err := db.DescribeTable(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Key[1].AutoIncrement || meta.Key[0].AutoIncrement {
		t.Fatalf("DescribeTable key %+v: want seq auto-increment, pk not", meta.Key)
	}
	const writers, each = 16, 8
	parts := []string{"", "\x00"}
	keys := make([][2][]int64, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := (w + i) % 2
				var got tablekit.PrimaryKey
				if err := tbl.PutRow(ctx, autoPK(parts[p]), []tablekit.Column{{Name: "w", Value: tablekit.Integer(int64(w))}}, tablekit.ReturnKey(&got)); err != nil {
					errs <- err
					return
				}
				if v, _ := got.Get("pk"); v != tablekit.Binary([]byte(parts[p])) {
					errs <- fmt.Errorf("ReturnKey %v: wrong partition key, want %q", got, parts[p])
					return
				}
				keys[w][p] = append(keys[w][p], seqOf(t, got))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var all [2][]int64
	for w := range keys {
		for p := range parts {
			if !slices.IsSorted(keys[w][p]) {
				t.Errorf("writer %d got %v in partition %q: not increasing", w, keys[w][p], parts[p])
			}
			all[p] = append(all[p], keys[w][p]...)
		}
	}
	for p := range parts {
		slices.Sort(all[p])
		if n := len(slices.Compact(slices.Clone(all[p]))); n != len(all[p]) {
			t.Fatalf("partition %q: %d values assigned, %d distinct", parts[p], len(all[p]), n)
		}
	}
	count := func(start, end tablekit.PrimaryKey, opts ...tablekit.RangeOption) (n int) {
		for row, err := range tbl.Rows(ctx, start, end, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			seqOf(t, row.Key)
			n++
		}
		return n
	}
	lo := tablekit.Key("pk", tablekit.InfMin).Add("seq", tablekit.InfMin)
	hi := tablekit.Key("pk", tablekit.InfMax).Add("seq", tablekit.InfMax)
	if n := count(lo, hi); n != writers*each {
		t.Errorf("whole table forward: %d rows, want %d", n, writers*each)
	}
	if n := count(hi, lo, tablekit.Backward()); n != writers*each {
		t.Errorf("whole table backward: %d rows, want %d", n, writers*each)
	}
	for _, dir := range [][2]tablekit.PrimaryKey{{lo, hi}, {hi, lo}} { // pages of one row, both ways
		n := 0
		opts := []tablekit.RangeOption{tablekit.Limit(1)}
		if dir[0].Equal(hi) {
			opts = append(opts, tablekit.Backward())
		}
		for page := []tablekit.RangeOption(nil); ; {
			res, err := tbl.GetRange(ctx, dir[0], dir[1], append(opts, page...)...)
			if err != nil {
				t.Fatal(err)
			}
			n += len(res.Rows)
			if res.Next == nil {
				break
			}
			page = []tablekit.RangeOption{tablekit.ResumeFrom(res.Next)}
		}
		if n != writers*each {
			t.Errorf("whole table in pages of 1 from %v: %d rows, want %d", dir[0], n, writers*each)
		}
	}
	for p := range parts {
		n := 0
		for row, err := range tbl.PrefixRows(ctx, tablekit.Key("pk", tablekit.Binary([]byte(parts[p])))) {
			if err != nil {
				t.Fatal(err)
			}
			if s := seqOf(t, row.Key); s != all[p][n] {
				t.Fatalf("partition %q row %d: seq %d, want %d", parts[p], n, s, all[p][n])
			}
			n++
		}
		if n != len(all[p]) {
			t.Fatalf("partition %q: %d rows, want %d", parts[p], n, len(all[p]))
		}
	}
	// The counter rows: 00 00 and the partition key's encoding, m:seq the
	// last value, 8 bytes big endian.
	raw := rawTable(t, b, "auto")
	for p, enc := range []string{"\x00\x01", "\x00\xff\x00\x01"} {
		r, err := raw.ReadRow(ctx, "\x00\x00"+enc, bigtable.RowFilter(bigtable.LatestNFilter(1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(r["m"]) != 1 || r["m"][0].Column != "m:seq" || len(r["m"][0].Value) != 8 || len(r["c"]) != 0 {
			t.Fatalf("counter row of partition %q: %v", parts[p], r)
		}
		if v := int64(binary.BigEndian.Uint64(r["m"][0].Value)); v != all[p][len(all[p])-1] {
			t.Errorf("counter of partition %q holds %d, want the last value %d", parts[p], v, all[p][len(all[p])-1])
		}
	}
}

// TestAutoIncrementWrites: a failed condition takes no value; an update
// creates its row and returns its increments and key; batches return each
// write's key; a write whose key meets a row written with an explicit
// value takes a value past the greatest such row, which stays as it was;
// atomic writes stay refused.
func TestAutoIncrementWrites(t *testing.T) {
	ctx := context.Background()
	db, _, tbl := newAutoTable(t)
	var k1, k2 tablekit.PrimaryKey
	if err := tbl.PutRow(ctx, autoPK("p"), nil, tablekit.ReturnKey(&k1)); err != nil {
		t.Fatal(err)
	}
	if err := tbl.PutRow(ctx, autoPK("p"), nil, tablekit.ExpectExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("put AutoIncrement ExpectExist: %v, want ErrConditionFailed", err)
	}
	res, err := tbl.UpdateRow(ctx, autoPK("p"), []tablekit.Change{tablekit.Increment("n", 5)}, tablekit.ReturnKey(&k2))
	if err != nil {
		t.Fatal(err)
	}
	if seqOf(t, k2) != seqOf(t, k1)+1 || !res.Key.Equal(k2) {
		t.Fatalf("update after put %v and a failed condition: key %v (result %v), want the next value", k1, k2, res.Key)
	}
	if len(res.Increments) != 1 || res.Increments[0].Value != tablekit.Integer(5) {
		t.Fatalf("update's increment: %v, want 5", res.Increments)
	}
	row, found, err := tbl.GetRow(ctx, k2)
	if err != nil || !found || len(row.Columns) != 1 {
		t.Fatalf("GetRow(%v): %v %v %v", k2, row, found, err)
	}
	ws := []tablekit.BatchWrite{
		tablekit.BatchPut("auto", autoPK("p"), []tablekit.Column{{Name: "i", Value: tablekit.Integer(0)}}),
		tablekit.BatchPut("auto", tablekit.Key("pk", tablekit.Binary([]byte("q"))).Add("seq", tablekit.Integer(7)), nil),
		tablekit.BatchUpdate("auto", autoPK("p"), []tablekit.Change{tablekit.Put("i", tablekit.Integer(1))}),
	}
	out, err := db.BatchWriteRow(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		if r.Err != nil {
			t.Fatalf("batch write %d: %v", i, r.Err)
		}
	}
	if out[1].Key != nil || seqOf(t, out[0].Key) <= seqOf(t, k2) || seqOf(t, out[2].Key) <= seqOf(t, k2) || out[0].Key.Equal(out[2].Key) {
		t.Fatalf("batch keys %v, %v, %v: want two new distinct keys above %v and none for the explicit one", out[0].Key, out[1].Key, out[2].Key, k2)
	}
	// Partition r: rows written with explicit values, one where the
	// counter starts: the put that meets it takes a value past the
	// greatest (5), and both rows stay as they were.
	for _, n := range []int64{1, 5} {
		if err := tbl.PutRow(ctx, tablekit.Key("pk", tablekit.Binary([]byte("r"))).Add("seq", tablekit.Integer(n)), []tablekit.Column{{Name: "x", Value: tablekit.String("mine")}}); err != nil {
			t.Fatal(err)
		}
	}
	var k3, k4 tablekit.PrimaryKey
	if err := tbl.PutRow(ctx, autoPK("r"), []tablekit.Column{{Name: "x", Value: tablekit.String("new")}}, tablekit.ExpectNotExist, tablekit.ReturnKey(&k3)); err != nil || seqOf(t, k3) != 6 {
		t.Fatalf("put AutoIncrement meeting the explicit row 1: %v %v, want seq 6", k3, err)
	}
	if err := tbl.PutRow(ctx, autoPK("r"), nil, tablekit.ReturnKey(&k4)); err != nil || seqOf(t, k4) != 7 {
		t.Fatalf("next put: %v %v, want seq 7", k4, err)
	}
	var got []string
	for row, err := range tbl.PrefixRows(ctx, tablekit.Key("pk", tablekit.Binary([]byte("r")))) {
		if err != nil {
			t.Fatal(err)
		}
		var x []string
		for _, c := range row.Columns {
			x = append(x, c.Value.String())
		}
		got = append(got, fmt.Sprint(seqOf(t, row.Key), x))
	}
	if want := fmt.Sprint([]string{
		fmt.Sprint(1, []string{"mine"}),
		fmt.Sprint(5, []string{"mine"}),
		fmt.Sprint(6, []string{"new"}),
		fmt.Sprint(7, []string(nil)),
	}); fmt.Sprint(got) != want {
		t.Fatalf("partition r:\n got %v\nwant %v", got, want)
	}
	if _, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", autoPK("p"), nil)}); !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Fatalf("AtomicWrite: %v, want ErrUnimplemented", err)
	}
}

// TestAutoIncrementBatch: a batch's writes with AutoIncrement take their
// values with one ReadModifyWriteRow per partition key and get them in
// request order; one whose condition fails on the new row takes none.
func TestAutoIncrementBatch(t *testing.T) {
	ctx := context.Background()
	var rpcs atomic.Int64
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst", GC: gcpbigtable.GCOff}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	cfg.ClientOptions = append(emulatorOptions(newServer(t)), countRPCs(&rpcs)...)
	be, err := gcpbigtable.Open(ctx, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(be)
	t.Cleanup(func() { db.Close() })
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "auto", Key: autoKey}); err != nil {
		t.Fatal(err)
	}
	// Warm the Client's metadata cache up, so that only the writes' calls count.
	if err := db.Table("auto").PutRow(ctx, tablekit.Key("pk", tablekit.Binary(nil)).Add("seq", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	var ws []tablekit.BatchWrite
	for i := range 6 {
		p := []string{"x", "y"}[i%2]
		ws = append(ws, tablekit.BatchPut("auto", autoPK(p), []tablekit.Column{{Name: "i", Value: tablekit.Integer(int64(i))}}))
	}
	ws = append(ws, tablekit.BatchPut("auto", autoPK("x"), nil, tablekit.ExpectExist))
	rpcs.Store(0)
	out, err := db.BatchWriteRow(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if n := rpcs.Load(); n != 2+6 {
		t.Errorf("%d RPCs for 6 new rows in 2 partition keys, want 8 (2 ReadModifyWriteRow, 6 CheckAndMutateRow)", n)
	}
	for i, r := range out[:6] {
		if r.Err != nil {
			t.Fatalf("write %d: %v", i, r.Err)
		}
		if got, want := seqOf(t, r.Key), int64(i/2+1); got != want {
			t.Errorf("write %d: seq %d, want %d (request order)", i, got, want)
		}
	}
	if !errors.Is(out[6].Err, tablekit.ErrConditionFailed) {
		t.Fatalf("write 6 (ExpectExist): %v, want ErrConditionFailed", out[6].Err)
	}
	var k tablekit.PrimaryKey
	if err := db.Table("auto").PutRow(ctx, autoPK("x"), nil, tablekit.ReturnKey(&k)); err != nil || seqOf(t, k) != 4 {
		t.Fatalf("next put in x: %v %v, want seq 4 (the failed write took no value)", k, err)
	}
}
