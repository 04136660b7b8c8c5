package awsdynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/backend/codec"
)

// calls is how many calls of each kind ct counted since its last reset.
func calls(ct *countingTransport) string {
	var parts []string
	for _, op := range []string{"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"} {
		if n := ct.get(op); n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", op, n))
		}
	}
	return strings.Join(parts, " ")
}

// rawItem reads the stored item of key (a one-shard table).
func rawItem(t *testing.T, b *awsdynamodb.Backend, table string, key tablekit.PrimaryKey) map[string]types.AttributeValue {
	t.Helper()
	out, err := b.Client().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(nativeOf(t, b, table)), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{".s": &types.AttributeValueMemberN{Value: "0"}, ".k": &types.AttributeValueMemberB{Value: codec.EncodeKey(key)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// The common writes are one DynamoDB call each, and read back as the
// optimistic path would have left them.
func TestOneCallWrites(t *testing.T) {
	ctx := context.Background()
	ct := newCountingTransport()
	be, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ct}), &awsdynamodb.Options{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db, tbl := newTable(t, be, clock, tablekit.TableOptions{})
	key := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(1))
	now := clock.Now().UnixMilli()
	expect := func(what, want string) {
		t.Helper()
		if got := calls(ct); got != want {
			t.Errorf("%s: calls %q, want %q", what, got, want)
		}
		ct.reset()
	}
	get := func(col string) tablekit.Value {
		t.Helper()
		row, found, err := tbl.GetRow(ctx, key)
		if err != nil || !found {
			t.Fatal(found, err)
		}
		v, _ := row.Get(col)
		return v
	}

	ct.reset()
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "p", Value: tablekit.String("packed")}, {Name: "q", Value: tablekit.Integer(1)}}, tablekit.ExpectNotExist); err != nil {
		t.Fatal(err)
	}
	expect("PutRow IfNotExist", "PutItem×1")
	clock.Advance(time.Second)
	values := []tablekit.Value{tablekit.String(""), tablekit.Integer(math.MinInt64), tablekit.Double(math.Copysign(0, -1)),
		tablekit.Double(1e300), tablekit.Boolean(true), tablekit.Binary(nil), tablekit.Binary([]byte{0, 0xff})}
	var changes []tablekit.Change
	for i, v := range values {
		changes = append(changes, tablekit.Put(fmt.Sprintf("c%d", i), v))
	}
	changes = append(changes, tablekit.Put("q", tablekit.Integer(2)))
	if _, err := tbl.UpdateRow(ctx, key, changes); err != nil {
		t.Fatal(err)
	}
	expect("UpdateRow of 8 Puts", "UpdateItem×1")
	row, _, err := tbl.GetRow(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if got, _ := row.Get(fmt.Sprintf("c%d", i)); !got.Equal(v) || got.Type() != v.Type() {
			t.Errorf("c%d = %#v, want %#v", i, got, v)
		}
	}
	if v, _ := row.Get("p"); !v.Equal(tablekit.String("packed")) {
		t.Errorf("the packed column p = %#v after an update of others", v)
	}
	if v, _ := row.Get("q"); !v.Equal(tablekit.Integer(2)) {
		t.Errorf("q = %#v, want the update's 2", v)
	}
	ct.reset()

	// An older version is hidden behind the newer one, whether that one
	// is packed (p) or an overlay cell (q, which then takes the optimistic
	// path: its overlay cell is newer).
	if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.PutAt("p", tablekit.String("old"), now-5000)}); err != nil {
		t.Fatal(err)
	}
	expect("UpdateRow of an older version", "UpdateItem×1")
	if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.PutAt("q", tablekit.Integer(-1), now-5000)}); err != nil {
		t.Fatal(err)
	}
	expect("UpdateRow of a version older than the overlay cell", "GetItem×1 PutItem×1 UpdateItem×1")
	if v := get("p"); !v.Equal(tablekit.String("packed")) {
		t.Errorf("p = %#v after writing an older version", v)
	}
	if v := get("q"); !v.Equal(tablekit.Integer(2)) {
		t.Errorf("q = %#v after writing an older version", v)
	}
	// The same version replaces the cell, packed or overlay.
	ct.reset()
	clock.Advance(time.Second)
	v := clock.Now().UnixMilli()
	for _, s := range []string{"one", "two"} {
		if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.PutAt("p", tablekit.String(s), v)}); err != nil {
			t.Fatal(err)
		}
	}
	expect("two UpdateRows of one version", "UpdateItem×2")
	if row, _, err := tbl.GetRow(ctx, key, tablekit.MaxVersions(5)); err != nil || len(row.Versions("p")) != 1 {
		t.Errorf("p after two writes of one version: %v, %v", row, err)
	} else if v, _ := row.Get("p"); !v.Equal(tablekit.String("two")) {
		t.Errorf("p = %#v, want the second write's", v)
	}
	// An optimistic write folds the overlay cells back into .c/.b.
	if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", 1)}); err != nil {
		t.Fatal(err)
	}
	for name := range rawItem(t, be, tbl.Name(), key) {
		if !strings.HasPrefix(name, ".") {
			t.Errorf("attribute %q left after an optimistic write", name)
		}
	}
	if v := get("c4"); !v.Equal(tablekit.Boolean(true)) {
		t.Errorf("c4 = %#v after folding", v)
	}
	ct.reset()

	// A missing row: the update creates it, and a range finds it.
	other := tablekit.Key("pk", tablekit.String("b")).Add("sk", tablekit.Integer(1))
	if _, err := tbl.UpdateRow(ctx, other, []tablekit.Change{tablekit.Put("x", tablekit.Integer(7))}); err != nil {
		t.Fatal(err)
	}
	expect("UpdateRow of a missing row", "UpdateItem×1")
	res, err := tbl.GetRange(ctx, tablekit.Key("pk", tablekit.InfMin).Add("sk", tablekit.InfMin), tablekit.Key("pk", tablekit.InfMax).Add("sk", tablekit.InfMax))
	if err != nil || len(res.Rows) != 2 || !res.Rows[1].Key.Equal(other) {
		t.Fatalf("range after creating a row by update: %+v, %v", res, err)
	}
	if v, _ := res.Rows[1].Get("x"); !v.Equal(tablekit.Integer(7)) {
		t.Errorf("x = %#v in a range read", v)
	}
	ct.reset()

	// A batch's updates take the same one call.
	bres, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{tablekit.BatchUpdate(tbl.Name(), other, []tablekit.Change{tablekit.Put("y", tablekit.Integer(1))})})
	if err != nil || bres[0].Err != nil {
		t.Fatalf("BatchWriteRow: %v %+v", err, bres)
	}
	expect("BatchWriteRow of one update", "UpdateItem×1")
	if row, _, err := tbl.GetRow(ctx, other); err != nil || len(row.Columns) != 2 {
		t.Errorf("after a batch update: %v, %v", row, err)
	}
	ct.reset()

	// Existence conditions: one call when they hold; the exact error when
	// not, with nothing written.
	missing := tablekit.Key("pk", tablekit.String("c")).Add("sk", tablekit.Integer(1))
	if _, err := tbl.UpdateRow(ctx, missing, []tablekit.Change{tablekit.Put("x", tablekit.Integer(1))}, tablekit.ExpectExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("UpdateRow IfExists of a missing row: %v", err)
	}
	if _, found, _ := tbl.GetRow(ctx, missing); found {
		t.Error("a failed IfExists update created the row")
	}
	if _, err := tbl.UpdateRow(ctx, other, []tablekit.Change{tablekit.Put("x", tablekit.Integer(8))}, tablekit.ExpectNotExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("UpdateRow IfNotExist of a row: %v", err)
	}
	ct.reset()
	if _, err := tbl.UpdateRow(ctx, other, []tablekit.Change{tablekit.Put("x", tablekit.Integer(9))}, tablekit.ExpectExist); err != nil {
		t.Fatal(err)
	}
	expect("UpdateRow IfExists", "UpdateItem×1")
	if err := tbl.PutRow(ctx, other, nil, tablekit.ExpectNotExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("PutRow IfNotExist of a row: %v", err)
	}
	ct.reset()
	if err := tbl.DeleteRow(ctx, other, tablekit.ExpectExist); err != nil {
		t.Fatal(err)
	}
	expect("DeleteRow IfExists", "DeleteItem×1")
	if err := tbl.DeleteRow(ctx, other, tablekit.ExpectExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("DeleteRow IfExists of a missing row: %v", err)
	}
}

// Under a TTL the one-call update keeps the item's expiry at or after
// every cell's, and leaves key-only rows (whose items never expire) to the
// optimistic path.
func TestOneCallUpdateKeepsExpiry(t *testing.T) {
	ctx := context.Background()
	be := newBackend(t, &awsdynamodb.Options{Shards: 1})
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	_, tbl := newTable(t, be, clock, tablekit.TableOptions{TTL: 2 * 24 * time.Hour})
	key := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(1))
	marker := tablekit.Key("pk", tablekit.String("m")).Add("sk", tablekit.Integer(1))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "a", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.PutRow(ctx, marker, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	for _, k := range []tablekit.PrimaryKey{key, marker} {
		if _, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put("b", tablekit.Integer(2))}); err != nil {
			t.Fatal(err)
		}
	}
	want := clock.Now().Unix() + 2*86400 + 86400
	if x, ok := rawItem(t, be, tbl.Name(), key)[".x"].(*types.AttributeValueMemberN); !ok || x.Value != fmt.Sprint(want) {
		t.Errorf(".x = %v after an update, want %d", rawItem(t, be, tbl.Name(), key)[".x"], want)
	}
	if x, ok := rawItem(t, be, tbl.Name(), marker)[".x"]; ok {
		t.Errorf("a key-only row got .x = %v", x)
	}
	// The first cell expires, the second is still visible.
	clock.Advance(2*24*time.Hour - 30*time.Minute)
	row, found, err := tbl.GetRow(ctx, key)
	if err != nil || !found || len(row.Columns) != 1 {
		t.Fatalf("after the first cell expired: %v %v %v", row, found, err)
	}
	if v, _ := row.Get("b"); !v.Equal(tablekit.Integer(2)) {
		t.Errorf("b = %#v", v)
	}
}

// One-call updates racing with optimistic writes (increments, which
// rewrite the item whole) on one row lose nothing: every acknowledged put
// is there afterwards, and every increment counted.
func TestConcurrentOneCallUpdatesLoseNothing(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	clock := tablekit.NewManualClock(time.Now())
	_, tbl := newTable(t, b, clock, tablekit.TableOptions{})
	key := tablekit.Key("pk", tablekit.String("hot")).Add("sk", tablekit.Integer(0))
	const workers, each = 6, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	incs := 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				var err error
				if w%3 == 0 {
					_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", 1)})
				} else {
					_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put(fmt.Sprintf("w%d_%d", w, i), tablekit.Integer(int64(i)))})
				}
				if err != nil {
					errs <- err
				}
			}
		}()
		if w%3 == 0 {
			incs += each
		}
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
	if v, _ := row.Get("n"); !v.Equal(tablekit.Integer(int64(incs))) {
		t.Errorf("after %d concurrent increments n = %v", incs, v)
	}
	for w := range workers {
		for i := range each {
			if w%3 == 0 {
				continue
			}
			if v, ok := row.Get(fmt.Sprintf("w%d_%d", w, i)); !ok || !v.Equal(tablekit.Integer(int64(i))) {
				t.Errorf("acknowledged put w%d_%d lost (%v)", w, i, v)
			}
		}
	}
}
