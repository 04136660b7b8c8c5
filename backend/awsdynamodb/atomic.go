package awsdynamodb

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// Atomic writes (SPEC §13) are one TransactWriteItems.
//
// Each write becomes one item of the transaction. A put or delete that
// reads nothing, or (without TTL) only the row's existence, is sent at
// once, conditioned as its one-call form is (fastwrite.go: the existence,
// and a row generation no newer than the request's). Any other write reads
// its item first (one consistent BatchGetItem for all of them), computes
// the new row with rowmodel.Apply (its SPEC condition, versions, TTL,
// increments, the stale-options refusal), and is sent conditioned on the
// revision it read, or on the item's absence, as the optimistic path's
// write is (write.go); a write that leaves an absent row absent is a
// ConditionCheck of that absence. A SPEC condition that fails on the read
// state is returned for its write, and nothing is sent.
//
// When DynamoDB cancels the transaction because an item's condition
// failed (another writer got in between, or a one-call condition failed
// and only a read can say why), the whole write is done again with every
// item read, a bounded number of times (maxAtomicAttempts). A write that
// could bring a hidden version back into view (rowmodel.Reveals) also
// carries a ConditionCheck that the table's metadata item still has the
// request's incarnation and options Generation, so that no UpdateTable can
// land between the check and the write (with 100 writes there is no room
// for it: the metadata is then read before, as the single-row path does).
//
// A store without TransactWriteItems (dynalite) is opened with
// Options.NoTransactions: the backend then declares no atomic writes and
// the Client refuses them.

// maxTransactItems is DynamoDB's bound on the items of one transaction.
const maxTransactItems = 100

// maxTransactBytes is DynamoDB's bound on the items' aggregate size.
const maxTransactBytes = 4 << 20

// maxAtomicAttempts bounds how many times an atomic write is sent again
// after losing a race.
const maxAtomicAttempts = 64

// AtomicWrite implements tablekit.AtomicWriter with one TransactWriteItems
// (see Atomic writes above). With Options.NoTransactions it is ErrSkip.
func (b *Backend) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if b.opts.noTransactions {
		return nil, tablekit.ErrSkip
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	if err := b.haveTransactions(ctx); err != nil {
		return nil, err
	}
	if len(reqs) > maxTransactItems {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "%d writes: a DynamoDB transaction holds at most %d", len(reqs), maxTransactItems)
	}
	table := reqs[0].Meta.Name
	ts := make([]target, len(reqs))
	for i, w := range reqs {
		if w.Meta == nil || w.Meta.Name != table {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: tablekit.Errorf(tablekit.ErrInvalidArgument,
				"an atomic write is within one table, %q", table)}
		}
		t, err := b.locate(ctx, w)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		ts[i] = t
	}
	for i, w := range reqs { // real auto-increment values first (SPEC §14)
		if err := b.raiseCounter(ctx, w, ts[i]); err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
	}
	reqs, fresh, err := b.assignAtomic(ctx, reqs, ts)
	if err != nil {
		return nil, err
	}
	tx := &atomicTx{b: b, reqs: reqs, ts: ts, fresh: fresh}
	readAll := false
	for attempt := 0; ; attempt++ {
		items, out, err := tx.build(ctx, readAll)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			return out, nil
		}
		raced := false
		for _, in := range tx.stamps {
			if _, err := b.client.UpdateItem(ctx, in); isCode(err, "ConditionalCheckFailedException") {
				raced = true
				break
			} else if err != nil {
				return nil, b.tableErr(ctx, err, table, "UpdateItem (delete stamp)")
			}
		}
		if raced {
			readAll = true
			if attempt+1 >= maxAtomicAttempts {
				return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the rows of the atomic write kept changing under it (%d attempts)", maxAtomicAttempts)
			}
			if err := occBackoff.Wait(ctx, attempt); err != nil {
				return nil, err
			}
			continue
		}
		_, err = b.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return out, nil
		}
		var tce *types.TransactionCanceledException
		if isUnknownOperation(err) {
			return nil, inTable(tablekit.WrapError(tablekit.ErrUnimplemented, errors.Join(noTransactionsErr(), err), "TransactWriteItems"), table)
		}
		if !errors.As(err, &tce) {
			return nil, b.tableErr(ctx, err, table, "TransactWriteItems")
		}
		if err := tx.canceled(ctx, tce); err != nil {
			return nil, err
		}
		// A race, or a one-call condition that only a read can explain.
		readAll = true
		if attempt+1 >= maxAtomicAttempts {
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err,
				"TransactWriteItems lost %d races in a row to concurrent writers", maxAtomicAttempts)
		}
		if err := occBackoff.Wait(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// atomicTx is one atomic write being built and sent.
type atomicTx struct {
	b    *Backend
	reqs []*tablekit.WriteRequest
	ts   []target

	// fresh[i]: write i is a new row whose key the counter assigned
	// (autoinc.go): never read, always put if absent (nil: none is).
	fresh []bool
	// picked[i]: how many values write i has been given (repick).
	picked []int

	confirmed bool // the table's Generation is known to be the requests' (rowmodel.Reveals)
	metaItem  int  // the index of the metadata ConditionCheck in the last build, or -1
	metaFor   int  // the write that asked for it

	// stamps are the delete stamps to write before the transaction (feed.go).
	stamps []*dynamodb.UpdateItemInput
}

// oneCall reports whether w is sent without a read: a put or delete
// whose condition one DynamoDB condition says (see fastwrite.go).
func oneCall(w *tablekit.WriteRequest) bool {
	return (w.Kind == tablekit.WritePut || w.Kind == tablekit.WriteDelete) && fastCondition(w)
}

// build returns the transaction's items and the writes' responses: every
// write read first when readAll, else only those that are not oneCall. A
// failed SPEC condition, a stale request, or a transaction past DynamoDB's
// limits is an *AtomicWriteError naming the write.
func (tx *atomicTx) build(ctx context.Context, readAll bool) ([]types.TransactWriteItem, []tablekit.WriteResponse, error) {
	b, reqs, ts := tx.b, tx.reqs, tx.ts
	native := aws.String(ts[0].ti.native)
	var keys []map[string]types.AttributeValue
	for i, w := range reqs {
		if (readAll || !oneCall(w) || feedDeletes(w, ts[i])) && !tx.isFresh(i) {
			keys = append(keys, keyAttrs(ts[i].shard, ts[i].sk))
		}
	}
	var got map[string]map[string]types.AttributeValue
	if len(keys) > 0 {
		var err error
		if got, err = b.batchGet(ctx, ts[0].ti.native, keys); err != nil {
			return nil, nil, b.tableErr(ctx, err, reqs[0].Meta.Name, "BatchGetItem")
		}
	}
	out := make([]tablekit.WriteResponse, len(reqs))
	items := make([]types.TransactWriteItem, 0, len(reqs)+1)
	size := 0
	tx.metaItem, tx.metaFor = -1, -1
	tx.stamps = tx.stamps[:0]
	for i, w := range reqs {
		t := ts[i]
		fail := func(err error) ([]types.TransactWriteItem, []tablekit.WriteResponse, error) {
			return nil, nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		if tx.isFresh(i) {
			item, res, err := freshItem(native, w, t, &size)
			if err != nil {
				return fail(err)
			}
			out[i].Update = res
			items = append(items, item)
			continue
		}
		if !readAll && oneCall(w) && !feedDeletes(w, t) {
			e := newExpr()
			e.common(w)
			if w.Kind == tablekit.WriteDelete {
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{
					TableName: native, Key: keyAttrs(t.shard, t.sk),
					ConditionExpression: e.condition(), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values(),
				}})
				continue
			}
			r := rowmodel.Put(w.Columns, w.Meta.Options, w.Now)
			r.Generation = w.Meta.Generation
			enc, err := encodeItem(w.Meta, w.Key, t.shard, t.sk, &r, writeStamp(t, w))
			if err != nil {
				return fail(err)
			}
			if size += enc.size; size > maxTransactBytes {
				return fail(transactTooBig())
			}
			items = append(items, types.TransactWriteItem{Put: &types.Put{
				TableName: native, Item: enc.item,
				ConditionExpression: e.condition(), ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values(),
			}})
			continue
		}
		item := got[string(t.sk)]
		var cur *rowmodel.Row
		if len(item) > 0 {
			r, err := decodeRow(item)
			if err != nil {
				return nil, nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "stored row %v", w.Key)
			}
			cur = &r
		}
		next, res, err := rowmodel.Apply(cur, w)
		if err != nil {
			return fail(err)
		}
		out[i].Update = res
		if !tx.confirmed && tx.metaFor < 0 && rowmodel.Reveals(w, cur, next) {
			tx.metaFor = i
		}
		cond, names, vals := revisionCond(item)
		switch {
		case next == nil && t.ti.feed:
			// Recorded even where nothing is stored (SPEC §15): the item
			// is stamped before the transaction, which deletes it on the
			// condition that the stamp is still there (feed.go).
			stamp := &types.AttributeValueMemberS{Value: deleteStamp(w)}
			tx.stamps = append(tx.stamps, stampInput(native, keyAttrs(t.shard, t.sk), stamp, cond, names, vals))
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{
				TableName: native, Key: keyAttrs(t.shard, t.sk),
				ConditionExpression:       aws.String("#w = :w"),
				ExpressionAttributeNames:  map[string]string{"#w": attrWrite},
				ExpressionAttributeValues: map[string]types.AttributeValue{":w": stamp},
			}})
		case next == nil && len(item) == 0:
			items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: native, Key: keyAttrs(t.shard, t.sk),
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			}})
		case next == nil:
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{
				TableName: native, Key: keyAttrs(t.shard, t.sk),
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			}})
		default:
			enc, err := encodeItem(w.Meta, w.Key, t.shard, t.sk, next, writeStamp(t, w))
			if err != nil {
				return fail(err)
			}
			if size += enc.size; size > maxTransactBytes {
				return fail(transactTooBig())
			}
			items = append(items, types.TransactWriteItem{Put: &types.Put{
				TableName: native, Item: enc.item,
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			}})
		}
	}
	if tx.metaFor >= 0 {
		meta := reqs[tx.metaFor].Meta
		if len(items) >= maxTransactItems {
			// No room for the check in the transaction: read it before.
			if err := b.confirmGeneration(ctx, meta); err != nil {
				return nil, nil, &tablekit.AtomicWriteError{Index: tx.metaFor, Err: err}
			}
			tx.confirmed = true
		} else {
			names := map[string]string{}
			vals := map[string]types.AttributeValue{}
			cond := incarnationCond(meta.Incarnation, names, vals) + " AND " + generationCond(meta.Generation, names, vals)
			if len(vals) == 0 {
				vals = nil
			}
			tx.metaItem = len(items)
			items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: aws.String(b.meta), Key: map[string]types.AttributeValue{metaName: str(meta.Name)},
				ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
			}})
		}
	}
	return items, out, nil
}

// canceled looks at why DynamoDB canceled the transaction: nil for a lost
// race or a one-call condition (the caller reads everything and sends it
// again), else the error to return.
func (tx *atomicTx) canceled(ctx context.Context, tce *types.TransactionCanceledException) error {
	table := tx.reqs[0].Meta.Name
	race := len(tce.CancellationReasons) == 0
	for k, r := range tce.CancellationReasons {
		switch code := aws.ToString(r.Code); code {
		case "", "None":
		case "ConditionalCheckFailed":
			if tx.isFresh(k) {
				// The key the counter assigned is a row (written with an
				// explicit value): take a value past it, and send again.
				if err := tx.repick(ctx, k); err != nil {
					return err
				}
				race = true
				continue
			}
			if k == tx.metaItem {
				// The table changed since the request's metadata was read.
				if err := tx.b.confirmGeneration(ctx, tx.reqs[tx.metaFor].Meta); err != nil {
					return &tablekit.AtomicWriteError{Index: tx.metaFor, Err: err}
				}
			}
			race = true
		case "TransactionConflict":
			race = true
		case "ValidationError", "ItemCollectionSizeLimitExceeded":
			err := tablekit.WrapError(tablekit.ErrInvalidArgument, tce, "TransactWriteItems refused the write (%s): %s", code, aws.ToString(r.Message))
			if k < len(tx.reqs) {
				return &tablekit.AtomicWriteError{Index: k, Err: inTable(err, table)}
			}
			return inTable(err, table)
		case "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
			return inTable(tablekit.WrapError(tablekit.ErrThrottled, tce, "TransactWriteItems canceled (%s)", code), table)
		default:
			return inTable(tablekit.WrapError(tablekit.ErrUnavailable, tce, "TransactWriteItems canceled (%s)", code), table)
		}
	}
	if !race {
		return inTable(tablekit.WrapError(tablekit.ErrUnavailable, tce, "TransactWriteItems canceled without a reason"), table)
	}
	return nil
}

// revisionCond is the condition that an item is still the one read (as
// occ's): its revision and one-call update count, or its absence.
func revisionCond(item map[string]types.AttributeValue) (string, map[string]string, map[string]types.AttributeValue) {
	names := map[string]string{}
	vals := map[string]types.AttributeValue{}
	var cond string
	switch rev := itemRevision(item); {
	case len(item) == 0:
		cond = "attribute_not_exists(#k)"
		names["#k"] = attrKey
	case rev == nil:
		cond = "attribute_not_exists(#r)"
		names["#r"] = attrRevision
	default:
		cond = "#r = :r AND "
		names["#r"], names["#u"] = attrRevision, attrUpdates
		vals[":r"] = rev
		if u, ok := item[attrUpdates]; ok {
			cond += "#u = :u"
			vals[":u"] = u
		} else {
			cond += "attribute_not_exists(#u)"
		}
	}
	if len(vals) == 0 {
		vals = nil
	}
	return cond, names, vals
}

func transactTooBig() error {
	return tablekit.Errorf(tablekit.ErrInvalidArgument, "the items of the atomic write reach DynamoDB's transaction limit of %d bytes at this write", maxTransactBytes)
}

// repick gives write i, a new row whose assigned key turned out to be a
// row already, a value past that row (pastTaken), or fails after
// maxAutoAttempts values.
func (tx *atomicTx) repick(ctx context.Context, i int) error {
	if tx.picked == nil {
		tx.picked = make([]int, len(tx.reqs))
	}
	tx.picked[i]++
	w := tx.reqs[i]
	if tx.picked[i] >= maxAutoAttempts {
		return &tablekit.AtomicWriteError{Index: i, Err: inTable(driver.AutoIncrementTaken(w.Key, tx.picked[i]).(*tablekit.Error), w.Meta.Name)}
	}
	ai := autoColumn(w.Meta)
	v, err := tx.b.pastTaken(ctx, w.Meta, tx.ts[i], w.Key, ai)
	if err != nil {
		return err
	}
	c := *w
	c.Key = w.Key.Clone()
	c.Key[ai].Value = tablekit.Integer(v)
	sk, err := sortKey(c.Key)
	if err != nil {
		return &tablekit.AtomicWriteError{Index: i, Err: err}
	}
	tx.reqs[i], tx.ts[i].sk = &c, sk
	return nil
}

// isFresh reports whether write i is a new row whose key the counter
// assigned.
func (tx *atomicTx) isFresh(i int) bool { return tx.fresh != nil && i < len(tx.fresh) && tx.fresh[i] }

// freshItem is the transaction item of a new row whose key the counter
// assigned, and the write's result: its row computed on an absent row, put
// only if no item has its key (or, for an update that leaves nothing, a
// check of that). *size is the transaction's size so far, grown by the item.
func freshItem(native *string, w *tablekit.WriteRequest, t target, size *int) (types.TransactWriteItem, *tablekit.UpdateResult, error) {
	var item types.TransactWriteItem
	next, res, err := rowmodel.Apply(nil, w)
	if err != nil {
		return item, nil, err
	}
	if res == nil {
		res = &tablekit.UpdateResult{}
	}
	res.Key = w.Key
	cond, names := newRowCond()
	if next == nil {
		item.ConditionCheck = &types.ConditionCheck{
			TableName: native, Key: keyAttrs(t.shard, t.sk), ConditionExpression: cond, ExpressionAttributeNames: names,
		}
		return item, res, nil
	}
	enc, err := encodeItem(w.Meta, w.Key, t.shard, t.sk, next, writeStamp(t, w))
	if err != nil {
		return item, nil, err
	}
	if *size += enc.size; *size > maxTransactBytes {
		return item, nil, transactTooBig()
	}
	item.Put = &types.Put{TableName: native, Item: enc.item, ConditionExpression: cond, ExpressionAttributeNames: names}
	return item, res, nil
}
