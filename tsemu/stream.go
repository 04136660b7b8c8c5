package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// Tablestore Stream (ListStream, DescribeStream, GetShardIterator,
// GetStreamRecord and the stream_spec of CreateTable and UpdateTable),
// served from the Backend's change feed (tablekit.ChangeFeeder, SPEC §15).
//
// A table has one stream, whose id is derived from the table's name and
// Incarnation, while its feed retains a shard; the stream's shards are the
// feed's (one per period the stream was enabled, each the child of the
// one before, as parent_id). A shard iterator is the stream id, the shard
// and the feed's opaque checkpoint, base64url-encoded, so it stays valid
// across a restart of the server over a durable Backend, for as long as
// its records are retained. Records are the feed's: PUT_ROW, UPDATE_ROW
// (puts with their version, deletes of one version, deletes of all
// versions; an increment is the put of its result) and DELETE_ROW, in
// PlainBuffer with the sequence extension, whose timestamp is the commit
// time in microseconds.
//
// Differences from the service: origin_record (the old values of the
// stream's columns_to_get) is never sent, as the feed keeps no old
// values (columns_to_get is kept and reported); GetShardIterator's
// timestamp and token are refused; a stream is always ACTIVE, never
// splits, and stays listed while a disabled stream's records are
// retained.

// Stream limits of the emulator.
const (
	MaxStreamExpiration  = 168  // hours (the service's range is 1 to 168)
	MaxStreamColumns     = 128  // columns_to_get of one stream
	DefaultStreamRecords = 1000 // GetStreamRecord's limit when not given, and its cap
	maxIteratorLen       = 2048 // bytes of an encoded shard iterator
	maxStreamPageBytes   = 4 << 20
)

// streamExtra is the stream state the Backend's feed does not keep.
type streamExtra struct {
	id      string   // the stream id, set when first enabled
	created int64    // microseconds, when first enabled
	enabled int64    // microseconds, when last enabled
	columns []string // columns_to_get
}

// savedStream is streamExtra in Options.MetaFile.
type savedStream struct {
	ID      string   `json:"id"`
	Created int64    `json:"created_us"`
	Enabled int64    `json:"enabled_us"`
	Columns []string `json:"columns_to_get,omitempty"`
}

func (x streamExtra) saved() *savedStream {
	if x.id == "" {
		return nil
	}
	return &savedStream{ID: x.id, Created: x.created, Enabled: x.enabled, Columns: x.columns}
}

func (x *savedStream) extra() streamExtra {
	if x == nil {
		return streamExtra{}
	}
	return streamExtra{id: x.ID, created: x.Created, enabled: x.Enabled, columns: x.Columns}
}

func errNoStream(id string) *otsError {
	return &otsError{status: 404, code: "OTSObjectNotExist", msg: fmt.Sprintf("Stream: '%.64s' does not exist.", id)}
}

func errTrimmed(msg string) *otsError {
	return &otsError{status: 400, code: "OTSTrimmedDataAccess", msg: msg}
}

// errNoFeed refuses a stream over a Backend without a change feed.
func (s *Server) errNoFeed() *otsError {
	return &otsError{status: 400, code: "OTSUnsupportOperation",
		msg: fmt.Sprintf("Stream is not supported: the emulator's backend (%T) has no change feed.", s.backend)}
}

// streamSpec is a checked StreamSpecification.
type streamSpec struct {
	enable    bool
	retention time.Duration
	columns   []string
}

// checkStreamSpec validates spec (nil: no change) before anything is
// written.
func (s *Server) checkStreamSpec(spec *otsprotocol.StreamSpecification) (*streamSpec, *otsError) {
	if spec == nil {
		return nil, nil
	}
	if spec.EnableStream == nil {
		return nil, errParse
	}
	out := &streamSpec{enable: spec.GetEnableStream()}
	if !out.enable {
		return out, nil
	}
	if _, ok := s.feeder(); !ok {
		return nil, s.errNoFeed()
	}
	h := spec.GetExpirationTime()
	if spec.ExpirationTime == nil || h < 1 || h > MaxStreamExpiration {
		return nil, paramErr("StreamSpecification: expiration_time must be from 1 to %d hours, got %d.", MaxStreamExpiration, h)
	}
	out.retention = time.Duration(h) * time.Hour
	if len(spec.ColumnsToGet) > MaxStreamColumns {
		return nil, paramErr("StreamSpecification: %d columns_to_get, more than %d.", len(spec.ColumnsToGet), MaxStreamColumns)
	}
	for _, c := range spec.ColumnsToGet {
		if oe := checkColumnName(c); oe != nil {
			return nil, oe
		}
	}
	out.columns = slices.Clone(spec.ColumnsToGet)
	return out, nil
}

// streamID is the id of table's stream: a UUID derived from its name and
// Incarnation.
func streamID(m *tablekit.TableMeta) string {
	h := sha1.Sum([]byte("stream\x00" + m.Name + "\x00" + m.Incarnation))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// applyStream enables or disables m's stream as spec says (nil: no
// change).
func (s *Server) applyStream(ctx context.Context, m *tablekit.TableMeta, spec *streamSpec) error {
	if spec == nil {
		return nil
	}
	if _, ok := s.feeder(); !ok {
		if spec.enable {
			return s.errNoFeed()
		}
		return nil // nothing to disable
	}
	prev, err := s.feedStatus(ctx, m)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	if err := s.setFeed(ctx, m, spec.enable, spec.retention, now); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ex, ok := s.extras[m.Name]
	if !ok {
		ex = &tableExtra{}
		s.extras[m.Name] = ex
	}
	if spec.enable {
		id := streamID(m)
		if ex.stream.id != id {
			ex.stream = streamExtra{id: id, created: now.UnixMicro()}
		}
		if !prev.Enabled || ex.stream.enabled == 0 {
			ex.stream.enabled = now.UnixMicro()
		}
		ex.stream.columns = spec.columns
	}
	return nil
}

// feedStatus is m's feed (a zero status over a Backend without one).
func (s *Server) feedStatus(ctx context.Context, m *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	if _, ok := s.feeder(); !ok {
		return &tablekit.ChangeFeedStatus{}, nil
	}
	st, err := s.client.Table(m.Name).ChangeFeed(ctx)
	return &st, err
}

// streamDetails is the StreamDetails of DescribeTable and UpdateTable.
func (s *Server) streamDetails(ctx context.Context, m *tablekit.TableMeta) (*otsprotocol.StreamDetails, error) {
	st, err := s.feedStatus(ctx, m)
	if err != nil {
		return nil, err
	}
	if !st.Enabled {
		return &otsprotocol.StreamDetails{EnableStream: proto.Bool(false), LastEnableTime: proto.Int64(0)}, nil
	}
	ex := s.extra(m.Name).stream
	return &otsprotocol.StreamDetails{
		EnableStream:   proto.Bool(true),
		StreamId:       proto.String(streamID(m)),
		ExpirationTime: proto.Int32(int32(st.Retention / time.Hour)),
		LastEnableTime: proto.Int64(ex.enabled),
		ColumnsToGet:   slices.Clone(ex.columns),
	}, nil
}

// streamOf returns the table of stream id, its meta and feed, or
// OTSObjectNotExist.
func (s *Server) streamOf(ctx context.Context, id string) (*tablekit.TableMeta, *tablekit.ChangeFeedStatus, error) {
	if len(id) != 36 {
		return nil, nil, errNoStream(id)
	}
	if _, ok := s.feeder(); !ok {
		return nil, nil, errNoStream(id)
	}
	check := func(name string) (*tablekit.TableMeta, *tablekit.ChangeFeedStatus, error) {
		m, err := s.client.DescribeTable(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		if streamID(&m) != id {
			return nil, nil, nil
		}
		st, err := s.feedStatus(ctx, &m)
		if err != nil || len(st.Shards) == 0 {
			return nil, nil, err
		}
		return &m, st, nil
	}
	var name string
	s.mu.Lock()
	for n, ex := range s.extras {
		if ex.stream.id == id {
			name = n
		}
	}
	s.mu.Unlock()
	if name != "" {
		m, st, err := check(name)
		if err != nil && !errors.Is(err, tablekit.ErrTableNotFound) {
			return nil, nil, err
		}
		if m != nil {
			return m, st, nil
		}
	}
	// Not in the extras (a restart without Options.MetaFile): look at
	// every table.
	names, err := s.client.ListTables(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range names {
		m, st, err := check(n)
		if err != nil && !errors.Is(err, tablekit.ErrTableNotFound) {
			return nil, nil, err
		}
		if m != nil {
			return m, st, nil
		}
	}
	return nil, nil, errNoStream(id)
}

func (s *Server) listStream(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.ListStreamRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	var names []string
	if req.TableName != nil {
		if oe := checkTableName(req.GetTableName()); oe != nil {
			return nil, oe
		}
		names = []string{req.GetTableName()}
	} else {
		var err error
		if names, err = s.client.ListTables(ctx); err != nil {
			return nil, err
		}
	}
	resp := &otsprotocol.ListStreamResponse{}
	for _, n := range names {
		m, err := s.client.DescribeTable(ctx, n)
		if err != nil {
			if req.TableName == nil && errors.Is(err, tablekit.ErrTableNotFound) {
				continue // deleted since listed
			}
			return nil, err
		}
		st, err := s.feedStatus(ctx, &m)
		if err != nil {
			return nil, err
		}
		if len(st.Shards) == 0 {
			continue
		}
		resp.Streams = append(resp.Streams, &otsprotocol.Stream{
			StreamId: proto.String(streamID(&m)), TableName: proto.String(m.Name),
			CreationTime: proto.Int64(s.extra(m.Name).stream.created),
		})
	}
	return resp, nil
}

func (s *Server) describeStream(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.DescribeStreamRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	if req.ShardLimit != nil && req.GetShardLimit() < 1 {
		return nil, paramErr("shard_limit must be positive, got %d.", req.GetShardLimit())
	}
	m, st, err := s.streamOf(ctx, req.GetStreamId())
	if err != nil {
		return nil, err
	}
	shards := st.Shards
	if req.InclusiveStartShardId != nil {
		i := slices.IndexFunc(shards, func(sh tablekit.Shard) bool { return sh.ID == req.GetInclusiveStartShardId() })
		if i < 0 {
			return nil, paramErr("Shard: '%.64s' is not a shard of stream '%s'.", req.GetInclusiveStartShardId(), req.GetStreamId())
		}
		shards = shards[i:]
	}
	resp := &otsprotocol.DescribeStreamResponse{
		StreamId:       proto.String(req.GetStreamId()),
		ExpirationTime: proto.Int32(int32(st.Retention / time.Hour)),
		TableName:      proto.String(m.Name),
		CreationTime:   proto.Int64(s.extra(m.Name).stream.created),
		StreamStatus:   otsprotocol.StreamStatus_STREAM_ACTIVE.Enum(),
	}
	if req.ShardLimit != nil && len(shards) > int(req.GetShardLimit()) {
		resp.NextShardId = proto.String(shards[req.GetShardLimit()].ID)
		shards = shards[:req.GetShardLimit()]
	}
	for _, sh := range shards {
		ws := &otsprotocol.StreamShard{ShardId: proto.String(sh.ID)}
		if len(sh.Parents) > 0 {
			ws.ParentId = proto.String(sh.Parents[0])
		}
		if len(sh.Parents) > 1 {
			ws.ParentSiblingId = proto.String(sh.Parents[1])
		}
		resp.Shards = append(resp.Shards, ws)
	}
	return resp, nil
}

// shardIterator is a decoded shard iterator.
type shardIterator struct {
	stream, shard string
	from          tablekit.Checkpoint
}

// encode returns the iterator: base64url of a version byte and the three
// fields, each with a uvarint length.
func (it shardIterator) encode() string {
	b := []byte{1}
	for _, f := range []string{it.stream, it.shard, string(it.from)} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

var errBadIterator = paramErr("Invalid shard iterator.")

// decodeIterator parses an iterator encode made, or fails with
// OTSParameterInvalid.
func decodeIterator(s string) (shardIterator, *otsError) {
	if len(s) == 0 || len(s) > maxIteratorLen {
		return shardIterator{}, errBadIterator
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || b[0] != 1 {
		return shardIterator{}, errBadIterator
	}
	b = b[1:]
	var f [3]string
	for i := range f {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return shardIterator{}, errBadIterator
		}
		f[i] = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	if len(b) != 0 || f[0] == "" || f[1] == "" {
		return shardIterator{}, errBadIterator
	}
	return shardIterator{stream: f[0], shard: f[1], from: tablekit.Checkpoint(f[2])}, nil
}

// checkpointAt is the position in shard just before its first record
// committed at or after us (µs, the unit of the records' timestamps):
// the shard is read from its start, a page at a time.
func (s *Server) checkpointAt(ctx context.Context, m *tablekit.TableMeta, shard string, us int64) (tablekit.Checkpoint, error) {
	var from tablekit.Checkpoint
	for {
		page, err := s.shardPage(ctx, m, shard, from, tablekit.MaxFeedPage)
		if errors.Is(err, tablekit.ErrTrimmed) {
			return "", errTrimmed(toOTS(err).msg)
		}
		if err != nil {
			return "", err
		}
		for _, r := range page.Records {
			if r.CommitTime.UnixMicro() >= us {
				return from, nil
			}
			from = r.Checkpoint
		}
		if page.Next != "" {
			from = page.Next
		}
		if page.Ended || len(page.Records) == 0 {
			return from, nil
		}
	}
}

func (s *Server) getShardIterator(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.GetShardIteratorRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	if req.Token != nil {
		return nil, unsupported("GetShardIterator with a token")
	}
	if req.Timestamp != nil && req.GetTimestamp() < 0 {
		return nil, paramErr("timestamp must not be negative, got %d.", req.GetTimestamp())
	}
	m, st, err := s.streamOf(ctx, req.GetStreamId())
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(st.Shards, func(sh tablekit.Shard) bool { return sh.ID == req.GetShardId() }) {
		return nil, errTrimmed(fmt.Sprintf("Shard: '%.64s' of stream '%s' does not exist or has expired.", req.GetShardId(), req.GetStreamId()))
	}
	var from tablekit.Checkpoint
	if req.Timestamp != nil {
		if from, err = s.checkpointAt(ctx, m, req.GetShardId(), req.GetTimestamp()); err != nil {
			return nil, err
		}
	}
	it := shardIterator{stream: req.GetStreamId(), shard: req.GetShardId(), from: from}.encode()
	if len(it) > maxIteratorLen {
		return nil, paramErr("Shard: '%.64s': its iterator would be longer than %d bytes.", req.GetShardId(), maxIteratorLen)
	}
	return &otsprotocol.GetShardIteratorResponse{ShardIterator: proto.String(it)}, nil
}

func (s *Server) getStreamRecord(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.GetStreamRecordRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	it, oe := decodeIterator(req.GetShardIterator())
	if oe != nil {
		return nil, oe
	}
	limit := DefaultStreamRecords
	if req.Limit != nil {
		if req.GetLimit() < 1 {
			return nil, paramErr("limit must be positive, got %d.", req.GetLimit())
		}
		limit = min(int(req.GetLimit()), DefaultStreamRecords)
	}
	m, _, err := s.streamOf(ctx, it.stream)
	if err != nil {
		return nil, err
	}
	if req.TableName != nil && req.GetTableName() != m.Name {
		return nil, paramErr("The shard iterator is of table '%s', not '%.64s'.", m.Name, req.GetTableName())
	}
	page, err := s.shardPageWait(ctx, m, it.shard, it.from, limit)
	if errors.Is(err, tablekit.ErrTrimmed) {
		return nil, errTrimmed(toOTS(err).msg)
	}
	if err != nil {
		return nil, err
	}
	// The records, up to maxStreamPageBytes (at least one).
	rows := make([]plainbuffer.Row, 0, len(page.Records))
	size := 0
	for i, r := range page.Records {
		row := streamRow(r, i)
		n := 4 + plainbuffer.RowSize(row)
		if i > 0 && size+n > maxStreamPageBytes {
			break
		}
		rows, size = append(rows, row), size+n
	}
	if oe := s.reserveResponse(ctx, 2*int64(size)); oe != nil {
		return nil, oe
	}
	resp := &otsprotocol.GetStreamRecordResponse{MayMoreRecord: proto.Bool(len(rows) < len(page.Records) || len(rows) == limit)}
	for i, row := range rows {
		resp.StreamRecords = append(resp.StreamRecords, &otsprotocol.GetStreamRecordResponse_StreamRecord{
			ActionType: actionType(page.Records[i].Kind).Enum(),
			Record:     plainbuffer.EncodeRows([]plainbuffer.Row{row}),
		})
	}
	next := page.Next
	if len(rows) < len(page.Records) {
		next = page.Records[len(rows)-1].Checkpoint
	}
	if next == "" {
		next = it.from
	}
	if !page.Ended || len(rows) < len(page.Records) {
		// An ended shard read to its end has no next iterator.
		resp.NextShardIterator = proto.String(shardIterator{stream: it.stream, shard: it.shard, from: next}.encode())
	}
	return resp, nil
}

// actionType is the Stream record kind of k; a kind tablekit does not
// define (never in a feed) reads as a delete.
func actionType(k tablekit.WriteKind) otsprotocol.ActionType {
	if t, ok := tsproto.ActionTypes.Wire(k); ok {
		return t
	}
	return otsprotocol.ActionType_DELETE_ROW
}

// streamRow is r as the PlainBuffer row of a stream record; i is its
// index in the answer.
func streamRow(r tablekit.ChangeRecord, i int) plainbuffer.Row {
	row := plainbuffer.Row{
		PrimaryKey:   make([]plainbuffer.Cell, len(r.Key)),
		DeleteMarker: r.Kind == tablekit.WriteDelete,
		Sequence:     &plainbuffer.SequenceInfo{Timestamp: r.CommitTime.UnixMicro(), RowIndex: int32(i)},
	}
	for j, k := range r.Key {
		row.PrimaryKey[j] = plainbuffer.Cell{Name: k.Name, Value: fromValue(k.Value)}
	}
	for _, c := range r.Changes {
		cell := plainbuffer.Cell{Name: c.Column}
		switch c.Kind {
		case tablekit.ChangePut:
			cell.Value, cell.Timestamp = fromValue(c.Value), &c.Version
		case tablekit.ChangeDeleteVersion:
			cell.Op, cell.Timestamp = plainbuffer.OpDeleteOneVersion, &c.Version
		case tablekit.ChangeDeleteColumn:
			cell.Op = plainbuffer.OpDeleteAllVersions
		default:
			continue // a feed records no other kind (an increment is its result's put)
		}
		row.Columns = append(row.Columns, cell)
	}
	return row
}
