package aliyuntablestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// The change feed (SPEC §15) through Tablestore Stream.
//
//   - Enabling and disabling is UpdateTable's StreamSpecification (the
//     retention is its expiration_time, in hours); enabling an enabled
//     feed sends the new expiration.
//   - A tablekit shard is one shard of one of the table's streams
//     (ListStream), named "STREAM/SHARD", its parents DescribeStream's
//     parent_id and parent_sibling_id. A shard is ended when another
//     shard names it as a parent, or when its stream is not the table's
//     enabled one. Should a table have several streams (enabled, disabled,
//     enabled again), the first shards of each stream are made children
//     of the last shards of the stream before it, so that a reader
//     following parents first keeps per-row order across them.
//   - A checkpoint is "K:ITERATOR": the K records after the position of a
//     shard iterator of GetStreamRecord were delivered. Tablestore's
//     iterators are positions in the shard, valid as long as the records
//     after them are retained (the service's own stream client stores
//     them as its checkpoints), and its records come in the same order
//     from a given iterator whatever the page size, so resuming re-reads
//     the iterator and skips K records; the last record of a page carries
//     "0:NEXT", the answer's next iterator. A checkpoint's length is the
//     iterator's plus a few bytes (about 100 on tsemu).
//   - A record's commit time is its sequence timestamp (microseconds);
//     its cells are GetStreamRecord's: puts with their version, deletes
//     of one version, deletes of every version. A shard read to the end
//     of an ended shard has no next iterator: ReadShard reports Ended.
//   - OTSTrimmedDataAccess, and OTSObjectNotExist of a shard's stream, are
//     tablekit.ErrTrimmed (in ErrInvalidArgument).

// maxCheckpoint bounds the checkpoints ReadShard accepts.
const maxCheckpoint = 4096

// SetChangeFeed implements tablekit.ChangeFeeder.
func (b *Backend) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	spec := &tablestore.StreamSpecification{EnableStream: req.Enabled}
	if req.Enabled {
		spec.ExpirationTime = int32(req.Retention / time.Hour)
	}
	sreq := &tablestore.UpdateTableRequest{TableName: req.Meta.Name, StreamSpec: spec}
	_, err := doCall(ctx, b, "/UpdateTable", sreq, false, b.c.UpdateTable)
	if err != nil {
		return nil, err
	}
	return b.DescribeChangeFeed(ctx, req.Meta)
}

// DescribeChangeFeed implements tablekit.ChangeFeeder: DescribeTable, then
// ListStream and DescribeStream of each stream (every page).
func (b *Backend) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	table := meta.Name
	dreq := &tablestore.DescribeTableRequest{TableName: table}
	desc, err := doCall(ctx, b, "/DescribeTable", dreq, false, b.c.DescribeTable)
	if err != nil {
		return nil, err
	}
	st := &tablekit.ChangeFeedStatus{}
	current := ""
	if d := desc.StreamDetails; d != nil && d.EnableStream {
		st.Enabled, st.Retention = true, time.Duration(d.ExpirationTime)*time.Hour
		if d.StreamId != nil {
			current = string(*d.StreamId)
		}
	}
	lreq := &tablestore.ListStreamRequest{TableName: &table}
	list, err := doCall(ctx, b, "/ListStream", lreq, false, b.c.ListStream)
	if err != nil {
		return nil, err
	}
	streams := slices.Clone(list.Streams)
	slices.SortStableFunc(streams, func(x, y tablestore.Stream) int { return cmp.Compare(x.CreationTime, y.CreationTime) })
	var prevLeaves []string
	for _, s := range streams {
		if s.Id == nil || *s.Id == "" || strings.Contains(string(*s.Id), "/") {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "table %q: ListStream answered a stream id tablekit cannot use (%v)", table, s.Id)
		}
		id := string(*s.Id)
		shards, hours, err := b.streamShards(ctx, table, s.Id)
		if err != nil {
			return nil, err
		}
		if !st.Enabled && st.Retention == 0 {
			st.Retention = time.Duration(hours) * time.Hour
		}
		isParent := map[string]bool{}
		for _, sh := range shards {
			if sh.FatherShard != nil {
				isParent[string(*sh.FatherShard)] = true
			}
			if sh.MotherShard != nil {
				isParent[string(*sh.MotherShard)] = true
			}
		}
		var leaves []string
		for _, sh := range shards {
			if sh.SelfShard == nil {
				return nil, tablekit.Errorf(tablekit.ErrUnavailable, "table %q: DescribeStream answered a shard without an id", table)
			}
			self := string(*sh.SelfShard)
			out := tablekit.Shard{ID: id + "/" + self, Ended: isParent[self] || !st.Enabled || id != current}
			for _, p := range []*tablestore.ShardId{sh.FatherShard, sh.MotherShard} {
				if p != nil {
					out.Parents = append(out.Parents, id+"/"+string(*p))
				}
			}
			if len(out.Parents) == 0 {
				out.Parents = slices.Clone(prevLeaves)
			}
			if !isParent[self] {
				leaves = append(leaves, out.ID)
			}
			st.Shards = append(st.Shards, out)
		}
		prevLeaves = leaves
	}
	return st, nil
}

// streamShards returns every shard of a stream, and its expiration.
func (b *Backend) streamShards(ctx context.Context, table string, id *tablestore.StreamId) ([]*tablestore.StreamShard, int32, error) {
	var (
		out   []*tablestore.StreamShard
		hours int32
		start *tablestore.ShardId
	)
	for range 10000 {
		req := &tablestore.DescribeStreamRequest{StreamId: id, InclusiveStartShardId: start}
		resp, err := doCall(ctx, b, "/DescribeStream", req, false, b.c.DescribeStream)
		if err != nil {
			return nil, 0, err
		}
		out, hours = append(out, resp.Shards...), resp.ExpirationTime
		if resp.NextShardId == nil {
			return out, hours, nil
		}
		if start != nil && *resp.NextShardId == *start {
			break
		}
		start = resp.NextShardId
	}
	return nil, 0, tablekit.Errorf(tablekit.ErrUnavailable, "table %q: DescribeStream of stream %q does not end", table, *id)
}

// feedPosition is a parsed checkpoint: skip records after iterator.
type feedPosition struct {
	skip     int
	iterator string
}

func (p feedPosition) checkpoint() tablekit.Checkpoint {
	return tablekit.Checkpoint(strconv.Itoa(p.skip) + ":" + p.iterator)
}

func parseCheckpoint(c tablekit.Checkpoint) (feedPosition, bool) {
	if len(c) > maxCheckpoint {
		return feedPosition{}, false
	}
	k, it, ok := strings.Cut(string(c), ":")
	n, err := strconv.Atoi(k)
	if !ok || err != nil || n < 0 || n > 1<<20 || it == "" || strconv.Itoa(n) != k {
		return feedPosition{}, false
	}
	for i := 0; i < len(it); i++ {
		if it[i] <= ' ' || it[i] > '~' {
			return feedPosition{}, false
		}
	}
	return feedPosition{skip: n, iterator: it}, true
}

// ReadShard implements tablekit.ChangeFeeder.
func (b *Backend) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	table := req.Meta.Name
	stream, shard, ok := strings.Cut(req.Shard, "/")
	if !ok || stream == "" || shard == "" {
		return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: no shard %.64q in the change feed", table, req.Shard)
	}
	var pos feedPosition
	if req.From == "" {
		sid, shid := tablestore.StreamId(stream), tablestore.ShardId(shard)
		ireq := &tablestore.GetShardIteratorRequest{StreamId: &sid, ShardId: &shid}
		resp, err := doCall(ctx, b, "/GetShardIterator", ireq, false, b.c.GetShardIterator)
		if err != nil {
			return nil, feedError(err, table, req.Shard)
		}
		if resp.ShardIterator == nil || *resp.ShardIterator == "" {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "table %q: GetShardIterator of shard %q answered no iterator", table, req.Shard)
		}
		pos.iterator = string(*resp.ShardIterator)
	} else if pos, ok = parseCheckpoint(req.From); !ok {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: checkpoint %.64q is not one of shard %.64q", table, req.From, req.Shard)
	}
	limit := min(max(req.Limit, 1), tablekit.MaxFeedPage)
	for {
		it := tablestore.ShardIterator(pos.iterator)
		n := int32(min(pos.skip+limit, tablekit.MaxFeedPage))
		greq := &tablestore.GetStreamRecordRequest{ShardIterator: &it, Limit: &n}
		resp, err := doCall(ctx, b, "/GetStreamRecord", greq, false, b.c.GetStreamRecord)
		if err != nil {
			return nil, feedError(err, table, req.Shard)
		}
		recs := resp.Records
		next := ""
		if resp.NextShardIterator != nil {
			next = string(*resp.NextShardIterator)
		}
		if len(recs) <= pos.skip {
			switch {
			case next == "": // the end of an ended shard
				return &tablekit.ReadShardResponse{Next: pos.checkpoint(), Ended: true}, nil
			case len(recs) == 0: // caught up: no record after the iterator yet
				return &tablekit.ReadShardResponse{Next: feedPosition{skip: pos.skip, iterator: next}.checkpoint()}, nil
			}
			// Records delivered already: skip them, read on (each turn
			// skips at least one).
			pos = feedPosition{skip: pos.skip - len(recs), iterator: next}
			continue
		}
		out := &tablekit.ReadShardResponse{Records: make([]tablekit.ChangeRecord, 0, len(recs)-pos.skip), Ended: next == ""}
		for j := pos.skip; j < len(recs); j++ {
			r, err := changeRecord(recs[j], table)
			if err != nil {
				return nil, err
			}
			r.Shard = req.Shard
			r.Checkpoint = feedPosition{skip: j + 1, iterator: pos.iterator}.checkpoint()
			if j == len(recs)-1 && next != "" {
				r.Checkpoint = feedPosition{iterator: next}.checkpoint()
			}
			out.Records = append(out.Records, r)
		}
		out.Next = out.Records[len(out.Records)-1].Checkpoint
		return out, nil
	}
}

// feedError maps OTSTrimmedDataAccess, and a stream that does not exist
// (OTSObjectNotExist), to ErrTrimmed.
func feedError(err error, table, shard string) error {
	var oe *tablestore.OtsError
	if errors.As(err, &oe) && (oe.Code == "OTSTrimmedDataAccess" || oe.Code == "OTSObjectNotExist") {
		// The shard's records, or its whole stream, are gone.
		return tablekit.WrapError(tablekit.ErrInvalidArgument, fmt.Errorf("%w: %w", tablekit.ErrTrimmed, oe), "table %q: shard %.64q", table, shard)
	}
	return err
}

// changeRecord converts a record the SDK decoded.
func changeRecord(sr *tablestore.StreamRecord, table string) (tablekit.ChangeRecord, error) {
	bad := func(what string) error {
		return tablekit.Errorf(tablekit.ErrUnavailable, "table %q: GetStreamRecord answered a record %s", table, what)
	}
	if sr == nil || sr.Info == nil {
		return tablekit.ChangeRecord{}, bad("without its sequence info")
	}
	key, err := keyOf(sr.PrimaryKey)
	if err != nil {
		return tablekit.ChangeRecord{}, err
	}
	r := tablekit.ChangeRecord{Key: key, CommitTime: time.UnixMicro(sr.Info.Timestamp).UTC()}
	kind, ok := tsproto.ActionTypes.FromSDK(sr.Type)
	if !ok {
		return tablekit.ChangeRecord{}, bad(fmt.Sprintf("of action type %d", sr.Type))
	}
	r.Kind = kind
	if kind == tablekit.WriteDelete {
		return r, nil
	}
	r.Changes = make([]tablekit.Change, 0, len(sr.Columns))
	for _, c := range sr.Columns {
		if c == nil || c.Name == nil {
			return tablekit.ChangeRecord{}, bad("with a cell without a name")
		}
		switch c.Type {
		case tablestore.RCT_Put:
			v, ok := valueOf(c.Value)
			if !ok || c.Timestamp == nil {
				return tablekit.ChangeRecord{}, bad(fmt.Sprintf("putting column %q without a value of a known type or a version", *c.Name))
			}
			r.Changes = append(r.Changes, tablekit.PutAt(*c.Name, v, *c.Timestamp))
		case tablestore.RCT_DeleteOneVersion:
			if c.Timestamp == nil {
				return tablekit.ChangeRecord{}, bad(fmt.Sprintf("deleting a version of column %q without the version", *c.Name))
			}
			r.Changes = append(r.Changes, tablekit.DeleteVersion(*c.Name, *c.Timestamp))
		case tablestore.RCT_DeleteAllVersions:
			r.Changes = append(r.Changes, tablekit.DeleteColumn(*c.Name))
		default:
			return tablekit.ChangeRecord{}, bad(fmt.Sprintf("with a cell of type %d", c.Type))
		}
	}
	return r, nil
}
