package awsdynamodb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// Retry tuning.
const (
	// occBackoffBase/Cap space the retries of an optimistic write that lost
	// a race (another writer changed the revision in between).
	occBackoffBase = time.Millisecond
	occBackoffCap  = 64 * time.Millisecond
	// batchBackoffBase/Cap space the retries of UnprocessedItems/Keys and
	// of throttled or failed batch calls.
	batchBackoffBase = 10 * time.Millisecond
	batchBackoffCap  = time.Second
	// maxTransientRetries is how many times in a row a batch call that
	// failed outright (after the SDK's own retries) is sent again without
	// any progress before its rows get the error.
	maxTransientRetries = 8
)

// PutRow implements tablekit.Backend. An unconditional PutRow is one
// PutItem (it replaces the whole item, as SPEC's PutRow replaces the whole
// row); a conditional one goes through the optimistic path.
func (b *Backend) PutRow(ctx context.Context, req *tablekit.PutRowRequest) error {
	_, err := b.write(ctx, &tablekit.WriteRequest{Put: req})
	return err
}

// UpdateRow implements tablekit.Backend (optimistic read-modify-write).
func (b *Backend) UpdateRow(ctx context.Context, req *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	return b.write(ctx, &tablekit.WriteRequest{Update: req})
}

// DeleteRow implements tablekit.Backend. An unconditional DeleteRow is one
// DeleteItem.
func (b *Backend) DeleteRow(ctx context.Context, req *tablekit.DeleteRowRequest) error {
	_, err := b.write(ctx, &tablekit.WriteRequest{Delete: req})
	return err
}

// direct reports whether w is a write that needs no read: an unconditional
// put or delete.
func direct(w *tablekit.WriteRequest) bool {
	return (w.Put != nil && w.Put.Condition.IsZero()) || (w.Delete != nil && w.Delete.Condition.IsZero())
}

// target is where a write lands.
type target struct {
	ti    *tableInfo
	shard int
	sk    []byte
}

func (b *Backend) locate(ctx context.Context, w *tablekit.WriteRequest) (target, error) {
	meta, key := w.Meta(), w.Key()
	if meta == nil {
		return target{}, tablekit.Errorf(tablekit.ErrInvalidArgument, "empty write request")
	}
	ti, err := b.info(ctx, meta.Name)
	if err != nil {
		return target{}, err
	}
	sk, err := sortKey(meta, key)
	if err != nil {
		return target{}, err
	}
	return target{ti: ti, shard: shardOf(key[0].Value, ti.shards), sk: sk}, nil
}

// directRequest returns the BatchWriteItem form of a direct write, checking
// the item's size first.
func directRequest(w *tablekit.WriteRequest, t target) (types.WriteRequest, error) {
	if w.Delete != nil {
		return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyAttrs(t.shard, t.sk)}}, nil
	}
	r := rowmodel.Put(w.Put.Columns, w.Put.Meta.Options, w.Put.Now)
	enc, err := encodeItem(w.Put.Meta, w.Put.Key, t.shard, t.sk, &r)
	if err != nil {
		return types.WriteRequest{}, err
	}
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: enc.item}}, nil
}

func (b *Backend) write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	t, err := b.locate(ctx, w)
	if err != nil {
		return nil, err
	}
	return b.writeAt(ctx, w, t)
}

func (b *Backend) writeAt(ctx context.Context, w *tablekit.WriteRequest, t target) (*tablekit.UpdateResult, error) {
	meta := w.Meta()
	if direct(w) {
		wr, err := directRequest(w, t)
		if err != nil {
			return nil, err
		}
		if wr.PutRequest != nil {
			_, err = b.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.ti.native), Item: wr.PutRequest.Item})
			return nil, b.tableErr(ctx, err, meta.Name, "PutItem")
		}
		_, err = b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.ti.native), Key: wr.DeleteRequest.Key})
		return nil, b.tableErr(ctx, err, meta.Name, "DeleteItem")
	}
	return b.occ(ctx, w, t)
}

// occ applies w with optimistic concurrency: read the item consistently,
// compute the new row with rowmodel.Apply (condition, versions, TTL,
// increments), and write it only if the item's revision is still the one
// read (or the item is still absent). A lost race is retried with jittered
// backoff until it wins or ctx ends, so concurrent writers lose nothing.
func (b *Backend) occ(ctx context.Context, w *tablekit.WriteRequest, t target) (*tablekit.UpdateResult, error) {
	meta, key := w.Meta(), w.Key()
	dkey := keyAttrs(t.shard, t.sk)
	for attempt := 0; ; attempt++ {
		got, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(t.ti.native), Key: dkey, ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, b.tableErr(ctx, err, meta.Name, "GetItem")
		}
		var cur *rowmodel.Row
		if len(got.Item) > 0 {
			r, err := decodeRow(got.Item)
			if err != nil {
				return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: stored row %v", meta.Name, key)
			}
			cur = &r
		}
		next, res, err := rowmodel.Apply(cur, w)
		if err != nil {
			return nil, err
		}
		names := map[string]string{}
		vals := map[string]types.AttributeValue{}
		var cond string
		switch rev := itemRevision(got.Item); {
		case len(got.Item) == 0:
			cond = "attribute_not_exists(#k)"
			names["#k"] = attrKey
		case rev == nil:
			cond = "attribute_not_exists(#r)"
			names["#r"] = attrRevision
		default:
			cond = "#r = :r"
			names["#r"] = attrRevision
			vals[":r"] = rev
		}
		if len(vals) == 0 {
			vals = nil
		}
		if next == nil {
			if len(got.Item) == 0 {
				return res, nil // nothing stored, nothing to store
			}
			_, err = b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName: aws.String(t.ti.native), Key: dkey,
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			})
		} else {
			enc, eerr := encodeItem(meta, key, t.shard, t.sk, next)
			if eerr != nil {
				return nil, eerr
			}
			_, err = b.client.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(t.ti.native), Item: enc.item,
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			})
		}
		if err == nil {
			return res, nil
		}
		if !isCode(err, "ConditionalCheckFailedException") {
			return nil, b.tableErr(ctx, err, meta.Name, "conditional write")
		}
		if err := sleep(ctx, backoff(attempt, occBackoffBase, occBackoffCap)); err != nil {
			return nil, err
		}
	}
}

// BatchWriteRow implements tablekit.Backend. Unconditional puts and deletes
// go through BatchWriteItem, 25 per call, grouped per table; every other
// write (conditions, updates) takes the single-row optimistic path. All of
// it runs in parallel within the backend's concurrency bound. Writes to the
// same row are applied in request order: the k-th write to a row runs in
// wave k, after wave k-1 has finished.
func (b *Backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResult, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	out := make([]tablekit.WriteResult, len(reqs))
	targets := make([]target, len(reqs))
	var waves [][]int
	seen := map[string]int{}
	for i, w := range reqs {
		t, err := b.locate(ctx, w)
		if err != nil {
			if isCtx(ctx) {
				return nil, ctx.Err()
			}
			out[i].Err = err
			continue
		}
		targets[i] = t
		id := t.ti.native + "\x00" + string(t.sk)
		k := seen[id]
		seen[id] = k + 1
		if k == len(waves) {
			waves = append(waves, nil)
		}
		waves[k] = append(waves[k], i)
	}
	for _, wave := range waves {
		type task struct {
			occ    int    // a write for the optimistic path, or -1
			native string // a BatchWriteItem chunk
			rows   []int
			items  []types.WriteRequest
		}
		var tasks []task
		chunks := map[string]*task{}
		var order []string
		for _, i := range wave {
			w := reqs[i]
			if !direct(w) {
				tasks = append(tasks, task{occ: i})
				continue
			}
			wr, err := directRequest(w, targets[i])
			if err != nil {
				out[i].Err = err
				continue
			}
			native := targets[i].ti.native
			c := chunks[native]
			if c == nil || len(c.rows) == 25 {
				if c != nil {
					tasks = append(tasks, *c)
				} else {
					order = append(order, native)
				}
				c = &task{occ: -1, native: native}
				chunks[native] = c
			}
			c.rows = append(c.rows, i)
			c.items = append(c.items, wr)
		}
		for _, native := range order {
			tasks = append(tasks, *chunks[native])
		}
		err := b.parallel(ctx, len(tasks), func(ctx context.Context, j int) error {
			tk := tasks[j]
			if tk.occ >= 0 {
				out[tk.occ].Update, out[tk.occ].Err = b.occ(ctx, reqs[tk.occ], targets[tk.occ])
				return nil
			}
			failed, err := b.batchWrite(ctx, tk.native, tk.items)
			for k, i := range tk.rows {
				if failed[k] {
					out[i].Err = b.tableErr(ctx, err, reqs[i].Meta().Name, "BatchWriteItem")
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if isCtx(ctx) {
			return nil, ctx.Err()
		}
	}
	return out, nil
}

// batchWrite sends items (≤ 25, distinct keys, one table) with
// BatchWriteItem, retrying UnprocessedItems with capped jittered backoff
// until every item is written or ctx ends, and calls that failed outright
// with a retryable error (throttling, 5xx, lost connections: every item is
// an idempotent put or delete) up to maxTransientRetries times in a row. It
// reports which items were not written, and why.
func (b *Backend) batchWrite(ctx context.Context, native string, items []types.WriteRequest) ([]bool, error) {
	failed := make([]bool, len(items))
	// pending holds indexes into items; unprocessed items are matched back
	// by their sort key, unique within the call.
	pending := make([]int, len(items))
	for i := range pending {
		pending[i] = i
	}
	skOf := func(wr types.WriteRequest) string {
		if wr.PutRequest != nil {
			return string(itemSortKey(wr.PutRequest.Item))
		}
		return string(itemSortKey(wr.DeleteRequest.Key))
	}
	for attempt := 0; len(pending) > 0; {
		batch := make([]types.WriteRequest, len(pending))
		for k, i := range pending {
			batch[k] = items[i]
		}
		res, err := b.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{native: batch},
		})
		if err != nil {
			if !retryable(err) || attempt >= maxTransientRetries || isCtx(ctx) {
				for _, i := range pending {
					failed[i] = true
				}
				return failed, err
			}
		} else {
			left := res.UnprocessedItems[native]
			if len(left) == 0 {
				return failed, nil
			}
			bySK := make(map[string]int, len(pending))
			for _, i := range pending {
				bySK[skOf(items[i])] = i
			}
			next := make([]int, 0, len(left))
			for _, wr := range left {
				if i, ok := bySK[skOf(wr)]; ok {
					next = append(next, i)
				}
			}
			if len(next) < len(pending) {
				attempt = 0 // progress: the backoff starts over
			}
			pending = next
		}
		if err := sleep(ctx, backoff(attempt, batchBackoffBase, batchBackoffCap)); err != nil {
			for _, i := range pending {
				failed[i] = true
			}
			return failed, err
		}
		attempt++
	}
	return failed, nil
}
