package awsdynamodb_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/backend/codec"
)

// wantShard is the shard of partition-key value pk in a table of n shards,
// computed here from the package doc's formulas: FNV-1a 64 mod n for a
// table made before placements were recorded (legacy), else FNV-1a 64
// finished with splitmix64's finalizer, times n, high word.
func wantShard(pk string, n int, legacy bool) int {
	h := fnv.New64a()
	h.Write(codec.EncodeKey(tablekit.PrimaryKey{{Value: tablekit.String(pk)}}))
	x := h.Sum64()
	if legacy {
		return int(x % uint64(n))
	}
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	hi, _ := bits.Mul64(x, uint64(n))
	return int(hi)
}

// TestPlacementOfStoredTables: a table made as before placements were
// recorded (its metadata item has no placement) keeps its rows where the
// FNV placement put them, and a backend opened afterwards finds every one
// of them by GetRow, BatchGetRow and ranges; a new table records
// placement 1 (and its shard count under a new name) and its rows are
// where that placement says, spread over
// every shard where the FNV placement used one of four. A placement this adapter
// does not know is refused, naming it.
func TestPlacementOfStoredTables(t *testing.T) {
	ctx := context.Background()
	const shards = 4
	opts := &awsdynamodb.Options{Shards: shards}
	db := tablekit.NewClient(newBackend(t, opts))
	defer db.Close()
	schema := tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}, {Name: "sk", Type: tablekit.TypeInteger}}
	legacy, current := uniqueName("placed_fnv"), uniqueName("placed_spread")
	restore := awsdynamodb.SetLegacyPlacement()
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: legacy, Key: schema})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: current, Key: schema}); err != nil {
		t.Fatal(err)
	}

	// Partition keys with every byte twice ("0101"): FNV mod 4 puts them
	// all on one shard.
	var keys []tablekit.PrimaryKey
	pkOf := map[string]string{} // .k → partition-key value
	for i := range 32 {
		p := fmt.Sprintf("%02d", i)
		for sk := range 2 {
			k := tablekit.Key("pk", tablekit.String(p+p)).Add("sk", tablekit.Integer(int64(sk)))
			keys = append(keys, k)
			pkOf[string(codec.EncodeKey(k))] = p + p
		}
	}
	for _, name := range []string{legacy, current} {
		for i, k := range keys {
			if err := db.Table(name).PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// A backend opened now reads both tables' placements from their
	// metadata.
	b2 := newBackend(t, opts)
	db2 := tablekit.NewClient(b2)
	defer db2.Close()
	raw := newClient(t, nil)
	for _, c := range []struct {
		name   string
		legacy bool
		used   int // shards holding rows
	}{{legacy, true, 1}, {current, false, shards}} {
		tbl := db2.Table(c.name)
		for i, k := range keys {
			row, ok, err := tbl.GetRow(ctx, k)
			if err != nil || !ok || len(row.Columns) != 1 || row.Columns[0].Value != tablekit.Integer(int64(i)) {
				t.Errorf("%s: GetRow(%v) = %v, %v, %v; want v=%d", c.name, k, row, ok, err, i)
			}
		}
		gets := make([]tablekit.BatchGet, len(keys))
		for i, k := range keys {
			gets[i] = tablekit.BatchGet{Table: c.name, Key: k}
		}
		res, err := db2.BatchGetRow(ctx, gets)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if !r.Found || r.Err != nil {
				t.Errorf("%s: BatchGetRow of %v: found %v, %v", c.name, keys[i], r.Found, r.Err)
			}
		}
		lo := tablekit.Key("pk", tablekit.InfMin).Add("sk", tablekit.InfMin)
		hi := tablekit.Key("pk", tablekit.InfMax).Add("sk", tablekit.InfMax)
		n := 0
		for row, err := range tbl.Rows(ctx, lo, hi) {
			if err != nil {
				t.Fatal(err)
			}
			if n < len(keys) && !row.Key.Equal(keys[n]) {
				t.Errorf("%s: whole range row %d is %v, want %v", c.name, n, row.Key, keys[n])
			}
			n++
		}
		if n != len(keys) {
			t.Errorf("%s: whole range read %d rows, want %d", c.name, n, len(keys))
		}
		pin := tablekit.String("0707")
		r, err := tbl.GetRange(ctx, tablekit.Key("pk", pin).Add("sk", tablekit.InfMin), tablekit.Key("pk", pin).Add("sk", tablekit.InfMax))
		if err != nil || len(r.Rows) != 2 {
			t.Errorf("%s: range of pk 0707: %d rows, %v; want 2", c.name, len(r.Rows), err)
		}

		// Where the items are: each in the shard the placement says.
		native, err := b2.NativeTableName(ctx, c.name)
		if err != nil {
			t.Fatal(err)
		}
		used, items := 0, 0
		for s := range shards {
			out, err := raw.Query(ctx, &dynamodb.QueryInput{
				TableName:                 aws.String(native),
				KeyConditionExpression:    aws.String("#s = :s"),
				ExpressionAttributeNames:  map[string]string{"#s": ".s"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberN{Value: fmt.Sprint(s)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Items) > 0 {
				used++
			}
			for _, it := range out.Items {
				items++
				k := string(it[".k"].(*types.AttributeValueMemberB).Value)
				pk, ok := pkOf[k]
				if !ok {
					t.Fatalf("%s: shard %d holds an item of key %q that was not written", c.name, s, k)
				}
				if want := wantShard(pk, shards, c.legacy); s != want {
					t.Errorf("%s: the row of pk %q is in shard %d, its placement says %d", c.name, pk, s, want)
				}
			}
		}
		if items != len(keys) || used != c.used {
			t.Errorf("%s: %d items on %d shards, want %d on %d", c.name, items, used, len(keys), c.used)
		}

		// The metadata item: no placement (as before) or placement 1.
		out, err := raw.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String("tablekit.meta"),
			Key:       map[string]types.AttributeValue{"name": &types.AttributeValueMemberS{Value: c.name}},
		})
		if err != nil {
			t.Fatal(err)
		}
		// A new table's count is in placedShards, so that an adapter from
		// before placements, which requires shards, refuses it rather than
		// look for its rows in the FNV shards.
		want := map[string]string{"shards": "4"}
		if !c.legacy {
			want = map[string]string{"placement": "1", "placedShards": "4"}
		}
		for _, attr := range []string{"shards", "placement", "placedShards"} {
			got := "absent"
			if v, ok := out.Item[attr]; ok {
				got = fmt.Sprintf("%#v", v)
				if nv, ok := v.(*types.AttributeValueMemberN); ok {
					got = nv.Value
				}
			}
			if w, ok := want[attr]; !ok && got != "absent" || ok && got != w {
				t.Errorf("%s: metadata attribute %s is %s, want %s", c.name, attr, got, cmp.Or(w, "absent"))
			}
		}
	}

	// A placement from a newer adapter: refused, not guessed.
	setPlacement := func(v string) {
		t.Helper()
		if _, err := raw.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String("tablekit.meta"),
			Key:                       map[string]types.AttributeValue{"name": &types.AttributeValueMemberS{Value: current}},
			UpdateExpression:          aws.String("SET #p = :p"),
			ExpressionAttributeNames:  map[string]string{"#p": "placement"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberN{Value: v}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	setPlacement("2")
	_, err = newBackend(t, opts).DescribeTable(ctx, current)
	if !errors.Is(err, tablekit.ErrUnavailable) || !strings.Contains(err.Error(), `placement "2"`) || !strings.Contains(err.Error(), current) {
		t.Errorf("DescribeTable of a table with placement 2: %v, want ErrUnavailable naming the table and the placement", err)
	}
	setPlacement("1")
	if _, ok, err := tablekit.NewClient(newBackend(t, opts)).Table(current).GetRow(ctx, keys[0]); err != nil || !ok {
		t.Errorf("GetRow after placement 1 is back: %v, %v", ok, err)
	}
}
