package awsdynamodb

import (
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// TestDiffCells: the difference of two rows' cells, applied to the first,
// gives the second; puts come before deletions within a column, columns in
// name order.
func TestDiffCells(t *testing.T) {
	c := func(n string, v int64, ver int64) tablekit.Column {
		return tablekit.Column{Name: n, Value: tablekit.Integer(v), Version: ver}
	}
	old := []tablekit.Column{c("a", 1, 30), c("a", 1, 20), c("b", 5, 10), c("d", 7, 10)}
	new := []tablekit.Column{c("a", 2, 40), c("a", 1, 20), c("c", 3, 10), c("d", 8, 10)}
	got := fmt.Sprint(diffCells(old, new))
	want := fmt.Sprint([]tablekit.Change{
		tablekit.PutAt("a", tablekit.Integer(2), 40), tablekit.DeleteVersion("a", 30),
		tablekit.DeleteColumn("b"), tablekit.PutAt("c", tablekit.Integer(3), 10), tablekit.PutAt("d", tablekit.Integer(8), 10),
	})
	if got != want {
		t.Fatalf("diffCells = %s\nwant %s", got, want)
	}
	meta := &tablekit.TableMeta{Options: tablekit.TableOptions{MaxVersions: 10, TTL: tablekit.NoExpiry}}
	r, _, err := rowmodel.Apply(&rowmodel.Row{Cells: old}, &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Changes: diffCells(old, new), Now: 50})
	if err != nil || fmt.Sprint(r.Cells) != fmt.Sprint(new) {
		t.Fatalf("applying the difference: %v, %v; want %v", r, err, new)
	}
	if d := diffCells(new, new); len(d) != 0 {
		t.Errorf("diffCells of equal rows = %v", d)
	}
}

func TestParseStamp(t *testing.T) {
	for _, tc := range []struct {
		s        string
		kind     tablekit.WriteKind
		now      int64
		deleting bool
		ok       bool
	}{
		{"P1700000000123", tablekit.WritePut, 1700000000123, false, true},
		{"U-5", tablekit.WriteUpdate, -5, false, true},
		{"D12 abcdefghijk", tablekit.WriteDelete, 12, true, true},
		{"U12 x", tablekit.WriteUpdate, 12, true, true},
		{"X12", 0, 0, false, false},
		{"P", 0, 0, false, false},
		{"P12 ", 0, 0, false, false},
		{"Pabc", 0, 0, false, false},
	} {
		kind, now, deleting, ok := parseStamp(tc.s)
		if ok != tc.ok || (ok && (kind != tc.kind || now != tc.now || deleting != tc.deleting)) {
			t.Errorf("parseStamp(%q) = %v %d %v %v", tc.s, kind, now, deleting, ok)
		}
	}
	w := &tablekit.WriteRequest{Kind: tablekit.WriteDelete, Now: 7}
	if a, b := deleteStamp(w), deleteStamp(w); a == b {
		t.Errorf("two delete stamps are equal: %q", a)
	}
}

// TestDecodeStreamRecord: records of TTL deletions and of items that are
// no rows of the table are left out; a stamped put, update, deletion
// stamp and deletion decode as the writer's.
func TestDecodeStreamRecord(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeInteger}}, Options: tablekit.TableOptions{MaxVersions: 2, TTL: tablekit.NoExpiry}}
	key := tablekit.Key("pk", tablekit.Integer(4))
	sk := codec.EncodeKey(key)
	item := func(stamp string, cells ...tablekit.Column) map[string]stypes.AttributeValue {
		r := rowmodel.Row{Cells: cells}
		enc, err := encodeItem(meta, key, 0, sk, &r, stamp)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]stypes.AttributeValue{}
		for k, v := range enc.item {
			out[k] = toStream(v)
		}
		return out
	}
	keys := map[string]stypes.AttributeValue{attrShard: &stypes.AttributeValueMemberN{Value: "0"}, attrKey: &stypes.AttributeValueMemberB{Value: sk}}
	rec := func(ev stypes.OperationType, old, new map[string]stypes.AttributeValue, id *stypes.Identity) stypes.Record {
		return stypes.Record{EventName: ev, UserIdentity: id, Dynamodb: &stypes.StreamRecord{
			Keys: keys, OldImage: old, NewImage: new, SequenceNumber: aws.String("1"),
			ApproximateCreationDateTime: aws.Time(time.UnixMilli(99000)),
		}}
	}
	a1 := tablekit.Column{Name: "a", Value: tablekit.Integer(1), Version: 1000}
	a2 := tablekit.Column{Name: "a", Value: tablekit.Integer(2), Version: 2000}
	for _, tc := range []struct {
		name string
		r    stypes.Record
		want string // "" when left out
	}{
		{"put", rec(stypes.OperationTypeInsert, nil, item("P1000", a1), nil), `Put 1000 [PutAt("a", Integer(1), 1000)]`},
		{"update", rec(stypes.OperationTypeModify, item("P1000", a1), item("U2000", a2), nil), `Update 2000 [PutAt("a", Integer(2), 2000) DeleteVersion("a", 1000)]`},
		{"unstamped", rec(stypes.OperationTypeModify, item("P1000", a1), item("", a2, a1), nil), `Update 99000 [PutAt("a", Integer(2), 2000)]`},
		{"delete stamp", rec(stypes.OperationTypeModify, item("P1000", a1), item("D3000 xyz", a1), nil), ""},
		{"deletion", rec(stypes.OperationTypeRemove, item("D3000 xyz", a1), nil, nil), `Delete 3000 []`},
		{"plain deletion", rec(stypes.OperationTypeRemove, item("U2000", a1), nil, nil), `Delete 99000 []`},
		{"no change", rec(stypes.OperationTypeModify, item("P1000", a1), item("U2000", a1), nil), `Update 2000 [PutAt("a", Integer(1), 1000)]`},
		{"no change, no row", rec(stypes.OperationTypeRemove, item("U2000 xyz"), nil, nil), `Delete 2000 []`},
		{"ttl", rec(stypes.OperationTypeRemove, item("P1000", a1), nil, &stypes.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}), ""},
	} {
		r, keep, err := decodeStreamRecord(meta, tc.r)
		got := ""
		if keep {
			if !r.Key.Equal(key) {
				t.Errorf("%s: key %v", tc.name, r.Key)
			}
			got = fmt.Sprintf("%s %d %v", r.Kind, r.CommitTime.UnixMilli(), r.Changes)
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	counter := rec(stypes.OperationTypeModify, nil, nil, nil)
	counter.Dynamodb.Keys = map[string]stypes.AttributeValue{attrShard: &stypes.AttributeValueMemberN{Value: "-1"}, attrKey: &stypes.AttributeValueMemberB{Value: codec.EncodeKey(key[:1])}}
	if _, keep, err := decodeStreamRecord(meta, counter); keep || err != nil {
		t.Errorf("an auto-increment counter's record: kept %v, %v; want left out", keep, err)
	}
	// A row's record whose key does not decode fails: never left out.
	for name, keys := range map[string]map[string]stypes.AttributeValue{
		"no key of the schema": {attrShard: &stypes.AttributeValueMemberN{Value: "0"}, attrKey: &stypes.AttributeValueMemberB{Value: []byte("#counter")}},
		"no sort key":          {attrShard: &stypes.AttributeValueMemberN{Value: "0"}},
		"a String sort key":    {attrShard: &stypes.AttributeValueMemberN{Value: "0"}, attrKey: &stypes.AttributeValueMemberS{Value: string(sk)}},
	} {
		bad := rec(stypes.OperationTypeInsert, nil, item("P1000", a1), nil)
		bad.Dynamodb.Keys = keys
		if _, keep, err := decodeStreamRecord(meta, bad); keep || !errors.Is(err, errCorrupt) {
			t.Errorf("%s: kept %v, %v; want errCorrupt", name, keep, err)
		}
	}
}

// TestDecodeStreamRecordBase64Twice: a record whose Binary values arrive
// base64-encoded a second time (moto 5.2.1) decodes as the one sent once,
// and no key's encoding reads as base64 text of another.
func TestDecodeStreamRecordBase64Twice(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeBinary}, {Name: "n", Type: tablekit.TypeInteger}}, Options: tablekit.TableOptions{MaxVersions: 2, TTL: tablekit.NoExpiry}}
	key := tablekit.PrimaryKey{{Name: "pk", Value: tablekit.String("a")}, {Name: "b", Value: tablekit.Binary([]byte{0, 1, 2})}, {Name: "n", Value: tablekit.Integer(-7)}}
	sk := codec.EncodeKey(key)
	cells := []tablekit.Column{{Name: "bin", Value: tablekit.Binary([]byte{9, 0, 255}), Version: 1000}, {Name: "s", Value: tablekit.String("x"), Version: 1000}}
	r := rowmodel.Row{Cells: cells}
	enc, err := encodeItem(meta, key, 0, sk, &r, "P1000")
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) }
	img := map[string]stypes.AttributeValue{}
	for k, v := range enc.item {
		sv := toStream(v)
		if b, ok := sv.(*stypes.AttributeValueMemberB); ok {
			sv = &stypes.AttributeValueMemberB{Value: b64(b.Value)}
		}
		img[k] = sv
	}
	if _, ok := img[attrBinary]; !ok {
		t.Fatal("the item has no Binary cells attribute: the test checks nothing")
	}
	got, keep, err := decodeStreamRecord(meta, stypes.Record{EventName: stypes.OperationTypeInsert, Dynamodb: &stypes.StreamRecord{
		Keys:     map[string]stypes.AttributeValue{attrShard: &stypes.AttributeValueMemberN{Value: "0"}, attrKey: &stypes.AttributeValueMemberB{Value: b64(sk)}},
		NewImage: img, SequenceNumber: aws.String("1"),
	}})
	if err != nil || !keep || !got.Key.Equal(key) || fmt.Sprint(got.Changes) != fmt.Sprint([]tablekit.Change{tablekit.PutAt("bin", cells[0].Value, 1000), tablekit.PutAt("s", cells[1].Value, 1000)}) {
		t.Fatalf("doubly encoded record: %v %v %v", got, keep, err)
	}
	// The key of base64 text decodes as is: it is taken as sent once.
	for _, k := range []tablekit.PrimaryKey{key, {{Name: "pk", Value: tablekit.String("QUJD")}, {Name: "b", Value: tablekit.Binary(nil)}, {Name: "n", Value: tablekit.Integer(0)}}} {
		if _, err := codec.DecodeKey(meta.Key, b64(codec.EncodeKey(k))); err == nil {
			t.Errorf("the base64 text of key %v decodes as a key", k)
		}
	}
}

// toStream converts an item attribute to DynamoDB Streams' type (tests).
func toStream(v types.AttributeValue) stypes.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return &stypes.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &stypes.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberB:
		return &stypes.AttributeValueMemberB{Value: v.Value}
	case *types.AttributeValueMemberBOOL:
		return &stypes.AttributeValueMemberBOOL{Value: v.Value}
	}
	panic("unexpected attribute type")
}
