package awsdynamodb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/localengine"
)

var valueCmp = cmp.Comparer(func(a, b tablekit.Value) bool { return a.Equal(b) })

func TestValuesKeepTheirTypes(t *testing.T) {
	b := newBackend(t)
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	_, tbl := newTable(t, b, clock, tablekit.TableOptions{MaxVersions: 3})
	now := clock.Now().UnixMilli()
	cols := []tablekit.Column{
		{Name: "b0", Value: tablekit.Boolean(false)},
		{Name: "b1", Value: tablekit.Boolean(true)},
		{Name: "bin", Value: tablekit.Binary([]byte{0, 0xff, 0})},
		{Name: "d", Value: tablekit.Double(7)},
		{Name: "dbig", Value: tablekit.Double(1e300)},
		{Name: "dneg0", Value: tablekit.Double(math.Copysign(0, -1))},
		{Name: "dtiny", Value: tablekit.Double(5e-324)},
		{Name: "empty", Value: tablekit.String("")},
		{Name: "emptyb", Value: tablekit.Binary(nil)},
		{Name: "i", Value: tablekit.Integer(7)},
		{Name: "imin", Value: tablekit.Integer(math.MinInt64)},
		{Name: "s", Value: tablekit.String("héllo\x00world")},
		{Name: "v", Value: tablekit.Integer(1), Version: now - 2000},
		{Name: "v", Value: tablekit.String("two"), Version: now - 1000},
		{Name: "v", Value: tablekit.Double(3), Version: now},
	}
	key := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(-5))
	if err := tbl.PutRow(ctx, key, cols); err != nil {
		t.Fatal(err)
	}
	row, found, err := tbl.GetRow(ctx, key, tablekit.MaxVersions(3))
	if err != nil || !found {
		t.Fatalf("GetRow: found=%v err=%v", found, err)
	}
	want := slices.Clone(cols)
	for i := range want {
		if want[i].Version == 0 {
			want[i].Version = now
		}
	}
	slices.SortStableFunc(want, func(a, b tablekit.Column) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return int(b.Version - a.Version)
	})
	if diff := cmp.Diff(want, row.Columns, valueCmp); diff != "" {
		t.Errorf("row read back differs (-want +got):\n%s", diff)
	}
	if !row.Key.Equal(key) {
		t.Errorf("key = %v, want %v", row.Key, key)
	}
	// Integer 7 and Double 7 stay apart: a filter on Integer 7 matches i, not d.
	_, found, err = tbl.GetRow(ctx, key, tablekit.WithFilter(tablekit.SingleColumnValue("d", tablekit.Equal, tablekit.Integer(7))))
	if err != nil || found {
		t.Errorf("Double 7 matched a filter on Integer 7: found=%v err=%v", found, err)
	}
}

// keyGen makes random keys of schema (pk, sk), with few partition values so
// that partitions hold several rows.
func randomKeys(r *rand.Rand, schema tablekit.KeySchema, n int) []tablekit.PrimaryKey {
	val := func(t tablekit.Type, first bool) tablekit.Value {
		switch t {
		case tablekit.TypeInteger:
			if first {
				return tablekit.Integer(r.Int64N(40) - 20)
			}
			return tablekit.Integer(r.Int64() - math.MaxInt64/2)
		case tablekit.TypeString:
			alpha := "a\x00b"
			k := r.IntN(4)
			if first {
				k = r.IntN(3)
			}
			s := make([]byte, k)
			for i := range s {
				s[i] = alpha[r.IntN(len(alpha))]
			}
			return tablekit.String(string(s))
		default:
			s := make([]byte, r.IntN(4))
			for i := range s {
				s[i] = []byte{0, 1, 0x7f, 0x80, 0xff}[r.IntN(5)]
			}
			return tablekit.Binary(s)
		}
	}
	seen := map[string]bool{}
	var out []tablekit.PrimaryKey
	for len(out) < n {
		var k tablekit.PrimaryKey
		for i, kc := range schema {
			k = k.Add(kc.Name, val(kc.Type, i == 0))
		}
		if e := string(codec.EncodeKey(k)); !seen[e] {
			seen[e] = true
			out = append(out, k)
		}
	}
	return out
}

// TestRangesMatchLocalEngine writes the same random rows to the adapter
// (with several shard counts) and to the local engine, then compares random
// forward and backward ranges, paged with random limits.
func TestRangesMatchLocalEngine(t *testing.T) {
	ctx := context.Background()
	schemas := []tablekit.KeySchema{
		{{Name: "pk", Type: tablekit.TypeString}, {Name: "sk", Type: tablekit.TypeInteger}},
		{{Name: "pk", Type: tablekit.TypeInteger}, {Name: "sk", Type: tablekit.TypeBinary}},
		{{Name: "pk", Type: tablekit.TypeBinary}},
	}
	for _, shards := range []int{1, 3, 16} {
		for si, schema := range schemas {
			t.Run(fmt.Sprintf("N=%d/schema%d", shards, si), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(shards), uint64(si)))
				b := newBackend(t, &awsdynamodb.Options{Shards: shards})
				clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
				db, tbl := newTable(t, b, clock, tablekit.TableOptions{}, schema...)
				ref := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
				if err := ref.CreateTable(ctx, tablekit.TableMeta{Name: tbl.Name(), Key: schema}); err != nil {
					t.Fatal(err)
				}
				rtbl := ref.Table(tbl.Name())
				keys := randomKeys(r, schema, 120)
				var writes []tablekit.BatchWrite
				var rwrites []tablekit.BatchWrite
				for i, k := range keys {
					cols := []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i)), Version: 1_700_000_000_000}}
					if i%7 == 0 {
						cols = nil // key-only rows
					}
					writes = append(writes, tablekit.BatchPut(tbl.Name(), k, cols))
					rwrites = append(rwrites, tablekit.BatchPut(rtbl.Name(), k, cols))
				}
				for _, side := range []struct {
					db *tablekit.Client
					w  []tablekit.BatchWrite
				}{{db, writes}, {ref, rwrites}} {
					res, err := side.db.BatchWriteRow(ctx, side.w)
					if err != nil {
						t.Fatal(err)
					}
					for i, rr := range res {
						if rr.Err != nil {
							t.Fatalf("write %d: %v", i, rr.Err)
						}
					}
				}
				bound := func() tablekit.PrimaryKey {
					k := keys[r.IntN(len(keys))].Clone()
					for i := range k {
						switch r.IntN(5) {
						case 0:
							k[i].Value = tablekit.InfMin
						case 1:
							k[i].Value = tablekit.InfMax
						}
					}
					return k
				}
				collect := func(tb *tablekit.Table, s, e tablekit.PrimaryKey, opts ...tablekit.RangeOption) ([]tablekit.Row, error) {
					var rows []tablekit.Row
					for row, err := range tb.Rows(ctx, s, e, opts...) {
						if err != nil {
							return nil, err
						}
						rows = append(rows, row)
					}
					return rows, nil
				}
				for q := 0; q < 25; q++ {
					s, e := bound(), bound()
					c := tablekit.CompareKeys(s, e)
					if c == 0 {
						continue
					}
					var opts []tablekit.RangeOption
					if c > 0 {
						opts = append(opts, tablekit.Backward())
					}
					opts = append(opts, tablekit.PageSize(1+r.IntN(20)))
					got, err := collect(tbl, s, e, opts...)
					if err != nil {
						t.Fatalf("range %v..%v: %v", s, e, err)
					}
					want, err := collect(rtbl, s, e, opts...)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got, valueCmp); diff != "" {
						t.Fatalf("range %v..%v (backward=%v) differs from the local engine (-want +got):\n%s", s, e, c > 0, diff)
					}
				}
				// The whole table, both ways, with GetRange pages and tokens.
				for _, back := range []bool{false, true} {
					s, e := tablekit.PrimaryKey{}, tablekit.PrimaryKey{}
					for _, kc := range schema {
						s = s.Add(kc.Name, tablekit.InfMin)
						e = e.Add(kc.Name, tablekit.InfMax)
					}
					var opts []tablekit.RangeOption
					if back {
						s, e = e, s
						opts = append(opts, tablekit.Backward())
					}
					var got []tablekit.Row
					var token []byte
					for {
						o := append(slices.Clone(opts), tablekit.Limit(17))
						if token != nil {
							o = append(o, tablekit.ResumeFrom(token))
						}
						res, err := tbl.GetRange(ctx, s, e, o...)
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, res.Rows...)
						if res.Next == nil {
							break
						}
						token = res.Next
					}
					if len(got) != len(keys) {
						t.Fatalf("whole table (backward=%v): %d rows, want %d", back, len(got), len(keys))
					}
					for i := 1; i < len(got); i++ {
						if c := tablekit.CompareKeys(got[i-1].Key, got[i].Key); (c >= 0) != back || c == 0 {
							t.Fatalf("whole table (backward=%v): rows %d and %d out of order: %v, %v", back, i-1, i, got[i-1].Key, got[i].Key)
						}
					}
				}
			})
		}
	}
}

// TestRangeInOnePartitionIsOneQuery checks the round trips of a range: one
// Query when the bounds pin the partition key, one per shard otherwise.
func TestRangeInOnePartitionIsOneQuery(t *testing.T) {
	ctx := context.Background()
	ct := newCountingTransport()
	const shards = 8
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ct}), &awsdynamodb.Options{Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	_, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	var writes []tablekit.BatchWrite
	for p := 0; p < 4; p++ {
		for s := 0; s < 50; s++ {
			k := tablekit.Key("pk", tablekit.String(fmt.Sprint("p", p))).Add("sk", tablekit.Integer(int64(s)))
			writes = append(writes, tablekit.BatchPut(tbl.Name(), k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(s))}}))
		}
	}
	if _, err := tablekit.NewClient(b).BatchWriteRow(ctx, writes); err != nil {
		t.Fatal(err)
	}
	ct.reset()
	res, err := tbl.GetRange(ctx,
		tablekit.Key("pk", tablekit.String("p2")).Add("sk", tablekit.InfMin),
		tablekit.Key("pk", tablekit.String("p2")).Add("sk", tablekit.InfMax))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 50 || res.Next != nil {
		t.Fatalf("partition p2: %d rows, next=%v; want 50 and no token", len(res.Rows), res.Next)
	}
	if q := ct.get("Query"); q != 1 {
		t.Errorf("a range inside one partition key made %d Query calls, want 1", q)
	}
	// With a Limit, the one Query asks for one item more than the limit,
	// so that it needs no second page, neither when rows follow nor when
	// the limit is exactly the rows left.
	for _, limit := range []int{20, 50} {
		ct.reset()
		res, err := tbl.GetRange(ctx,
			tablekit.Key("pk", tablekit.String("p2")).Add("sk", tablekit.InfMin),
			tablekit.Key("pk", tablekit.String("p2")).Add("sk", tablekit.InfMax), tablekit.Limit(limit))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != limit {
			t.Fatalf("partition p2, Limit(%d): %d rows", limit, len(res.Rows))
		}
		if q := ct.get("Query"); q != 1 {
			t.Errorf("partition p2, Limit(%d): %d Query calls, want 1", limit, q)
		}
	}
	ct.reset()
	res, err = tbl.GetRange(ctx,
		tablekit.Key("pk", tablekit.InfMin).Add("sk", tablekit.InfMin),
		tablekit.Key("pk", tablekit.InfMax).Add("sk", tablekit.InfMax), tablekit.Limit(10))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 {
		t.Fatalf("whole-table range: %d rows, want 10", len(res.Rows))
	}
	if q := ct.get("Query"); q < shards || q > 2*shards {
		t.Errorf("a 10-row whole-table range over %d shards made %d Query calls, want %d..%d", shards, q, shards, 2*shards)
	}
}

func TestNamesAndMetadata(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t, &awsdynamodb.Options{Shards: 5})
	db := tablekit.NewClient(b)
	short := fmt.Sprintf("x%d", tableSeq.Add(1)%10) // 2 bytes: below DynamoDB's 3
	long := "L" + strings.Repeat("n", 254)          // 255 bytes
	_ = db.DeleteTable(ctx, short)                  // a left-over of an earlier run of this process's dynalite is impossible, but be safe
	for _, name := range []string{short, long} {
		meta := tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeBinary}},
			Options: tablekit.TableOptions{TTL: 86400 * time.Second, MaxVersions: 3, MaxVersionOffset: 99 * time.Second}}
		if err := db.CreateTable(ctx, meta); err != nil {
			t.Fatalf("CreateTable %q: %v", name, err)
		}
		got, err := db.DescribeTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Incarnation) != 16 || got.Generation != 1 {
			t.Errorf("DescribeTable %q: incarnation %q, generation %d; want 16 hex digits and 1", name, got.Incarnation, got.Generation)
		}
		want := meta
		want.Incarnation, want.Generation = got.Incarnation, 1
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DescribeTable %q (-want +got):\n%s", name, diff)
		}
		if err := db.CreateTable(ctx, meta); !errors.Is(err, tablekit.ErrAlreadyExists) {
			t.Errorf("second CreateTable %q: %v, want ErrAlreadyExists", name, err)
		}
		shards, nativeTTL, err := b.TableLayout(ctx, name)
		if err != nil || shards != 5 {
			t.Errorf("TableLayout(%q) = %d, %v; want 5 shards", name, shards, err)
		}
		if nativeTTL {
			t.Errorf("TableLayout(%q): nativeTTL = true, but dynalite has no UpdateTimeToLive", name)
		}
		native := nativeOf(t, b, name)
		if len(native) < 3 || len(native) > 255 {
			t.Errorf("native name %q of %q has length %d", native, name, len(native))
		}
		if name == short && native != name+"."+got.Incarnation {
			t.Errorf("native name of %q is %q, want the name, a dot and the incarnation %q", name, native, got.Incarnation)
		}
		if _, err := b.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(native)}); err != nil {
			t.Errorf("native table %q of %q: %v", native, name, err)
		}
		if err := db.Table(name).PutRow(ctx, tablekit.Key("id", tablekit.Binary([]byte{1})), nil); err != nil {
			t.Errorf("PutRow in %q: %v", name, err)
		}
	}
	names, err := db.ListTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{short, long} {
		if !slices.Contains(names, name) {
			t.Errorf("ListTables does not report %q", name)
		}
		if err := db.DeleteTable(ctx, name); err != nil {
			t.Errorf("DeleteTable %q: %v", name, err)
		}
		if _, err := db.DescribeTable(ctx, name); !errors.Is(err, tablekit.ErrTableNotFound) {
			t.Errorf("DescribeTable after delete: %v, want ErrTableNotFound", err)
		}
		if err := db.DeleteTable(ctx, name); !errors.Is(err, tablekit.ErrTableNotFound) {
			t.Errorf("second DeleteTable: %v, want ErrTableNotFound", err)
		}
	}
	// A name can be taken again after DeleteTable, and the new table is empty.
	meta := tablekit.TableMeta{Name: short, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeBinary}}}
	if err := db.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if _, found, err := db.Table(short).GetRow(ctx, tablekit.Key("id", tablekit.Binary([]byte{1}))); err != nil || found {
		t.Errorf("re-created table: found=%v err=%v, want an empty table", found, err)
	}
	if err := db.DeleteTable(ctx, short); err != nil {
		t.Fatal(err)
	}
}

func TestDynamoDBLimitsAreInvalidArgument(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	_, tbl := newTable(t, b, nil, tablekit.TableOptions{MaxVersions: 5},
		tablekit.KeyColumn{Name: "a", Type: tablekit.TypeBinary}, tablekit.KeyColumn{Name: "b", Type: tablekit.TypeBinary})
	key := tablekit.Key("a", tablekit.Binary([]byte("k"))).Add("b", tablekit.Binary([]byte("1")))
	big := tablekit.Binary(bytes.Repeat([]byte{7}, 401*1024))
	err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "big", Value: big}})
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), tbl.Name()) || !strings.Contains(err.Error(), "400 KB") {
		t.Errorf("PutRow of a 401 KB row: %v; want ErrInvalidArgument naming the table and the 400 KB limit", err)
	}
	// Versions that accumulate past 400 KB through UpdateRow are refused too.
	half := tablekit.Binary(bytes.Repeat([]byte{8}, 150*1024))
	now := time.Now().UnixMilli()
	for i := range 3 {
		_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.PutAt("v", half, now-int64(i))})
		if i < 2 && err != nil {
			t.Fatalf("UpdateRow %d: %v", i, err)
		}
	}
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("third 150 KB version: %v, want ErrInvalidArgument", err)
	}
	row, _, err := tbl.GetRow(ctx, key, tablekit.MaxVersions(5))
	if err != nil || len(row.Versions("v")) != 2 {
		t.Errorf("after the refused update: %d versions (err %v), want the 2 written before", len(row.Versions("v")), err)
	}
	if _, found, _ := tbl.GetRow(ctx, key, tablekit.Columns("big")); found && len(row.Versions("big")) > 0 {
		t.Errorf("the refused 401 KB row was written")
	}
	// A key of more than 1024 encoded bytes.
	long := tablekit.Key("a", tablekit.Binary(bytes.Repeat([]byte{1}, 600))).Add("b", tablekit.Binary(bytes.Repeat([]byte{2}, 600)))
	err = tbl.PutRow(ctx, long, []tablekit.Column{{Name: "x", Value: tablekit.Integer(1)}})
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "1024") {
		t.Errorf("PutRow with a 1204-byte sort key: %v; want ErrInvalidArgument naming the 1024-byte limit", err)
	}
	// Reading such a key finds nothing: no row can be stored there.
	if _, found, err := tbl.GetRow(ctx, long); err != nil || found {
		t.Errorf("GetRow with a 1204-byte sort key: found=%v err=%v; want not found", found, err)
	}
	if res, err := tablekit.NewClient(b).BatchGetRow(ctx, []tablekit.BatchGet{{Table: tbl.Name(), Key: long}, {Table: tbl.Name(), Key: key}}); err != nil || res[0].Found || res[0].Err != nil || !res[1].Found {
		t.Errorf("BatchGetRow with a 1204-byte sort key: %+v %v; want not found, and the other row found", res, err)
	}
	// A range whose bounds are longer than 1024 bytes still works.
	longEnd := tablekit.Key("a", tablekit.Binary(bytes.Repeat([]byte("l"), 600))).Add("b", tablekit.Binary(bytes.Repeat([]byte{2}, 600)))
	res, err := tbl.GetRange(ctx, tablekit.Key("a", tablekit.Binary([]byte("k"))).Add("b", tablekit.InfMin), longEnd)
	if err != nil || len(res.Rows) != 1 {
		t.Errorf("range up to a long bound: %d rows, %v; want the 1 row", len(res.Rows), err)
	}
}

func TestNativeErrorsReachable(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	_, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	key := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(1))
	if err := tbl.PutRow(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	// Drop the DynamoDB table behind the adapter's back.
	if _, err := b.Client().DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(nativeOf(t, b, tbl.Name()))}); err != nil {
		t.Fatal(err)
	}
	_, _, err := tbl.GetRow(ctx, key)
	if !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Fatalf("GetRow on a dropped table: %v, want ErrTableNotFound", err)
	}
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Errorf("errors.As(%v, *types.ResourceNotFoundException) = false", err)
	}
	var te *tablekit.Error
	if !errors.As(err, &te) || te.Err == nil {
		t.Errorf("error %v is not a *tablekit.Error with the native error in Err", err)
	}
	// A canceled context comes back as context.Canceled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := tbl.GetRow(cctx, key); !errors.Is(err, context.Canceled) {
		t.Errorf("GetRow with a canceled context: %v", err)
	}
}

func TestConcurrentIncrementsLoseNothing(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	// A clock that stands still: with a moving clock a request that takes
	// its Now earlier but commits later writes an older version, which SPEC
	// §8 makes lose to the newer one (see the package report).
	clock := tablekit.NewManualClock(time.Now())
	_, tbl := newTable(t, b, clock, tablekit.TableOptions{MaxVersions: 2})
	key := tablekit.Key("pk", tablekit.String("ctr")).Add("sk", tablekit.Integer(0))
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", 1), tablekit.Put("last", tablekit.Integer(1))}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	row, found, err := tbl.GetRow(ctx, key)
	if err != nil || !found {
		t.Fatal(found, err)
	}
	if v, _ := row.Get("n"); !v.Equal(tablekit.Integer(workers * each)) {
		t.Errorf("after %d concurrent increments n = %v", workers*each, v)
	}
}

func TestTTLHiddenAndExpiryAttribute(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t, &awsdynamodb.Options{Shards: 2})
	start := time.Date(2016, 7, 20, 0, 0, 0, 0, time.UTC)
	clock := tablekit.NewManualClock(start)
	_, tbl := newTable(t, b, clock, tablekit.TableOptions{TTL: 86400 * time.Second})
	key := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(1))
	marker := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(2))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "c", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.PutRow(ctx, marker, nil); err != nil {
		t.Fatal(err)
	}
	raw := func(k tablekit.PrimaryKey) map[string]types.AttributeValue {
		out, err := b.Client().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(nativeOf(t, b, tbl.Name()))})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			if bytes.Equal(it[".k"].(*types.AttributeValueMemberB).Value, codec.EncodeKey(k)) {
				return it
			}
		}
		t.Fatalf("no item for %v", k)
		return nil
	}
	x, ok := raw(key)[".x"].(*types.AttributeValueMemberN)
	// The expiry plus a day's margin for clock skew.
	if !ok || x.Value != fmt.Sprint(start.Unix()+86400+86400) {
		t.Errorf("expiry attribute = %v, want %d", raw(key)[".x"], start.Unix()+86400+86400)
	}
	if _, ok := raw(marker)[".x"]; ok {
		t.Errorf("a key-only row carries an expiry attribute")
	}
	clock.Set(start.Add(24*time.Hour - time.Millisecond))
	if _, found, _ := tbl.GetRow(ctx, key); !found {
		t.Errorf("row hidden before its TTL")
	}
	clock.Set(start.Add(24 * time.Hour))
	if _, found, _ := tbl.GetRow(ctx, key); found {
		t.Errorf("row visible at its expiry")
	}
	if _, found, _ := tbl.GetRow(ctx, marker); !found {
		t.Errorf("key-only row hidden by TTL")
	}
	// The expired row fails ExpectExist and passes ExpectNotExist.
	if err := tbl.PutRow(ctx, key, nil, tablekit.ExpectExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("ExpectExist on an expired row: %v", err)
	}
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "c", Value: tablekit.Integer(2)}}, tablekit.ExpectNotExist); err != nil {
		t.Errorf("ExpectNotExist on an expired row: %v", err)
	}
}

func TestBatchOrderAndResults(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t, &awsdynamodb.Options{Shards: 4})
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	k := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("pk", tablekit.String(fmt.Sprint("p", i%5))).Add("sk", tablekit.Integer(int64(i)))
	}
	col := func(v int64) []tablekit.Column { return []tablekit.Column{{Name: "v", Value: tablekit.Integer(v)}} }
	var writes []tablekit.BatchWrite
	for i := range 120 {
		writes = append(writes, tablekit.BatchPut(tbl.Name(), k(i), col(int64(i))))
	}
	// Same-row writes apply in order: put, increment, delete, put again.
	writes = append(writes,
		tablekit.BatchUpdate(tbl.Name(), k(0), []tablekit.Change{tablekit.Increment("v", 10)}),
		tablekit.BatchDelete(tbl.Name(), k(1)),
		tablekit.BatchPut(tbl.Name(), k(1), col(-1), tablekit.ExpectNotExist),
		tablekit.BatchPut(tbl.Name(), k(2), col(-2), tablekit.ExpectNotExist), // fails: exists
		tablekit.BatchDelete(tbl.Name(), k(3)),
		tablekit.BatchPut("no_such_table_xyz", k(3), col(1)),
	)
	res, err := db.BatchWriteRow(ctx, writes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 120 {
		if res[i].Err != nil {
			t.Errorf("write %d: %v", i, res[i].Err)
		}
	}
	if res[120].Err != nil || len(res[120].Increments) != 1 || !res[120].Increments[0].Value.Equal(tablekit.Integer(10)) {
		t.Errorf("increment after put in one batch: %+v", res[120])
	}
	if res[122].Err != nil {
		t.Errorf("put ExpectNotExist after delete in one batch: %v", res[122].Err)
	}
	if !errors.Is(res[123].Err, tablekit.ErrConditionFailed) {
		t.Errorf("put ExpectNotExist on an existing row: %v", res[123].Err)
	}
	if !errors.Is(res[125].Err, tablekit.ErrTableNotFound) {
		t.Errorf("write to a missing table: %v", res[125].Err)
	}
	gets := []tablekit.BatchGet{{Table: tbl.Name(), Key: k(0)}, {Table: tbl.Name(), Key: k(1)}, {Table: tbl.Name(), Key: k(3)},
		{Table: tbl.Name(), Key: k(0)}, {Table: "no_such_table_xyz", Key: k(0)}}
	for i := 4; i < 120; i++ {
		gets = append(gets, tablekit.BatchGet{Table: tbl.Name(), Key: k(i)})
	}
	gr, err := db.BatchGetRow(ctx, gets[:100])
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int64{0: 10, 1: -1, 3: 0, 5: 5}
	for i, g := range gr[:4] {
		wv := want[[]int{0, 1, 3, 0}[i]]
		if wv == 0 {
			if g.Found || g.Err != nil {
				t.Errorf("get %d: found=%v err=%v, want missing", i, g.Found, g.Err)
			}
			continue
		}
		if v, _ := g.Row.Get("v"); g.Err != nil || !v.Equal(tablekit.Integer(wv)) {
			t.Errorf("get %d: %v %v, want v=%d", i, v, g.Err, wv)
		}
	}
	if !errors.Is(gr[4].Err, tablekit.ErrTableNotFound) {
		t.Errorf("get from a missing table: %v", gr[4].Err)
	}
	for i := 5; i < 100; i++ {
		n := i - 1
		if v, _ := gr[i].Row.Get("v"); gr[i].Err != nil || !v.Equal(tablekit.Integer(int64(n))) {
			t.Errorf("get %d: %v %v, want v=%d", i, v, gr[i].Err, n)
		}
	}
}

// TestCreateTableKeepsForeignTable: a DynamoDB table that already has the
// native name of a portable table (not created by tablekit) is never
// deleted; CreateTable fails with ErrAlreadyExists naming it and releases
// the name in the metadata. The Client makes a random incarnation, which
// is part of the native name, so the test calls the backend with a chosen
// one.
func TestCreateTableKeepsForeignTable(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	db := tablekit.NewClient(b)
	name := uniqueName("foreign")
	const inc = "00000000deadbeef"
	native := name + "." + inc
	raw := b.Client()
	if _, err := raw.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(native),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	}); err != nil {
		t.Fatal(err)
	}
	defer raw.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(native)})
	if err := dynamodb.NewTableExistsWaiter(raw).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(native)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	item := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "precious"}}
	if _, err := raw.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(native), Item: item}); err != nil {
		t.Fatal(err)
	}
	meta := &tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}, Incarnation: inc, Generation: 1}
	err := b.CreateTable(ctx, meta)
	if !errors.Is(err, tablekit.ErrAlreadyExists) || !strings.Contains(err.Error(), native) {
		t.Fatalf("CreateTable over a foreign DynamoDB table: %v; want ErrAlreadyExists naming %q", err, native)
	}
	out, err := raw.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(native), Key: item, ConsistentRead: aws.Bool(true),
	})
	if err != nil || len(out.Item) == 0 {
		t.Fatalf("the foreign table's item after CreateTable: %v, %v; want it still there", out, err)
	}
	// The claim was released: the portable table does not exist.
	if _, err := db.DescribeTable(ctx, name); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Errorf("DescribeTable after the failed CreateTable: %v, want ErrTableNotFound", err)
	}
}

// TestTableWithoutIncarnation: a table whose metadata has no incarnation
// (made before incarnations existed) keeps the native name without one,
// works through a Client, and gets generations from its first UpdateTable.
func TestTableWithoutIncarnation(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	name := uniqueName("legacy")
	meta := &tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}}
	if err := b.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if native := nativeOf(t, b, name); native != name {
		t.Errorf("native name of a table without incarnation: %q, want %q", native, name)
	}
	db := tablekit.NewClient(b)
	defer db.DeleteTable(ctx, name)
	tbl := db.Table(name)
	key := tablekit.Key("id", tablekit.String("a"))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("v", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateTable(ctx, name, tablekit.TableOptions{MaxVersions: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := db.DescribeTable(ctx, name)
	if err != nil || got.Incarnation != "" || got.Generation != 1 || got.Options.MaxVersions != 2 {
		t.Fatalf("DescribeTable after UpdateTable: %+v, %v; want no incarnation, generation 1, MaxVersions 2", got, err)
	}
	row, found, err := tbl.GetRow(ctx, key)
	if v, _ := row.Get("v"); err != nil || !found || !v.Equal(tablekit.Integer(2)) {
		t.Errorf("GetRow: %v %v %v, want v=2", row, found, err)
	}
}

// TestRecreatedTableIsANewTable is SPEC §3: the incarnation is part of the
// DynamoDB table's name, so a request built from the metadata of a table
// since deleted and created again addresses a DynamoDB table that no
// longer exists and fails with ErrTableNotFound; a Client holding that
// metadata reads it again and applies its call to the new table, or
// refuses it when the new schema does not take it.
func TestRecreatedTableIsANewTable(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t, &awsdynamodb.Options{Shards: 2})
	a := tablekit.NewClient(b)
	other := newBackend(t, &awsdynamodb.Options{Shards: 2}) // another process
	c := tablekit.NewClient(other, tablekit.WithMetaCacheTTL(time.Hour))
	name := uniqueName("recreated")
	schema := tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}
	if err := a.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: schema}); err != nil {
		t.Fatal(err)
	}
	defer a.DeleteTable(ctx, name)
	k := func(s string) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.String(s)) }
	one := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}
	if err := c.Table(name).PutRow(ctx, k("old"), one); err != nil {
		t.Fatal(err)
	}
	oldMeta, err := other.DescribeTable(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	oldNative := nativeOf(t, b, name)
	if err := a.DeleteTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: schema}); err != nil {
		t.Fatal(err)
	}
	if n := nativeOf(t, b, name); n == oldNative {
		t.Fatalf("the re-created table has the DynamoDB table %q of the old one", n)
	}
	// The old metadata, straight to the backend that cached it.
	_, err = other.Write(ctx, &tablekit.WriteRequest{Meta: oldMeta, Kind: tablekit.WritePut, Key: k("stale"), Now: time.Now().UnixMilli()})
	var rnf *types.ResourceNotFoundException
	if !errors.Is(err, tablekit.ErrTableNotFound) || !errors.As(err, &rnf) {
		t.Errorf("a write with the old table's metadata: %v, want ErrTableNotFound from the missing DynamoDB table", err)
	}
	if _, err := other.GetRow(ctx, &tablekit.GetRowRequest{Meta: oldMeta, Key: k("old"), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: time.Now().UnixMilli()}); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Errorf("a read with the old table's metadata: %v, want ErrTableNotFound", err)
	}
	// Through the Client with the stale cache: applied to the new table.
	if err := c.Table(name).PutRow(ctx, k("new"), one); err != nil {
		t.Fatalf("PutRow with a stale cache: %v", err)
	}
	if _, found, err := a.Table(name).GetRow(ctx, k("new")); err != nil || !found {
		t.Errorf("the stale client's row in the new table: found=%v err=%v", found, err)
	}
	if _, found, err := a.Table(name).GetRow(ctx, k("old")); err != nil || found {
		t.Errorf("the old table's row in the new table: found=%v err=%v", found, err)
	}
	// A new schema refuses a key of the old one.
	if err := a.DeleteTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Table(name).PutRow(ctx, k("again"), one); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("PutRow of an old-schema key after the table changed schema: %v, want ErrInvalidArgument", err)
	}
	res, err := a.Table(name).GetRange(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax))
	if err != nil || len(res.Rows) != 0 {
		t.Errorf("the re-created table: %d rows, %v; want it empty", len(res.Rows), err)
	}
}

// TestStaleOptionsNeverTrimNewerVersions is SPEC §3's second rule: after
// MaxVersions is raised, a client that still holds the old options does
// not trim a row written under the new ones. Every stored row carries the
// generation it was written under; the backend refuses the stale write
// (driver.ErrStaleMeta) and the Client retries it with fresh options.
func TestStaleOptionsNeverTrimNewerVersions(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	b := newBackend(t, &awsdynamodb.Options{Shards: 1}) // every item in shard 0
	a := tablekit.NewClient(b, tablekit.WithClock(clock))
	other := newBackend(t)
	c := tablekit.NewClient(other, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(time.Hour))
	name := uniqueName("stale_options")
	if err := a.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	defer a.DeleteTable(ctx, name)
	key := tablekit.Key("id", tablekit.String("r"))
	if err := c.Table(name).PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(0)}}); err != nil {
		t.Fatal(err)
	}
	gen1, err := other.DescribeTable(ctx, name)
	if err != nil || gen1.Generation != 1 {
		t.Fatalf("DescribeTable: %+v, %v; want generation 1", gen1, err)
	}
	if err := a.UpdateTable(ctx, name, tablekit.TableOptions{MaxVersions: 3}); err != nil {
		t.Fatal(err)
	}
	now := clock.Now().UnixMilli()
	for i := int64(1); i <= 3; i++ {
		if _, err := a.Table(name).UpdateRow(ctx, key, []tablekit.Change{tablekit.PutAt("v", tablekit.Integer(i), now+i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The item records generation 2.
	sk := codec.EncodeKey(key)
	out, err := b.Client().GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(nativeOf(t, b, name)), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{".s": &types.AttributeValueMemberN{Value: "0"}, ".k": &types.AttributeValueMemberB{Value: sk}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := out.Item[".g"].(*types.AttributeValueMemberN); !ok || g.Value != "2" {
		t.Errorf("item written under generation 2 has .g = %v", out.Item[".g"])
	}
	// Straight to the backend with generation 1: refused as stale.
	_, err = other.Write(ctx, &tablekit.WriteRequest{Meta: gen1, Kind: tablekit.WriteUpdate, Key: key, Now: now,
		Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: "w", Value: tablekit.Integer(1), Version: now}}})
	if !errors.Is(err, driver.ErrStaleMeta) {
		t.Fatalf("an update with generation 1 over a generation-2 row: %v, want ErrStaleMeta", err)
	}
	// Through the stale Client: retried with the new options; nothing lost.
	if _, err := c.Table(name).UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("w", tablekit.Integer(1))}); err != nil {
		t.Fatal(err)
	}
	res, err := c.BatchWriteRow(ctx, []tablekit.BatchWrite{tablekit.BatchUpdate(name, key, []tablekit.Change{tablekit.Put("x", tablekit.Integer(1))})})
	if err != nil || res[0].Err != nil {
		t.Fatalf("BatchWriteRow with stale options: %v %+v", err, res)
	}
	row, _, err := a.Table(name).GetRow(ctx, key, tablekit.MaxVersions(3))
	if err != nil {
		t.Fatal(err)
	}
	if vs := row.Versions("v"); len(vs) != 3 {
		t.Errorf("after writes by a client with stale options: %d versions of v (%v), want 3", len(vs), vs)
	}
	if _, ok := row.Get("x"); !ok {
		t.Errorf("the stale client's batch update is missing: %v", row)
	}
}

// TestAsOffersTheNativeClient: tablekit.Client.As reaches the
// *dynamodb.Client and nothing else.
func TestAsOffersTheNativeClient(t *testing.T) {
	b := newBackend(t)
	db := tablekit.NewClient(b)
	defer db.Close()
	var client *dynamodb.Client
	if !db.As(&client) || client != b.Client() {
		t.Errorf("As(&*dynamodb.Client) = %v, %p; want true, %p", client != nil, client, b.Client())
	}
	var s string
	if db.As(&s) {
		t.Errorf("As(&string) = true")
	}
}

// TestCloseReleasesConnections: Close leaves no goroutine of a backend
// Open built (its idle HTTP connections are closed), and leaves a client
// passed to New alone (its idle connection is reused after Close).
func TestCloseReleasesConnections(t *testing.T) {
	ctx := context.Background()
	needDynalite(t)
	floor := goroutineFloor()
	b := newBackend(t, &awsdynamodb.Options{Shards: 4})
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	var ws []tablekit.BatchWrite
	for i := range 40 {
		ws = append(ws, tablekit.BatchPut(tbl.Name(), tablekit.Key("pk", tablekit.String(fmt.Sprint("p", i%7))).Add("sk", tablekit.Integer(int64(i))), nil))
	}
	if _, err := db.BatchWriteRow(ctx, ws); err != nil {
		t.Fatal(err)
	}
	res, err := tbl.GetRange(ctx, tablekit.Key("pk", tablekit.InfMin).Add("sk", tablekit.InfMin), tablekit.Key("pk", tablekit.InfMax).Add("sk", tablekit.InfMax))
	if err != nil || len(res.Rows) != 40 {
		t.Fatalf("GetRange: %d rows, %v", len(res.Rows), err)
	}
	if err := db.DeleteTable(ctx, tbl.Name()); err != nil {
		t.Fatal(err)
	}
	if open, _ := newGoroutines(floor); !slices.ContainsFunc(open, func(g string) bool { return strings.Contains(g, "net/http.(*persistConn)") }) {
		t.Fatalf("no connection goroutine started since Open (%d goroutines): the test proves nothing", len(open))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if left := leftGoroutines(floor, 3*time.Second); len(left) > 0 {
		t.Errorf("%d goroutines started since Open still alive 3 s after Close:\n%s", len(left), strings.Join(left, "\n\n"))
	}

	// A client the caller passed to New keeps its connections.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	raw := newClient(t, &http.Client{Transport: tr})
	nb, err := awsdynamodb.New(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A call's connection goes back to the idle pool a moment after the
	// call returns (net/http's read loop puts it there), and only if its
	// write loop has reported the request written within 50 ms of the
	// answer (net/http's maxWriteWaitBeforeConnReuse): on a loaded machine
	// it may not have, and the connection is closed instead, with no trace
	// event (3 of 40 runs under -race with a busy core). So call until a
	// connection is in the pool, or the next call may dial a new one
	// whatever Close did.
	idle := make(chan struct{}, 1)
	ictx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{PutIdleConn: func(err error) {
		if err == nil {
			select {
			case idle <- struct{}{}:
			default:
			}
		}
	}})
	pooled := false
	for range 8 {
		if _, err := nb.ListTables(ictx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-idle:
			pooled = true
		case <-time.After(2 * time.Second):
		}
		if pooled {
			break
		}
	}
	if !pooled {
		t.Fatal("no call's connection went back to the idle pool in 8 calls: the test proves nothing")
	}
	if err := tablekit.NewClient(nb).Close(); err != nil {
		t.Fatal(err)
	}
	reused := false
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused }})
	if _, err := raw.ListTables(tctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("the caller's client after Close: %v", err)
	}
	if !reused {
		t.Errorf("closing a backend made with New closed the caller's idle connection")
	}
}
