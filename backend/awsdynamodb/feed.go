package awsdynamodb

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// The change feed (SPEC §15) is DynamoDB Streams with NEW_AND_OLD_IMAGES
// on the table's DynamoDB table. A stream record holds the item before
// and after the write; the feed decodes both with the item layout
// (item.go, cells.go) and turns them into a tablekit.ChangeRecord:
//
//   - Every item a writer stores carries .w, the write's kind and Now
//     ("P", "U" or "D", then milliseconds), which give the record's Kind
//     and CommitTime: always, not only while the writer knows the feed is
//     on, so that a writer whose metadata predates the feed's enabling
//     writes the same records. A put's record is the new
//     item's cells; an update's is the difference of the two items' cells
//     (per column, in name order: the versions put, then the versions
//     deleted, or DeleteColumn when none is left). Applying it to the row
//     before the write gives the row after it; it may differ from the
//     update as sent where that changed nothing (a put of the same value
//     at the same version) or where MaxVersions dropped a version.
//   - A delete cannot carry an attribute, so a writer deletes in two
//     calls while the feed is on: it first stamps the item (creating an
//     empty one where there is no row, which reads as no row) with .w
//     holding the kind, Now and a random part, then deletes it on the
//     condition that the stamp is still there. The stamp's own record is
//     skipped; the deletion's old image carries the kind and the time.
//   - A deletion by a backend that has not read the table's metadata
//     since the feed was enabled (a Client reads it again after its
//     metadata cache TTL, a minute by default) is one DeleteItem, which
//     carries no attribute: its record is a Delete at the stream record's
//     approximate creation time, not the writer's clock. (Deleting in two
//     calls always would double every deletion's cost on tables with no
//     feed.) Records of items written before the stamp was always set
//     (no .w) are updates holding the difference, at that time too.
//   - Items DynamoDB's TTL removes are not recorded (SPEC §15), nor the
//     auto-increment counters (negative .s). Any other record that does
//     not decode as a row of the table fails the read with
//     ErrUnavailable naming the shard and the record's sequence number:
//     a record is never dropped silently.
//   - An update that changed no cell would be an UpdateRow of no change,
//     which cannot be applied: its record puts the cells the row has (a
//     key-only row: a put of no column; no row: a deletion).
//
// Shards are the streams' shards, named "<stream label>/<shard id>";
// enabling the feed again after disabling it makes a new stream, whose
// first shards have the last shards of the previous stream as parents. A
// checkpoint is the shard name and a sequence number. DynamoDB keeps a
// stream's records 24 hours, a fixed retention: EnableChangeFeed refuses
// any other with ErrInvalidArgument.

// attrWrite is the item attribute holding the write's kind and time.
const attrWrite = ".w"

// streamRetention is DynamoDB Streams' fixed retention.
const streamRetention = 24 * time.Hour

// metaFeed is the metadata item's attribute recording that the table's
// feed is on.
const metaFeed = "feed"

// kindLetter is a write kind's letter in .w.
func kindLetter(k tablekit.WriteKind) byte {
	switch k {
	case tablekit.WritePut:
		return 'P'
	case tablekit.WriteDelete:
		return 'D'
	}
	return 'U'
}

// writeStamp is the .w of an item w writes: every item carries it,
// whether or not the writer knows the table's feed is on (a writer's
// metadata may predate the feed's enabling), so that every put's and
// update's record has its kind and commit time.
func writeStamp(_ target, w *tablekit.WriteRequest) string {
	return string(kindLetter(w.Kind)) + strconv.FormatInt(w.Now, 10)
}

// deleteStamp is the .w of an item about to be deleted by w: unique, so
// that the deletion can be conditioned on it.
func deleteStamp(w *tablekit.WriteRequest) string {
	return string(kindLetter(w.Kind)) + strconv.FormatInt(w.Now, 10) + " " + newRevision(0, false)
}

// parseStamp decodes a .w: the kind, the time in ms, and whether it is a
// delete stamp.
func parseStamp(s string) (kind tablekit.WriteKind, now int64, deleting, ok bool) {
	if len(s) < 2 {
		return 0, 0, false, false
	}
	switch s[0] {
	case 'P':
		kind = tablekit.WritePut
	case 'U':
		kind = tablekit.WriteUpdate
	case 'D':
		kind = tablekit.WriteDelete
	default:
		return 0, 0, false, false
	}
	num, rest, deleting := strings.Cut(s[1:], " ")
	now, err := strconv.ParseInt(num, 10, 64)
	if err != nil || (deleting && rest == "") {
		return 0, 0, false, false
	}
	return kind, now, deleting, true
}

// feedDelete deletes the item at t for w while the feed is on (see
// above): a stamp conditioned on cond (the item as read), then the
// deletion conditioned on the stamp. applied is false when either
// condition failed: the item changed, and the caller reads it again.
func (b *Backend) feedDelete(ctx context.Context, w *tablekit.WriteRequest, t target, cond string, names map[string]string, vals map[string]types.AttributeValue) (applied bool, err error) {
	stamp := &types.AttributeValueMemberS{Value: deleteStamp(w)}
	key := keyAttrs(t.shard, t.sk)
	_, err = b.client.UpdateItem(ctx, stampInput(aws.String(t.ti.native), key, stamp, cond, names, vals))
	if err == nil {
		_, err = b.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(t.ti.native), Key: key,
			ConditionExpression:       aws.String("#w = :w"),
			ExpressionAttributeNames:  map[string]string{"#w": attrWrite},
			ExpressionAttributeValues: map[string]types.AttributeValue{":w": stamp},
		})
	}
	switch {
	case err == nil:
		return true, nil
	case isCode(err, "ConditionalCheckFailedException"):
		return false, nil
	}
	return false, b.tableErr(ctx, err, w.Meta.Name, "deletion")
}

// stampInput is the UpdateItem that stamps the item at key before its
// deletion, on condition cond (with its names and values): it sets .w,
// and a revision when there is no item.
func stampInput(native *string, key map[string]types.AttributeValue, stamp types.AttributeValue, cond string, names map[string]string, vals map[string]types.AttributeValue) *dynamodb.UpdateItemInput {
	n := map[string]string{"#w": attrWrite, "#r": attrRevision}
	v := map[string]types.AttributeValue{":w": stamp, ":nr": &types.AttributeValueMemberS{Value: newRevision(0, false)}}
	for k, x := range names {
		n[k] = x
	}
	for k, x := range vals {
		v[k] = x
	}
	return &dynamodb.UpdateItemInput{
		TableName: native, Key: key,
		UpdateExpression:    aws.String("SET #w = :w, #r = if_not_exists(#r, :nr)"),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: n, ExpressionAttributeValues: v,
	}
}

// streamsClient returns the DynamoDB Streams client of a DynamoDB
// client: the same region, credentials, HTTP client, retryer and
// endpoint (an emulator serves both APIs on one endpoint).
func streamsClient(c *dynamodb.Client) *dynamodbstreams.Client {
	o := c.Options()
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region: o.Region, Credentials: o.Credentials, HTTPClient: o.HTTPClient,
		BaseEndpoint: o.BaseEndpoint, Retryer: o.Retryer, Logger: o.Logger,
		ClientLogMode: o.ClientLogMode, AppID: o.AppID,
	})
}

// feedUnavailable is the error of a feed call on a backend opened
// without streams.
func (b *Backend) feedUnavailable(ctx context.Context) error {
	if b.opts.noStreams {
		return tablekit.ErrSkip
	}
	return b.haveStreams(ctx)
}

// CreateTableWithFeed implements tablekit.FeedCreator: CreateTable with
// the metadata item's feed attribute set in its claim and the DynamoDB
// table created with a NEW_AND_OLD_IMAGES StreamSpecification, so the
// table has its feed from its first write. The retention is DynamoDB's, 24
// hours; a store without Streams answers as SetChangeFeed does.
func (b *Backend) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, req *tablekit.SetChangeFeedRequest) error {
	if err := b.feedUnavailable(ctx); err != nil {
		return err
	}
	if req.Retention != streamRetention {
		return inTable(tablekit.Errorf(tablekit.ErrInvalidArgument,
			"change feed retention %v: DynamoDB Streams keep records for a fixed 24h", req.Retention), meta.Name)
	}
	return b.createTable(ctx, meta, true)
}

// SetChangeFeed implements tablekit.ChangeFeeder: UpdateTable with a
// NEW_AND_OLD_IMAGES StreamSpecification (or StreamEnabled false), and
// the metadata item's feed attribute, which tells writers to stamp their
// items (set before the stream is enabled, cleared after it is disabled).
// The retention is DynamoDB's, 24 hours: any other is ErrInvalidArgument.
func (b *Backend) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	if err := b.feedUnavailable(ctx); err != nil {
		return nil, err
	}
	meta := req.Meta
	if req.Enabled && req.Retention != streamRetention {
		return nil, inTable(tablekit.Errorf(tablekit.ErrInvalidArgument,
			"change feed retention %v: DynamoDB Streams keep records for a fixed 24h", req.Retention), meta.Name)
	}
	ti, err := b.info(ctx, meta)
	if err != nil {
		return nil, err
	}
	if req.Enabled {
		if err := b.setFeedFlag(ctx, meta, ti, true); err != nil {
			return nil, err
		}
	}
	out, err := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(ti.native)})
	if err != nil {
		return nil, b.tableErr(ctx, err, meta.Name, "DescribeTable")
	}
	spec := out.Table.StreamSpecification
	on := spec != nil && aws.ToBool(spec.StreamEnabled)
	switch {
	case on && spec.StreamViewType != types.StreamViewTypeNewAndOldImages:
		return nil, inTable(tablekit.Errorf(tablekit.ErrInvalidArgument,
			"DynamoDB table %q has a stream of view type %s; the change feed needs NEW_AND_OLD_IMAGES", ti.native, spec.StreamViewType), meta.Name)
	case on != req.Enabled:
		s := &types.StreamSpecification{StreamEnabled: aws.Bool(req.Enabled)}
		if req.Enabled {
			s.StreamViewType = types.StreamViewTypeNewAndOldImages
		}
		if _, err := b.client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(ti.native), StreamSpecification: s}); err != nil {
			return nil, b.tableErr(ctx, err, meta.Name, "UpdateTable")
		}
		if err := b.waitTable(ctx, ti.native, true); err != nil {
			return nil, err
		}
	}
	if !req.Enabled {
		if err := b.setFeedFlag(ctx, meta, ti, false); err != nil {
			return nil, err
		}
	}
	return b.DescribeChangeFeed(ctx, meta)
}

// setFeedFlag records in the metadata item whether the feed is on, while
// the item holds meta's incarnation, and in the backend's cache.
func (b *Backend) setFeedFlag(ctx context.Context, meta *tablekit.TableMeta, ti *tableInfo, on bool) error {
	names := map[string]string{"#f": metaFeed, "#n": metaName}
	vals := map[string]types.AttributeValue{":f": &types.AttributeValueMemberBOOL{Value: on}}
	cond := "attribute_exists(#n) AND " + incarnationCond(meta.Incarnation, names, vals)
	_, err := b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(b.meta),
		Key:                       map[string]types.AttributeValue{metaName: str(meta.Name)},
		UpdateExpression:          aws.String("SET #f = :f"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
	})
	if isCode(err, "ConditionalCheckFailedException") {
		return inTable(tablekit.Errorf(tablekit.ErrTableNotFound, "the table was deleted and created again since its metadata was read"), meta.Name)
	}
	if err != nil {
		return mapErr(ctx, err, "UpdateItem on metadata table %q", b.meta)
	}
	nti := *ti
	nti.feed = on
	b.remember(meta.Name, &nti)
	return nil
}

// feedStream is one of a table's streams.
type feedStream struct {
	arn, label string
	desc       *stypes.StreamDescription
}

// streams lists the table's streams, oldest first, described.
func (b *Backend) streams(ctx context.Context, meta *tablekit.TableMeta, ti *tableInfo) ([]feedStream, error) {
	var out []feedStream
	in := &dynamodbstreams.ListStreamsInput{TableName: aws.String(ti.native)}
	for {
		page, err := b.streamsC.ListStreams(ctx, in)
		if err != nil {
			return nil, b.tableErr(ctx, err, meta.Name, "ListStreams")
		}
		for _, s := range page.Streams {
			if aws.ToString(s.TableName) == ti.native {
				out = append(out, feedStream{arn: aws.ToString(s.StreamArn), label: aws.ToString(s.StreamLabel)})
			}
		}
		if page.LastEvaluatedStreamArn == nil {
			break
		}
		in.ExclusiveStartStreamArn = page.LastEvaluatedStreamArn
	}
	slices.SortFunc(out, func(a, b feedStream) int { return strings.Compare(a.label, b.label) })
	for i := range out {
		din := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(out[i].arn)}
		for {
			d, err := b.streamsC.DescribeStream(ctx, din)
			if err != nil {
				return nil, b.tableErr(ctx, err, meta.Name, "DescribeStream")
			}
			if out[i].desc == nil {
				out[i].desc = d.StreamDescription
			} else {
				out[i].desc.Shards = append(out[i].desc.Shards, d.StreamDescription.Shards...)
			}
			if d.StreamDescription.LastEvaluatedShardId == nil {
				break
			}
			din.ExclusiveStartShardId = d.StreamDescription.LastEvaluatedShardId
		}
	}
	return out, nil
}

// DescribeChangeFeed implements tablekit.ChangeFeeder: the table's
// streams' shards, oldest stream first; a shard of a disabled stream, or
// with an ending sequence number, is ended.
func (b *Backend) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	if err := b.feedUnavailable(ctx); err != nil {
		return nil, err
	}
	ti, err := b.info(ctx, meta)
	if err != nil {
		return nil, err
	}
	streams, err := b.streams(ctx, meta, ti)
	if err != nil {
		return nil, err
	}
	st := &tablekit.ChangeFeedStatus{Retention: streamRetention}
	var leaves []string // the previous stream's shards without children
	for _, s := range streams {
		status := s.desc.StreamStatus
		closed := status == stypes.StreamStatusDisabled || status == stypes.StreamStatusDisabling
		if !closed {
			st.Enabled = true
		}
		ids := map[string]bool{}
		hasChild := map[string]bool{}
		for _, sh := range s.desc.Shards {
			ids[aws.ToString(sh.ShardId)] = true
		}
		for _, sh := range s.desc.Shards {
			id := s.label + "/" + aws.ToString(sh.ShardId)
			shard := tablekit.Shard{ID: id, Ended: closed || (sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil)}
			if p := aws.ToString(sh.ParentShardId); p != "" && ids[p] {
				shard.Parents = []string{s.label + "/" + p}
				hasChild[p] = true
			} else {
				shard.Parents = slices.Clone(leaves)
			}
			st.Shards = append(st.Shards, shard)
		}
		leaves = leaves[:0:0]
		for _, sh := range s.desc.Shards {
			if id := aws.ToString(sh.ShardId); !hasChild[id] {
				leaves = append(leaves, s.label+"/"+id)
			}
		}
	}
	return st, nil
}

// streamArn returns the ARN of the table's stream labelled label.
func (b *Backend) streamArn(ctx context.Context, meta *tablekit.TableMeta, ti *tableInfo, label string) (string, error) {
	b.mu.Lock()
	arn := b.tableArns[ti.native]
	b.mu.Unlock()
	if arn == "" {
		out, err := b.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(ti.native)})
		if err != nil {
			return "", b.tableErr(ctx, err, meta.Name, "DescribeTable")
		}
		arn = aws.ToString(out.Table.TableArn)
		b.mu.Lock()
		b.tableArns[ti.native] = arn
		b.mu.Unlock()
	}
	return arn + "/stream/" + label, nil
}

// maxEmptyPolls bounds the GetRecords calls one ReadShard makes with a
// new iterator that return no record: an open shard may answer an empty
// page before later records. A read that goes on with a kept iterator
// makes one (feediter.go).
const maxEmptyPolls = 3

// ReadShard implements tablekit.ChangeFeeder: GetRecords with the
// iterator the last read of the shard ended with when it continues from
// req.From (else GetShardIterator after the checkpoint's sequence number,
// or at the shard's trim horizon), until a page holds a record of the
// table, the shard ends, or the empty pages allowed were read; each call
// within DynamoDB Streams' 5 per second per shard (feediter.go).
func (b *Backend) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	if err := b.feedUnavailable(ctx); err != nil {
		return nil, err
	}
	meta := req.Meta
	label, shardID, ok := strings.Cut(req.Shard, "/")
	if !ok || label == "" || shardID == "" {
		return nil, inTable(tablekit.Errorf(tablekit.ErrInvalidArgument, "%.64q is not a shard of the change feed", req.Shard), meta.Name)
	}
	var seq string
	if req.From != "" {
		s, ok := strings.CutPrefix(string(req.From), req.Shard+"/")
		if !ok || s == "" || strings.Trim(s, "0123456789") != "" {
			return nil, inTable(tablekit.Errorf(tablekit.ErrInvalidArgument, "checkpoint %.64q is not one of shard %q", req.From, req.Shard), meta.Name)
		}
		seq = s
	}
	ti, err := b.info(ctx, meta)
	if err != nil {
		return nil, err
	}
	arn, err := b.streamArn(ctx, meta, ti, label)
	if err != nil {
		return nil, err
	}
	pollKey := ti.native + "\x00" + req.Shard
	newIter := func() (*string, time.Time, error) {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shardID), ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon}
		if seq != "" {
			in.ShardIteratorType, in.SequenceNumber = stypes.ShardIteratorTypeAfterSequenceNumber, aws.String(seq)
		}
		at := time.Now()
		it, err := b.streamsC.GetShardIterator(ctx, in)
		if err != nil {
			return nil, at, b.streamErr(ctx, err, meta, req.Shard)
		}
		return it.ShardIterator, at, nil
	}
	iterAt := time.Now()
	iter := b.polls.take(pollKey, req.From, iterAt)
	kept := iter != nil
	allowed := 1
	if !kept {
		allowed = maxEmptyPolls
		if iter, iterAt, err = newIter(); err != nil {
			return nil, err
		}
	}
	out := &tablekit.ReadShardResponse{Next: req.From}
	limit := int32(min(max(req.Limit, 1), tablekit.MaxFeedPage))
	for empty := 0; iter != nil && len(out.Records) == 0 && empty < allowed; {
		if err := b.polls.wait(ctx, pollKey); err != nil {
			return nil, err
		}
		at := time.Now()
		page, err := b.streamsC.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(limit)})
		if kept && isCode(err, "ExpiredIteratorException") {
			// A kept iterator expired: a new one after the checkpoint
			// (nothing was read with this one yet).
			kept, allowed = false, maxEmptyPolls
			if iter, iterAt, err = newIter(); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, b.streamErr(ctx, err, meta, req.Shard)
		}
		kept = false // the next page's iterator is this read's own
		if len(page.Records) == 0 {
			empty++
		}
		for _, r := range page.Records {
			if r.Dynamodb == nil {
				continue
			}
			cp := tablekit.Checkpoint(req.Shard + "/" + aws.ToString(r.Dynamodb.SequenceNumber))
			out.Next = cp
			rec, keep, err := decodeStreamRecord(meta, r)
			if err != nil {
				return nil, inTable(tablekit.WrapError(tablekit.ErrUnavailable, err, "change feed shard %q: record %s", req.Shard, aws.ToString(r.Dynamodb.SequenceNumber)), meta.Name)
			}
			if keep {
				rec.Shard, rec.Checkpoint = req.Shard, cp
				out.Records = append(out.Records, rec)
			}
		}
		iter, iterAt = page.NextShardIterator, at
	}
	out.Ended = iter == nil
	b.polls.keep(pollKey, out.Next, iter, iterAt, out.Ended)
	return out, nil
}

// streamErr maps an error of a DynamoDB Streams call: records past the
// retention, or a stream or shard no longer there, are ErrTrimmed.
func (b *Backend) streamErr(ctx context.Context, err error, meta *tablekit.TableMeta, shard string) error {
	if isCode(err, "TrimmedDataAccessException", "ResourceNotFoundException") {
		return inTable(tablekit.WrapError(tablekit.ErrInvalidArgument, errors.Join(tablekit.ErrTrimmed, err), "change feed shard %q", shard), meta.Name)
	}
	return mapErr(ctx, err, "DynamoDB Streams, shard %q", shard)
}

// decodeStreamRecord turns a stream record into a ChangeRecord; keep is
// false for a record the feed leaves out (see above).
func decodeStreamRecord(meta *tablekit.TableMeta, r stypes.Record) (rec tablekit.ChangeRecord, keep bool, err error) {
	if id := r.UserIdentity; id != nil && aws.ToString(id.Type) == "Service" && aws.ToString(id.PrincipalId) == "dynamodb.amazonaws.com" {
		return rec, false, nil // removed by DynamoDB's TTL
	}
	sr := r.Dynamodb
	key, twice, skip, err := streamKey(meta, sr.Keys)
	if skip || err != nil {
		return rec, false, err
	}
	oldItem, newItem := fromStream(sr.OldImage, twice), fromStream(sr.NewImage, twice)
	rec.Key = key
	rec.Kind = tablekit.WriteUpdate
	if sr.ApproximateCreationDateTime != nil {
		rec.CommitTime = sr.ApproximateCreationDateTime.UTC()
	}
	stampOf := func(item map[string]types.AttributeValue) (tablekit.WriteKind, int64, bool, bool) {
		s, ok := item[attrWrite].(*types.AttributeValueMemberS)
		if !ok {
			return 0, 0, false, false
		}
		return parseStamp(s.Value)
	}
	var oldRow, newRow rowmodel.Row
	if len(oldItem) > 0 {
		if oldRow, err = decodeRow(oldItem); err != nil {
			return rec, false, err
		}
	}
	if r.EventName == stypes.OperationTypeRemove || len(newItem) == 0 {
		rec.Kind = tablekit.WriteDelete
		if kind, now, deleting, ok := stampOf(oldItem); ok && deleting {
			rec.Kind, rec.CommitTime = kind, time.UnixMilli(now).UTC()
		}
	} else {
		if newRow, err = decodeRow(newItem); err != nil {
			return rec, false, err
		}
		if kind, now, deleting, ok := stampOf(newItem); ok {
			if deleting {
				return rec, false, nil // the stamp before a deletion
			}
			rec.Kind, rec.CommitTime = kind, time.UnixMilli(now).UTC()
		}
	}
	switch rec.Kind {
	case tablekit.WritePut:
		rec.Changes = make([]tablekit.Change, len(newRow.Cells))
		for i, c := range newRow.Cells {
			rec.Changes[i] = tablekit.PutAt(c.Name, c.Value, c.Version)
		}
	case tablekit.WriteUpdate:
		rec.Changes = diffCells(oldRow.Cells, newRow.Cells)
		if len(rec.Changes) > 0 {
			break
		}
		// A write that changed no cell (an UpdateRow needs a change): the
		// put of the cells it left, a key-only row's put, or no row's
		// deletion, each applying what it left.
		switch {
		case len(newRow.Cells) > 0:
			rec.Changes = make([]tablekit.Change, len(newRow.Cells))
			for i, c := range newRow.Cells {
				rec.Changes[i] = tablekit.PutAt(c.Name, c.Value, c.Version)
			}
		case newRow.Marker:
			rec.Kind = tablekit.WritePut
		default:
			rec.Kind = tablekit.WriteDelete
		}
	}
	return rec, true, nil
}

// diffCells returns the changes that turn a row's cells old into new
// (both in stored order): per column in name order, the cells put, then
// the versions deleted, or DeleteColumn when the column is gone.
func diffCells(old, new []tablekit.Column) []tablekit.Change {
	var out []tablekit.Change
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		var name string
		switch {
		case i == len(old):
			name = new[j].Name
		case j == len(new):
			name = old[i].Name
		default:
			name = min(old[i].Name, new[j].Name)
		}
		oi, nj := i, j
		for i < len(old) && old[i].Name == name {
			i++
		}
		for j < len(new) && new[j].Name == name {
			j++
		}
		o, n := old[oi:i], new[nj:j]
		for _, c := range n {
			k := slices.IndexFunc(o, func(x tablekit.Column) bool { return x.Version == c.Version })
			if k < 0 || !o[k].Value.Equal(c.Value) {
				out = append(out, tablekit.PutAt(name, c.Value, c.Version))
			}
		}
		if len(n) == 0 {
			out = append(out, tablekit.DeleteColumn(name))
			continue
		}
		for _, c := range o {
			if !slices.ContainsFunc(n, func(x tablekit.Column) bool { return x.Version == c.Version }) {
				out = append(out, tablekit.DeleteVersion(name, c.Version))
			}
		}
	}
	return out
}

// streamKey decodes the key of a stream record's item. skip is true for
// an auto-increment counter item (a negative .s: autoinc.go), which is
// no row. Every other item of the table is a row: a key that does not
// decode is an error, never a record left out (SPEC §15: a reader never
// misses a record).
//
// twice is true when the record's Binary values arrive base64-encoded a
// second time (moto 5.2.1 sends the base64 text it stores: see
// internal/testkit/mototest). Telling the two apart is unambiguous: an
// encoded key starts with a String or Binary column, which holds a 0x00
// byte, or with an Integer column, whose first byte is '=' or '-'; base64
// text has no 0x00, never starts with '=', and has no '-'. So a sort key
// that decodes as is was sent once, and one that decodes only after
// base64 decoding was sent twice, as were all the record's Binary values.
func streamKey(meta *tablekit.TableMeta, keys map[string]stypes.AttributeValue) (key tablekit.PrimaryKey, twice, skip bool, err error) {
	sn, ok1 := keys[attrShard].(*stypes.AttributeValueMemberN)
	kb, ok2 := keys[attrKey].(*stypes.AttributeValueMemberB)
	if !ok1 || !ok2 {
		return nil, false, false, fmt.Errorf("%w: the item's key %s is not tablekit's (.s Number, .k Binary)", errCorrupt, describeKeys(keys))
	}
	if shard, err := strconv.Atoi(sn.Value); err == nil && shard < 0 {
		return nil, false, true, nil // an auto-increment counter
	}
	key, err = codec.DecodeKey(meta.Key, kb.Value)
	if err == nil {
		return key, false, false, nil
	}
	if raw, err2 := base64.StdEncoding.DecodeString(string(kb.Value)); err2 == nil {
		if k, err2 := codec.DecodeKey(meta.Key, raw); err2 == nil {
			return k, true, false, nil
		}
	}
	return nil, false, false, fmt.Errorf("%w: sort key %.64q (shard %s) is not a key of the table's schema: %w", errCorrupt, kb.Value, sn.Value, err)
}

// describeKeys names a stream record's key attributes and their types.
func describeKeys(keys map[string]stypes.AttributeValue) string {
	names := make([]string, 0, len(keys))
	for k, v := range keys {
		names = append(names, fmt.Sprintf("%q:%T", k, v))
	}
	slices.Sort(names)
	return "{" + strings.Join(names, " ") + "}"
}

// fromStream converts a DynamoDB Streams item to the DynamoDB SDK's type;
// twice: its Binary values are base64 text to decode (see streamKey).
func fromStream(item map[string]stypes.AttributeValue, twice bool) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = fromStreamValue(v, twice)
	}
	return out
}

func fromStreamValue(v stypes.AttributeValue, twice bool) types.AttributeValue {
	switch v := v.(type) {
	case *stypes.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *stypes.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *stypes.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: unBase64(v.Value, twice)}
	case *stypes.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *stypes.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *stypes.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: v.Value}
	case *stypes.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: v.Value}
	case *stypes.AttributeValueMemberBS:
		bs := make([][]byte, len(v.Value))
		for i, b := range v.Value {
			bs[i] = unBase64(b, twice)
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case *stypes.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, x := range v.Value {
			l[i] = fromStreamValue(x, twice)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *stypes.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: fromStream(v.Value, twice)}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

// unBase64 returns b, or when twice the bytes its base64 text encodes
// (b itself if it is not base64: decodeRow then finds it malformed).
func unBase64(b []byte, twice bool) []byte {
	if !twice {
		return b
	}
	out, err := base64.StdEncoding.DecodeString(string(b))
	if err != nil {
		return b
	}
	return out
}
