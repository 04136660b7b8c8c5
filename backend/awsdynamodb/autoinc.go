package awsdynamodb

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// Auto-increment key columns (SPEC §14).
//
// Each partition-key value of a table with an auto-increment column has a
// counter item in the table's own DynamoDB table, outside the rows' key
// space: partition key .s = -1 - the shard of the partition-key value
// (rows use shards 0..N-1, and no read, range or export ever queries a
// negative one), sort key .k = codec.EncodeKey of the partition-key value
// alone, and .n (N) the last value assigned. A write whose key holds
// tablekit.AutoIncrement takes its value with one UpdateItem (ADD .n 1,
// ReturnValues UPDATED_NEW: atomic, so concurrent writers never get the
// same value, and each value is above every one handed out before), then
// writes the row with a PutItem conditioned on attribute_not_exists(.k): a
// new row, never an overwrite. That condition fails only if the counter is
// behind a stored row (a row written with an explicit value, or a counter
// item lost): the write then reads the greatest value of the column among
// the rows that share the key's columns before it (one Query of one
// item), takes a value above it (one UpdateItem adding the difference) and
// tries again, at most maxAutoAttempts values in all (then
// driver.AutoIncrementTaken, nothing written). A write that fails after
// taking a value leaves a gap, never a duplicate. The counter item goes
// with the table (DeleteTable drops the DynamoDB table). A put or update
// giving the column a real value v first raises the counter to at least v
// (raiseCounter), so later values are above it even once that row is
// deleted (SPEC §14); a counter past MaxInt64 makes every AutoIncrement
// write of the partition key driver.AutoIncrementExhausted.
//
// The write's SPEC condition is evaluated on an absent row (the row is
// new) before a value is taken, so a failed condition costs no value.
// Inside an atomic write the values are taken before the
// TransactWriteItems, one UpdateItem (ADD n) for the n writes that need
// one; the transaction's puts carry attribute_not_exists(.k) and are never
// read (a failed transaction leaves a gap; one canceled because such a
// put met a row takes that write a value past it and is sent again).

// attrCounter is the counter item's last assigned value.
const attrCounter = ".n"

// counterShard is the .s of the counter item of a partition-key value in
// shard s: negative, so that no Query of the rows' shards meets it.
func counterShard(s int) int { return -1 - s }

// counterKey returns the DynamoDB key of the counter item of partition-key
// value pk in table ti (in the shard's counter range, by ti's placement).
func counterKey(pk tablekit.Value, ti *tableInfo) map[string]types.AttributeValue {
	return keyAttrs(counterShard(ti.shardOf(pk)), codec.EncodeKey(tablekit.PrimaryKey{{Value: pk}}))
}

// autoIncrement reports whether w's key holds tablekit.AutoIncrement.
func autoIncrement(w *tablekit.WriteRequest) bool { return w.Key.AutoIncrementIndex() >= 0 }

// takeValues takes n values from the counter of partition-key value pk
// and returns the first: the values are first .. first+n-1.
func (b *Backend) takeValues(ctx context.Context, meta *tablekit.TableMeta, ti *tableInfo, pk tablekit.Value, n int64) (int64, error) {
	out, err := b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(ti.native),
		Key:                       counterKey(pk, ti),
		UpdateExpression:          aws.String("ADD #n :n"),
		ExpressionAttributeNames:  map[string]string{"#n": attrCounter},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, b.tableErr(ctx, err, meta.Name, "UpdateItem (auto-increment counter)")
	}
	v, ok := out.Attributes[attrCounter].(*types.AttributeValueMemberN)
	if !ok {
		return 0, tablekit.Errorf(tablekit.ErrUnavailable, "auto-increment counter of partition %v: UpdateItem returned no value", pk)
	}
	last, err := strconv.ParseInt(v.Value, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v.Value, "-") {
		// ADD went past MaxInt64 (a DynamoDB number has 38 digits): the
		// partition key has used every value, and the counter stays past
		// it, so every later write is refused the same way.
		return 0, driver.AutoIncrementExhausted(meta.Name, tablekit.PrimaryKey{{Value: pk}})
	}
	if err != nil || last < n {
		return 0, tablekit.Errorf(tablekit.ErrUnavailable, "auto-increment counter of partition %v holds %q, not a count", pk, v.Value)
	}
	b.floors.Saw(floorID(ti, pk), last)
	return last - n + 1, nil
}

// floorID names the counter of partition-key value pk of ti in
// Backend.floors.
func floorID(ti *tableInfo, pk tablekit.Value) string {
	return ti.native + "\x00" + string(codec.EncodeKey(tablekit.PrimaryKey{{Value: pk}}))
}

// raiseCounter makes the counter of w's partition key at least the real
// value w gives the auto-increment column, if it does (SPEC §14: later
// assigned values are greater than it, also once that row is deleted),
// before w is written: one UpdateItem SET .n = v conditioned on .n being
// absent or below v (a failed condition: it is there already). Atomic with
// the UpdateItems that take values, so none at or below v is handed out
// afterwards. A counter known to be there already (floors) costs nothing.
func (b *Backend) raiseCounter(ctx context.Context, w *tablekit.WriteRequest, t target) error {
	pk := w.Key[0].Value
	return b.floors.Raise(w, floorID(t.ti, pk), func(v int64) error {
		_, err := b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(t.ti.native),
			Key:                       counterKey(pk, t.ti),
			UpdateExpression:          aws.String("SET #n = :v"),
			ConditionExpression:       aws.String("attribute_not_exists(#n) OR #n < :v"),
			ExpressionAttributeNames:  map[string]string{"#n": attrCounter},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}},
		})
		if err != nil && !isCode(err, "ConditionalCheckFailedException") {
			return b.tableErr(ctx, err, w.Meta.Name, "UpdateItem (raising the auto-increment counter)")
		}
		return nil
	})
}

// autoColumn returns the index of meta's auto-increment column, or -1.
func autoColumn(meta *tablekit.TableMeta) int {
	for i, kc := range meta.Key {
		if kc.AutoIncrement {
			return i
		}
	}
	return -1
}

// newRowCond is the condition of a write of a new row: no item at its key.
func newRowCond() (*string, map[string]string) {
	return aws.String("attribute_not_exists(#k)"), map[string]string{"#k": attrKey}
}

// maxAutoAttempts bounds how many values a write with AutoIncrement takes
// when it keeps finding its key taken (see pastTaken).
const maxAutoAttempts = 16

// pastTaken is what a write does whose assigned key, key, is already a row
// (written with an explicit value, or the counter item was lost): it finds
// m, the greatest value of the auto-increment column (index ai) among the
// rows that share key's columns before it (one Query of one item,
// backwards, on the sort-key prefix), and takes a value above both m and
// key's own (one UpdateItem adding the difference), so the counter never
// goes back and the next attempt cannot meet those rows.
func (b *Backend) pastTaken(ctx context.Context, meta *tablekit.TableMeta, t target, key tablekit.PrimaryKey, ai int) (int64, error) {
	v, _ := key[ai].Value.Int()
	out, err := b.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(t.ti.native),
		KeyConditionExpression:    aws.String("#s = :s AND begins_with(#k, :p)"),
		ExpressionAttributeNames:  map[string]string{"#s": attrShard, "#k": attrKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberN{Value: strconv.Itoa(t.shard)}, ":p": &types.AttributeValueMemberB{Value: codec.EncodeKey(key[:ai])}},
		ProjectionExpression:      aws.String("#k"),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return 0, b.tableErr(ctx, err, meta.Name, "Query")
	}
	m := v
	for _, item := range out.Items {
		if k, err := codec.DecodeKey(meta.Key, itemSortKey(item)); err == nil {
			if x, ok := k[ai].Value.Int(); ok {
				m = max(m, x)
			}
		}
	}
	first, err := b.takeValues(ctx, meta, t.ti, key[0].Value, m-v+1)
	return first + m - v, err
}

// writeAuto applies a write whose key holds tablekit.AutoIncrement: its
// condition on an absent row, a value from the counter (v, when a batch
// took it already, else one UpdateItem), then the row written only if no
// item has its key (else pastTaken, and again).
func (b *Backend) writeAuto(ctx context.Context, w *tablekit.WriteRequest, t target, v int64) (*tablekit.UpdateResult, error) {
	next, res, err := rowmodel.Apply(nil, w)
	if err != nil {
		return nil, err
	}
	if v == 0 {
		if v, err = b.takeValues(ctx, w.Meta, t.ti, w.Key[0].Value, 1); err != nil {
			return nil, err
		}
	}
	if res == nil {
		res = &tablekit.UpdateResult{}
	}
	for attempt := 1; ; attempt++ {
		key := w.Key.WithAutoIncrement(v)
		res.Key = key
		if next == nil {
			return res, nil // an update that leaves nothing: no row to write
		}
		sk, err := sortKey(key)
		if err != nil {
			return nil, err
		}
		enc, err := encodeItem(w.Meta, key, t.shard, sk, next, writeStamp(t, w))
		if err != nil {
			return nil, err
		}
		cond, names := newRowCond()
		_, err = b.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(t.ti.native), Item: enc.item,
			ConditionExpression: cond, ExpressionAttributeNames: names,
		})
		if err == nil {
			return res, nil
		}
		if !isCode(err, "ConditionalCheckFailedException") || ctx.Err() != nil {
			return nil, b.tableErr(ctx, err, w.Meta.Name, "PutItem")
		}
		// The SDK may have sent the PutItem again after a first attempt
		// that landed (its answer lost): see sentWrite.
		got, gerr := b.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(t.ti.native), Key: keyAttrs(t.shard, sk), ConsistentRead: aws.Bool(true),
		})
		if gerr != nil {
			return nil, b.tableErr(ctx, gerr, w.Meta.Name, "GetItem")
		}
		if (sentWrite{revision: revisionOf(enc.item)}).landed(got.Item) {
			return res, nil
		}
		if attempt == maxAutoAttempts {
			return nil, driver.AutoIncrementTaken(key, attempt)
		}
		if v, err = b.pastTaken(ctx, w.Meta, t, key, w.Key.AutoIncrementIndex()); err != nil {
			return nil, err
		}
	}
}

// batchValues takes the values of a batch's writes whose key holds
// tablekit.AutoIncrement: one UpdateItem (ADD n) per table and
// partition-key value for its n writes, which get them in request order.
// A write whose condition fails on an absent row gets that error in out
// instead (and takes no value), as does every write of a group whose
// UpdateItem failed. It returns each write's value (0 for the others), or
// nil when there are none.
func (b *Backend) batchValues(ctx context.Context, reqs []*tablekit.WriteRequest, ts []target, out []tablekit.WriteResponse) []int64 {
	groups := map[string][]int{}
	var order []string
	for i, w := range reqs {
		if out[i].Err != nil || !autoIncrement(w) {
			continue
		}
		if _, _, err := rowmodel.Apply(nil, w); err != nil {
			out[i].Err = err
			continue
		}
		id := ts[i].ti.native + "\x00" + string(codec.EncodeKey(w.Key[:1]))
		if groups[id] == nil {
			order = append(order, id)
		}
		groups[id] = append(groups[id], i)
	}
	if len(order) == 0 {
		return nil
	}
	vals := make([]int64, len(reqs))
	_ = driver.Parallel(ctx, len(order), b.opts.concurrency, func(ctx context.Context, g int) error {
		idx := groups[order[g]]
		w := reqs[idx[0]]
		first, err := b.takeValues(ctx, w.Meta, ts[idx[0]].ti, w.Key[0].Value, int64(len(idx)))
		for k, i := range idx {
			if err != nil {
				out[i].Err = err
			} else {
				vals[i] = first + int64(k)
			}
		}
		return nil
	})
	return vals
}

// assignAtomic gives every write of an atomic write whose key holds
// tablekit.AutoIncrement its value, one UpdateItem per partition-key value
// (one in all: an atomic write is within one), and returns the requests
// with those keys (copies; reqs is not changed), their targets updated,
// and which writes are new rows (nil when there are none).
func (b *Backend) assignAtomic(ctx context.Context, reqs []*tablekit.WriteRequest, ts []target) ([]*tablekit.WriteRequest, []bool, error) {
	var fresh []bool
	out := reqs
	for i, w := range reqs {
		if !autoIncrement(w) || (fresh != nil && fresh[i]) {
			continue
		}
		if _, _, err := rowmodel.Apply(nil, w); err != nil {
			return nil, nil, &tablekit.AtomicWriteError{Index: i, Err: err} // before any value is taken
		}
		if fresh == nil {
			fresh = make([]bool, len(reqs))
			out = append([]*tablekit.WriteRequest(nil), reqs...)
		}
		// Every write of this partition-key value that needs a value.
		var group []int
		for j := i; j < len(reqs); j++ {
			if autoIncrement(reqs[j]) && reqs[j].Key[0].Value.Equal(w.Key[0].Value) {
				group = append(group, j)
			}
		}
		first, err := b.takeValues(ctx, w.Meta, ts[i].ti, w.Key[0].Value, int64(len(group)))
		if err != nil {
			return nil, nil, err
		}
		for k, j := range group {
			c := *reqs[j]
			c.Key = reqs[j].Key.WithAutoIncrement(first + int64(k))
			sk, err := sortKey(c.Key)
			if err != nil {
				return nil, nil, &tablekit.AtomicWriteError{Index: j, Err: err}
			}
			out[j], fresh[j] = &c, true
			ts[j].sk = sk
		}
	}
	return out, fresh, nil
}
