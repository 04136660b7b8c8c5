package awsdynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// autoKey is the key schema of the auto-increment tests: (pk String, seq
// Integer auto-increment).
var autoKey = []tablekit.KeyColumn{{Name: "pk", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true}}

func autoPK(p string) tablekit.PrimaryKey {
	return tablekit.Key("pk", tablekit.String(p)).Add("seq", tablekit.AutoIncrement)
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

// TestAutoIncrementConcurrent: 16 writers put rows with AutoIncrement into
// one partition key (and a few into another): every key assigned is
// unique, each writer's keys increase, the rows read back under exactly
// those keys, and no range read (whole table, either direction, or the
// partition) ever returns the counter item, which sits where the layout
// says, holding the last value.
func TestAutoIncrementConcurrent(t *testing.T) {
	b := newBackend(t, &awsdynamodb.Options{Shards: 4})
	ctx := context.Background()
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{}, autoKey...)
	meta, err := db.DescribeTable(ctx, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Key[1].AutoIncrement || meta.Key[0].AutoIncrement {
		t.Fatalf("DescribeTable key %+v: want seq auto-increment, pk not", meta.Key)
	}
	const writers, each = 16, 8
	keys := make([][]int64, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p := "a"
				if w == 0 && i%2 == 0 {
					p = "b"
				}
				var got tablekit.PrimaryKey
				if err := tbl.PutRow(ctx, autoPK(p), []tablekit.Column{{Name: "w", Value: tablekit.Integer(int64(w))}}, tablekit.ReturnKey(&got)); err != nil {
					errs <- err
					return
				}
				if v, _ := got.Get("pk"); v != tablekit.String(p) {
					errs <- fmt.Errorf("ReturnKey %v: wrong partition key, want %q", got, p)
					return
				}
				if p == "a" {
					keys[w] = append(keys[w], seqOf(t, got))
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var all []int64
	for w, ks := range keys {
		if !slices.IsSorted(ks) {
			t.Errorf("writer %d got %v: not increasing", w, ks)
		}
		all = append(all, ks...)
	}
	slices.Sort(all)
	if n := len(slices.Compact(slices.Clone(all))); n != len(all) {
		t.Fatalf("%d values assigned in partition a, %d distinct: %v", len(all), n, all)
	}
	// Reads: the whole table both ways and the partition see the rows only.
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
	n := 0
	for row, err := range tbl.PrefixRows(ctx, tablekit.Key("pk", tablekit.String("a"))) {
		if err != nil {
			t.Fatal(err)
		}
		if s := seqOf(t, row.Key); s != all[n] {
			t.Fatalf("partition a row %d: seq %d, want %d", n, s, all[n])
		}
		n++
	}
	if n != len(all) {
		t.Fatalf("partition a: %d rows, want %d", n, len(all))
	}
	// The counter item: .s negative, .n the last value of partition a.
	native := nativeOf(t, b, tbl.Name())
	out, err := b.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(native), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	counters := 0
	for _, item := range out.Items {
		s := item[".s"].(*types.AttributeValueMemberN).Value
		if s[0] != '-' {
			continue
		}
		counters++
		if c, ok := item[".n"].(*types.AttributeValueMemberN); !ok || len(item) != 3 {
			t.Errorf("counter item %v: want .s, .k, .n", item)
		} else if string(item[".k"].(*types.AttributeValueMemberB).Value) == "a\x00\x01" && c.Value != fmt.Sprint(all[len(all)-1]) {
			t.Errorf("counter of partition a holds %s, want the last value %d", c.Value, all[len(all)-1])
		}
	}
	if counters != 2 {
		t.Errorf("%d counter items, want 2 (partitions a and b)", counters)
	}
}

// TestAutoIncrementWrites: a failed condition takes no value; an update
// creates its row and returns its increments and key; batches return each
// write's key; a key the counter is behind (a row written with an explicit
// value) is refused as ErrConditionFailed and the row stays as it was.
func TestAutoIncrementWrites(t *testing.T) {
	b := newBackend(t, nil)
	ctx := context.Background()
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{}, autoKey...)
	var k1, k2 tablekit.PrimaryKey
	if err := tbl.PutRow(ctx, autoPK("p"), nil, tablekit.ReturnKey(&k1)); err != nil {
		t.Fatal(err)
	}
	err := tbl.PutRow(ctx, autoPK("p"), nil, tablekit.ExpectExist)
	if !errors.Is(err, tablekit.ErrConditionFailed) {
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
		tablekit.BatchPut(tbl.Name(), autoPK("p"), []tablekit.Column{{Name: "i", Value: tablekit.Integer(0)}}),
		tablekit.BatchPut(tbl.Name(), tablekit.Key("pk", tablekit.String("q")).Add("seq", tablekit.Integer(7)), nil),
		tablekit.BatchUpdate(tbl.Name(), autoPK("p"), []tablekit.Change{tablekit.Put("i", tablekit.Integer(1))}),
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
		if err := tbl.PutRow(ctx, tablekit.Key("pk", tablekit.String("r")).Add("seq", tablekit.Integer(n)), []tablekit.Column{{Name: "x", Value: tablekit.String("mine")}}); err != nil {
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
	if got, want := partition(t, tbl, "r"), "[1 [mine] 5 [mine] 6 [new] 7 []]"; got != want {
		t.Fatalf("partition r:\n got %v\nwant %v", got, want)
	}
}

// partition lists the rows of partition key p: each one's seq and values.
func partition(t *testing.T, tbl *tablekit.Table, p string) string {
	t.Helper()
	var got []string
	for row, err := range tbl.PrefixRows(context.Background(), tablekit.Key("pk", tablekit.String(p))) {
		if err != nil {
			t.Fatal(err)
		}
		var x []string
		for _, c := range row.Columns {
			x = append(x, c.Value.String())
		}
		got = append(got, fmt.Sprint(seqOf(t, row.Key), x))
	}
	return fmt.Sprint(got)
}

// TestAutoIncrementAtomic, on moto: an atomic write's AutoIncrement keys
// are taken before the transaction, distinct and increasing in write
// order; an atomic write that fails writes nothing and leaves a gap.
func TestAutoIncrementAtomic(t *testing.T) {
	b := newMotoBackend(t, &awsdynamodb.Options{Shards: 2})
	ctx := context.Background()
	_, tbl := newTable(t, b, nil, tablekit.TableOptions{}, autoKey...)
	ws := []tablekit.BatchWrite{
		tablekit.BatchPut("", autoPK("o"), []tablekit.Column{{Name: "line", Value: tablekit.Integer(1)}}),
		tablekit.BatchPut("", tablekit.Key("pk", tablekit.String("o")).Add("seq", tablekit.Integer(1000)), nil),
		tablekit.BatchUpdate("", autoPK("o"), []tablekit.Change{tablekit.Increment("total", 3)}),
	}
	out, err := tbl.AtomicWrite(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	a, c := seqOf(t, out[0].Key), seqOf(t, out[2].Key)
	if a >= c || out[1].Key != nil || len(out[2].Increments) != 1 {
		t.Fatalf("atomic results %+v: want increasing keys for writes 0 and 2, none for 1, and 2's increment", out)
	}
	for _, k := range []tablekit.PrimaryKey{out[0].Key, out[2].Key} {
		if _, found, err := tbl.GetRow(ctx, k); err != nil || !found {
			t.Fatalf("GetRow(%v): %v %v", k, found, err)
		}
	}
	// Write 1 fails its condition: nothing is written.
	ws[1].Condition = tablekit.Condition{Row: tablekit.ExpectNotExist}
	_, err = tbl.AtomicWrite(ctx, ws)
	var ae *tablekit.AtomicWriteError
	if !errors.As(err, &ae) || ae.Index != 1 || !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("atomic write failing at 1: %v", err)
	}
	n := 0
	for _, err := range tbl.PrefixRows(ctx, tablekit.Key("pk", tablekit.String("o"))) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d rows after the failed atomic write, want 3", n)
	}
	var k tablekit.PrimaryKey
	if err := tbl.PutRow(ctx, autoPK("o"), nil, tablekit.ReturnKey(&k)); err != nil || seqOf(t, k) <= c {
		t.Fatalf("put after the failed atomic write: %v %v, want a value above %d", k, err, c)
	}
	// Partition n: explicit rows 1 and 4 raise the counter to 4 (SPEC §14:
	// later assigned values are greater than a real one), so an atomic
	// write of two new rows is given 5 and 6, and goes through with the
	// explicit rows as they were.
	for _, n := range []int64{1, 4} {
		if err := tbl.PutRow(ctx, tablekit.Key("pk", tablekit.String("n")).Add("seq", tablekit.Integer(n)), []tablekit.Column{{Name: "x", Value: tablekit.String("mine")}}); err != nil {
			t.Fatal(err)
		}
	}
	out, err = tbl.AtomicWrite(ctx, []tablekit.BatchWrite{
		tablekit.BatchPut("", autoPK("n"), []tablekit.Column{{Name: "x", Value: tablekit.String("a")}}),
		tablekit.BatchPut("", autoPK("n"), []tablekit.Column{{Name: "x", Value: tablekit.String("b")}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	a, c = seqOf(t, out[0].Key), seqOf(t, out[1].Key)
	if a <= 4 || c <= 4 || a == c {
		t.Fatalf("atomic write after rows 1 and 4: keys %d, %d; want two distinct values above 4", a, c)
	}
	want := fmt.Sprintf("[1 [mine] 4 [mine] %d [a] %d [b]]", a, c)
	if c < a {
		want = fmt.Sprintf("[1 [mine] 4 [mine] %d [b] %d [a]]", c, a)
	}
	if got := partition(t, tbl, "n"); got != want {
		t.Fatalf("partition n:\n got %v\nwant %v", got, want)
	}
}

// TestAutoIncrementBatch: a batch's writes with AutoIncrement take their
// values with one UpdateItem per partition key and get them in request
// order; one whose condition fails on the new row takes none.
func TestAutoIncrementBatch(t *testing.T) {
	ct := newCountingTransport()
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ct}), &awsdynamodb.Options{NoTransactions: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{}, autoKey...)
	var ws []tablekit.BatchWrite
	for i := range 6 {
		p := []string{"x", "y"}[i%2]
		ws = append(ws, tablekit.BatchPut(tbl.Name(), autoPK(p), []tablekit.Column{{Name: "i", Value: tablekit.Integer(int64(i))}}))
	}
	ws = append(ws, tablekit.BatchPut(tbl.Name(), autoPK("x"), nil, tablekit.ExpectExist))
	ct.reset()
	out, err := db.BatchWriteRow(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if n := ct.get("UpdateItem"); n != 2 {
		t.Errorf("%d UpdateItem calls for 6 new rows in 2 partition keys, want 2", n)
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
	if err := tbl.PutRow(ctx, autoPK("x"), nil, tablekit.ReturnKey(&k)); err != nil || seqOf(t, k) != 4 {
		t.Fatalf("next put in x: %v %v, want seq 4 (the failed write took no value)", k, err)
	}
}
