package awsdynamodb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// Retry tuning.
var (
	// occBackoff spaces the retries of an optimistic write that lost a race
	// (another writer changed the revision in between).
	occBackoff = driver.Backoff{Base: time.Millisecond, Max: 64 * time.Millisecond}
	// batchBackoff spaces the retries of UnprocessedItems/Keys and of
	// throttled or failed batch calls.
	batchBackoff = driver.Backoff{Base: 10 * time.Millisecond, Max: time.Second}
)

// maxOCCAttempts bounds the rounds (a read, then a write conditioned on
// it) of one optimistic write: one whose row changed between the read and
// the write that many times in a row fails with ErrThrottled (occAgain).
// A var for tests.
var maxOCCAttempts = 100

// maxTransientRetries is how many times in a row a batch call that failed
// outright (after the SDK's own retries) is sent again without any
// progress before its rows get the error.
const maxTransientRetries = 8

// Write implements tablekit.Backend. An unconditional put is one PutItem
// (it replaces the whole item, as SPEC's PutRow replaces the whole row) and
// an unconditional delete one DeleteItem; every other write goes through
// the optimistic path (occ).
func (b *Backend) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	t, err := b.locate(ctx, w)
	if err != nil {
		return nil, err
	}
	if err := b.raiseCounter(ctx, w, t); err != nil {
		return nil, err
	}
	if !direct(w) || feedDeletes(w, t) {
		return b.write(ctx, w, t)
	}
	wr, err := directRequest(w, t)
	if err != nil {
		return nil, err
	}
	if wr.PutRequest != nil {
		_, err = b.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.ti.native), Item: wr.PutRequest.Item})
		return nil, b.tableErr(ctx, err, w.Meta.Name, "PutItem")
	}
	_, err = b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.ti.native), Key: wr.DeleteRequest.Key})
	return nil, b.tableErr(ctx, err, w.Meta.Name, "DeleteItem")
}

// feedDeletes reports whether w is a delete on a table whose change feed
// is on, which takes two calls (feedDelete) after a read.
func feedDeletes(w *tablekit.WriteRequest, t target) bool {
	return t.ti.feed && w.Kind == tablekit.WriteDelete
}

// direct reports whether w is a write that needs no read: a put or delete
// that reads nothing (rowmodel.WriteReads), that is, an unconditional one.
// (An update always rewrites the item, or adds to it in one conditional
// call: see fastwrite.go.)
func direct(w *tablekit.WriteRequest) bool {
	return !autoIncrement(w) && (w.Kind == tablekit.WritePut || w.Kind == tablekit.WriteDelete) && rowmodel.WriteReads(w) == rowmodel.ReadsNothing
}

// target is where a write lands.
type target struct {
	ti    *tableInfo
	shard int
	sk    []byte
}

func (b *Backend) locate(ctx context.Context, w *tablekit.WriteRequest) (target, error) {
	if w.Meta == nil || len(w.Key) == 0 {
		return target{}, tablekit.Errorf(tablekit.ErrInvalidArgument, "empty write request")
	}
	ti, err := b.info(ctx, w.Meta)
	if err != nil {
		return target{}, err
	}
	k := w.Key
	if autoIncrement(w) {
		k = k.WithAutoIncrement(0) // as long as every value (sortKey checks the limit); writeAuto encodes the real one
	}
	sk, err := sortKey(k)
	if err != nil {
		return target{}, err
	}
	return target{ti: ti, shard: ti.shardOf(w.Key[0].Value), sk: sk}, nil
}

// directRequest returns the BatchWriteItem form of a direct write, checking
// the item's size first. A put's item is stamped with the request's
// Generation, as the optimistic path's are.
func directRequest(w *tablekit.WriteRequest, t target) (types.WriteRequest, error) {
	if w.Kind == tablekit.WriteDelete {
		return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyAttrs(t.shard, t.sk)}}, nil
	}
	r := rowmodel.Put(w.Columns, w.Meta.Options, w.Now)
	r.Generation = w.Meta.Generation
	enc, err := encodeItem(w.Meta, w.Key, t.shard, t.sk, &r, writeStamp(t, w))
	if err != nil {
		return types.WriteRequest{}, err
	}
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: enc.item}}, nil
}

// write applies a write that is not direct: a new auto-increment key with
// writeAuto (autoinc.go); else in one conditional call when it can
// (fastwrite.go), else, or when that call's condition fails, with
// optimistic concurrency.
func (b *Backend) write(ctx context.Context, w *tablekit.WriteRequest, t target) (*tablekit.UpdateResult, error) {
	if autoIncrement(w) {
		return b.writeAuto(ctx, w, t, 0)
	}
	var sent sentWrite
	if (fastUpdate(w) || fastPutOrDelete(w)) && !feedDeletes(w, t) {
		res, done, s, err := b.fastWrite(ctx, w, t)
		if done {
			return res, err
		}
		sent = s
	}
	return b.occ(ctx, w, t, sent)
}

// sentWrite is what a conditional call that failed its condition had
// written, had it landed: the revision it gave the item (empty when the
// call could give none: a delete, or an update of an item that had one)
// and the write's result. The SDK sends a call again when its answer was
// lost (a reset connection, a server error), so a condition can fail on
// the item the first attempt wrote: the revision, unique to the call,
// tells that the write took effect after all, and occ returns its result
// rather than failing the condition or writing it twice.
type sentWrite struct {
	revision string
	res      *tablekit.UpdateResult
}

// landed reports whether item holds the revision s's call wrote.
func (s sentWrite) landed(item map[string]types.AttributeValue) bool {
	rev, ok := itemRevision(item).(*types.AttributeValueMemberS)
	return ok && s.revision != "" && rev.Value == s.revision
}

// revisionOf returns the revision an item to be written carries.
func revisionOf(item map[string]types.AttributeValue) string {
	if rev, ok := itemRevision(item).(*types.AttributeValueMemberS); ok {
		return rev.Value
	}
	return ""
}

// occ applies w with optimistic concurrency: read the item consistently,
// compute the new row with rowmodel.Apply (condition, versions, TTL,
// increments, and the refusal of a row written under a newer options
// Generation than w's, driver.ErrStaleMeta), and write it only if the
// item's revision is still the one read (or the item is still absent). A
// lost race is retried with jittered backoff until it wins, so concurrent
// writers lose nothing, at most maxOCCAttempts rounds (occAgain) or until
// ctx ends; any other error, the stale one included, is returned as it
// is. sent is what the call before the first round wrote (zero: none); a
// round that finds it, or its previous round's put, landed returns that
// write's result (sentWrite).
func (b *Backend) occ(ctx context.Context, w *tablekit.WriteRequest, t target, sent sentWrite) (*tablekit.UpdateResult, error) {
	meta, key := w.Meta, w.Key
	dkey := keyAttrs(t.shard, t.sk)
	confirmed := false // the table's options are known to be meta's (rowmodel.Reveals)
	for attempt := 0; ; attempt++ {
		got, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(t.ti.native), Key: dkey, ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, b.tableErr(ctx, err, meta.Name, "GetItem")
		}
		if sent.landed(got.Item) {
			return sent.res, nil
		}
		var cur *rowmodel.Row
		if len(got.Item) > 0 {
			r, err := decodeRow(got.Item)
			if err != nil {
				return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "stored row %v", key)
			}
			cur = &r
		}
		next, res, err := rowmodel.Apply(cur, w)
		if err != nil {
			return nil, err
		}
		if !confirmed && rowmodel.Reveals(w, cur, next) {
			if err := b.confirmGeneration(ctx, meta); err != nil {
				return nil, err
			}
			confirmed = true
		}
		cond, names, vals := revisionCond(got.Item)
		if next == nil && t.ti.feed {
			// Recorded even where nothing is stored (SPEC §15).
			applied, err := b.feedDelete(ctx, w, t, cond, names, vals)
			if applied || err != nil {
				return res, err
			}
			if err := occAgain(ctx, w, attempt); err != nil {
				return nil, err
			}
			continue
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
			enc, eerr := encodeItem(meta, key, t.shard, t.sk, next, writeStamp(t, w))
			if eerr != nil {
				return nil, eerr
			}
			_, err = b.client.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(t.ti.native), Item: enc.item,
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			})
			sent = sentWrite{revision: revisionOf(enc.item), res: res}
		}
		if err == nil {
			return res, nil
		}
		if !isCode(err, "ConditionalCheckFailedException") {
			return nil, b.tableErr(ctx, err, meta.Name, "conditional write")
		}
		if err := occAgain(ctx, w, attempt); err != nil {
			return nil, err
		}
	}
}

// occAgain waits before round attempt+1 of w's optimistic write, round
// attempt having lost the race; after maxOCCAttempts rounds it is instead
// the write's ErrThrottled (retryable: the row is that hot), naming the
// table, the key and the limit, the row as the last writer left it.
func occAgain(ctx context.Context, w *tablekit.WriteRequest, attempt int) error {
	if attempt+1 >= maxOCCAttempts {
		return tablekit.Errorf(tablekit.ErrThrottled,
			"table %q: %v: the row changed between the read and the conditional write of each of %d rounds (the limit of an optimistic write); not applied",
			w.Meta.Name, w.Key, maxOCCAttempts)
	}
	return occBackoff.Wait(ctx, attempt)
}

// confirmGeneration reads the metadata item and refuses, with the error
// that makes the Client read the table again and retry, a request whose
// options are older than the table's (rowmodel.CheckGeneration): occ calls
// it before a write that could bring a hidden version back into view
// (rowmodel.Reveals), a DeleteVersion that keeps older versions of its
// column. Only an UpdateTable that lands between this read and the
// conditional write escapes it.
func (b *Backend) confirmGeneration(ctx context.Context, meta *tablekit.TableMeta) error {
	cur, _, err := b.describe(ctx, meta.Name)
	if err != nil {
		return err
	}
	if cur.Incarnation != meta.Incarnation {
		return inTable(tablekit.Errorf(tablekit.ErrTableNotFound, "the table was deleted and created again since the request's metadata was read"), meta.Name)
	}
	return rowmodel.CheckGeneration(meta, cur.Generation)
}

// BatchWriteRow implements tablekit.BatchWriter. Unconditional puts and
// deletes go through BatchWriteItem, 25 per call, grouped per DynamoDB
// table; every other write (conditions, updates) takes the single-row
// optimistic path. Writes whose key holds tablekit.AutoIncrement take
// their values first, one UpdateItem per partition key (batchValues: in
// request order), then are written as single rows (writeAuto). All of it runs in parallel within the backend's
// concurrency bound: the Client never sends two writes of one row in one
// call.
func (b *Backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	out := make([]tablekit.WriteResponse, len(reqs))
	targets := make([]target, len(reqs))
	type task struct {
		occ    int    // a write for the optimistic path, or -1
		native string // a BatchWriteItem chunk
		rows   []int
		items  []types.WriteRequest
	}
	var tasks []task
	chunks := map[string]*task{}
	var order []string
	for i, w := range reqs {
		t, err := b.locate(ctx, w)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out[i].Err = err
			continue
		}
		if err := b.raiseCounter(ctx, w, t); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out[i].Err = err
			continue
		}
		targets[i] = t
		if !direct(w) || feedDeletes(w, t) {
			tasks = append(tasks, task{occ: i})
			continue
		}
		wr, err := directRequest(w, t)
		if err != nil {
			out[i].Err = err
			continue
		}
		native := t.ti.native
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
	vals := b.batchValues(ctx, reqs, targets, out)
	err := driver.Parallel(ctx, len(tasks), b.opts.concurrency, func(ctx context.Context, j int) error {
		tk := tasks[j]
		if tk.occ >= 0 {
			switch i := tk.occ; {
			case out[i].Err != nil: // from batchValues
			case vals != nil && vals[i] != 0:
				out[i].Update, out[i].Err = b.writeAuto(ctx, reqs[i], targets[i], vals[i])
			default:
				out[i].Update, out[i].Err = b.write(ctx, reqs[i], targets[i])
			}
			return nil
		}
		failed, err := b.batchWrite(ctx, tk.native, tk.items)
		for k, i := range tk.rows {
			if failed[k] {
				out[i].Err = b.tableErr(ctx, err, reqs[i].Meta.Name, "BatchWriteItem")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
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
			if !retryable(err) || attempt >= maxTransientRetries || ctx.Err() != nil {
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
		if err := batchBackoff.Wait(ctx, attempt); err != nil {
			for _, i := range pending {
				failed[i] = true
			}
			return failed, err
		}
		attempt++
	}
	return failed, nil
}
