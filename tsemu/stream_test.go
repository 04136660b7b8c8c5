package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// createStreamTable creates table (key pk1 STRING) with a stream of the
// given expiration.
func (e *env) createStreamTable(table string, hours int32, cols ...string) error {
	meta := &tablestore.TableMeta{TableName: table}
	meta.AddPrimaryKeyColumn("pk1", tablestore.PrimaryKeyType_STRING)
	_, err := e.c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 3), ReservedThroughput: &tablestore.ReservedThroughput{},
		StreamSpec: &tablestore.StreamSpecification{EnableStream: true, ExpirationTime: hours, OriginColumnsToGet: cols},
	})
	return err
}

// streamShards returns the table's one stream and its shards.
func (e *env) streamShards(table string) (*tablestore.StreamId, []*tablestore.StreamShard) {
	e.t.Helper()
	ls, err := e.c.ListStream(&tablestore.ListStreamRequest{TableName: &table})
	if err != nil || len(ls.Streams) != 1 {
		e.t.Fatalf("ListStream: %v, %+v: want one stream", err, ls)
	}
	ds, err := e.c.DescribeStream(&tablestore.DescribeStreamRequest{StreamId: ls.Streams[0].Id})
	if err != nil {
		e.t.Fatalf("DescribeStream: %v", err)
	}
	if *ds.TableName != table || ds.Status != tablestore.SS_Active || *ds.StreamId != *ls.Streams[0].Id {
		e.t.Fatalf("DescribeStream: %+v", ds)
	}
	return ls.Streams[0].Id, ds.Shards
}

func (e *env) iterator(stream *tablestore.StreamId, shard *tablestore.ShardId) *tablestore.ShardIterator {
	e.t.Helper()
	it, err := e.c.GetShardIterator(&tablestore.GetShardIteratorRequest{StreamId: stream, ShardId: shard})
	if err != nil {
		e.t.Fatalf("GetShardIterator: %v", err)
	}
	return it.ShardIterator
}

// drain reads from it until the answer's next iterator is it again or
// absent; it returns the records and the last iterator (nil if the
// shard ended).
func (e *env) drain(it *tablestore.ShardIterator, limit int32) ([]*tablestore.StreamRecord, *tablestore.ShardIterator) {
	e.t.Helper()
	var out []*tablestore.StreamRecord
	for range 10000 {
		req := &tablestore.GetStreamRecordRequest{ShardIterator: it}
		if limit > 0 {
			req.Limit = &limit
		}
		resp, err := e.c.GetStreamRecord(req)
		if err != nil {
			e.t.Fatalf("GetStreamRecord: %v", err)
		}
		out = append(out, resp.Records...)
		if resp.NextShardIterator == nil {
			return out, nil
		}
		if *resp.NextShardIterator == *it {
			return out, it
		}
		it = resp.NextShardIterator
	}
	e.t.Fatal("GetStreamRecord never caught up")
	return nil, nil
}

// fmtStreamRecord formats a record: type, key, commit time (µs), cells.
func fmtStreamRecord(r *tablestore.StreamRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %v @%d", r.Type, r.PrimaryKey.PrimaryKeys[0].Value, r.Info.Timestamp)
	for _, c := range r.Columns {
		switch c.Type {
		case tablestore.RCT_Put:
			fmt.Fprintf(&b, " put(%s=%v@%d)", *c.Name, c.Value, *c.Timestamp)
		case tablestore.RCT_DeleteOneVersion:
			fmt.Fprintf(&b, " delone(%s@%d)", *c.Name, *c.Timestamp)
		case tablestore.RCT_DeleteAllVersions:
			fmt.Fprintf(&b, " delall(%s)", *c.Name)
		}
	}
	return b.String()
}

// TestStreamRecords: every kind of write, read through the SDK's stream
// calls, in the service's record format, with the commit time.
func TestStreamRecords(t *testing.T) {
	e := newEnv(t)
	if err := e.createStreamTable("s", 24, "c1", "c2"); err != nil {
		t.Fatal(err)
	}
	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	sd := d.StreamDetails
	if !sd.EnableStream || sd.StreamId == nil || sd.ExpirationTime != 24 || sd.LastEnableTime != epoch.UnixMicro() || strings.Join(sd.OriginColumnsToGet, ",") != "c1,c2" {
		t.Fatalf("StreamDetails %+v", sd)
	}
	stream, shards := e.streamShards("s")
	if *stream != *sd.StreamId || len(shards) != 1 || shards[0].FatherShard != nil {
		t.Fatalf("stream %s, shards %+v", *stream, shards)
	}
	it := e.iterator(stream, shards[0].SelfShard)
	recs, it := e.drain(it, 0)
	if len(recs) != 0 || it == nil {
		t.Fatalf("a new stream has %d records", len(recs))
	}
	now := e.now()
	e.put("s", pk("pk1", "a"), "x", "abc", "y", int64(1))
	ch := &tablestore.UpdateRowChange{TableName: "s", PrimaryKey: pk("pk1", "a")}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	ch.DeleteColumnWithTimestamp("x", now)
	ch.DeleteColumn("y")
	ch.PutColumn("z", 2.5)
	ch.IncrementColumn("n", 3)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	dc := &tablestore.DeleteRowChange{TableName: "s", PrimaryKey: pk("pk1", "a")}
	dc.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: dc}); err != nil {
		t.Fatal(err)
	}
	// A failed condition records nothing.
	fc := &tablestore.PutRowChange{TableName: "s", PrimaryKey: pk("pk1", "b")}
	fc.AddColumn("x", "v")
	fc.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: fc}); err == nil {
		t.Fatal("PutRow EXPECT_EXIST of a missing row succeeded")
	}
	recs, it2 := e.drain(it, 1) // one record per answer
	us := now * 1000
	want := []string{
		fmt.Sprintf("%v a @%d put(x=abc@%d) put(y=1@%d)", tablestore.AT_Put, us, now, now),
		fmt.Sprintf("%v a @%d delone(x@%d) delall(y) put(z=2.5@%d) put(n=3@%d)", tablestore.AT_Update, us, now, now, now),
		fmt.Sprintf("%v a @%d", tablestore.AT_Delete, us),
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmtStreamRecord(r))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Reading from an iterator again returns the same records.
	again, _ := e.drain(it, 0)
	if len(again) != 3 {
		t.Errorf("re-reading from an iterator: %d records, want 3", len(again))
	}

	// Disabling ends the shard: its records stay readable, to the end,
	// where the next iterator is absent; enabling again opens a child.
	if _, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "s", StreamSpec: &tablestore.StreamSpecification{EnableStream: false}}); err != nil {
		t.Fatal(err)
	}
	e.put("s", pk("pk1", "c"), "x", "unrecorded")
	if d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "s"}); err != nil || d.StreamDetails.EnableStream {
		t.Fatalf("DescribeTable after disabling: %v %+v", err, d.StreamDetails)
	}
	recs, end := e.drain(it2, 0)
	if len(recs) != 0 || end != nil {
		t.Errorf("the ended shard: %d more records, next iterator %v; want none and none", len(recs), end)
	}
	e.clock.Advance(time.Hour)
	resp, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "s", StreamSpec: &tablestore.StreamSpecification{EnableStream: true, ExpirationTime: 48}})
	if err != nil || !resp.StreamDetails.EnableStream || resp.StreamDetails.ExpirationTime != 48 || resp.StreamDetails.LastEnableTime != epoch.Add(time.Hour).UnixMicro() {
		t.Fatalf("UpdateTable enabling again: %v %+v", err, resp)
	}
	stream2, shards := e.streamShards("s")
	if *stream2 != *stream || len(shards) != 2 || shards[1].FatherShard == nil || *shards[1].FatherShard != *shards[0].SelfShard {
		t.Fatalf("after enabling again: stream %s (was %s), shards %+v", *stream2, *stream, shards)
	}
	// Paging through DescribeStream.
	one := int32(1)
	ds, err := e.c.DescribeStream(&tablestore.DescribeStreamRequest{StreamId: stream, ShardLimit: &one})
	if err != nil || len(ds.Shards) != 1 || ds.NextShardId == nil || *ds.NextShardId != *shards[1].SelfShard || ds.ExpirationTime != 48 {
		t.Fatalf("DescribeStream shard_limit 1: %v %+v", err, ds)
	}
	ds, err = e.c.DescribeStream(&tablestore.DescribeStreamRequest{StreamId: stream, InclusiveStartShardId: ds.NextShardId})
	if err != nil || len(ds.Shards) != 1 || *ds.Shards[0].SelfShard != *shards[1].SelfShard || ds.NextShardId != nil {
		t.Fatalf("DescribeStream from the second shard: %v %+v", err, ds)
	}
}

// TestStreamTrimmed: past the expiration an iterator's records are gone:
// OTSTrimmedDataAccess.
func TestStreamTrimmed(t *testing.T) {
	e := newEnv(t)
	if err := e.createStreamTable("s", 1); err != nil {
		t.Fatal(err)
	}
	stream, shards := e.streamShards("s")
	// An iterator at the shard's start, then one at its first position.
	_, it := e.drain(e.iterator(stream, shards[0].SelfShard), 0)
	e.put("s", pk("pk1", "a"), "x", int64(1))
	e.clock.Advance(2 * time.Hour)
	e.put("s", pk("pk1", "b"), "x", int64(2))
	_, err := e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: it})
	wantCode(t, err, 400, "OTSTrimmedDataAccess")
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	oe, ok := err.(*tablestore.OtsError)
	if !ok || oe.HttpStatusCode != status || oe.Code != code {
		t.Fatalf("got %v (%T), want %d %s", err, err, status, code)
	}
}

// noFeed is a Backend without a change feed.
type noFeed struct{ tablekit.Backend }

// TestStreamRefusedWithoutFeed: over a Backend without a change feed a
// stream is refused before anything is written, and none is listed.
func TestStreamRefusedWithoutFeed(t *testing.T) {
	srv, err := NewServer(Options{Backend: noFeed{localengine.New()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	e := &env{t: t, srv: srv, c: sdkClient(srv, srv.AccessKeySecret())}
	wantCode(t, e.createStreamTable("s", 24), 400, "OTSUnsupportOperation")
	if _, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "s"}); err == nil {
		t.Fatal("the refused CreateTable created the table")
	}
	e.createTable("t", 1, pkDef{"pk1", tablestore.PrimaryKeyType_STRING})
	_, err = e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t", StreamSpec: &tablestore.StreamSpecification{EnableStream: true, ExpirationTime: 24}})
	wantCode(t, err, 400, "OTSUnsupportOperation")
	ls, err := e.c.ListStream(&tablestore.ListStreamRequest{})
	if err != nil || len(ls.Streams) != 0 {
		t.Fatalf("ListStream: %v %+v", err, ls)
	}
	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "t"})
	if err != nil || d.StreamDetails.EnableStream {
		t.Fatalf("DescribeTable: %v %+v", err, d)
	}
}

// TestStreamBadInput: bad stream specs, ids, iterators and limits get a
// typed error, never a panic, and write nothing.
func TestStreamBadInput(t *testing.T) {
	e := newEnv(t)
	for _, h := range []int32{0, -1, 169} {
		err := e.createStreamTable("bad", h)
		wantCode(t, err, 400, "OTSParameterInvalid")
	}
	many := make([]string, MaxStreamColumns+1)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	wantCode(t, e.createStreamTable("bad", 24, many...), 400, "OTSParameterInvalid")
	wantCode(t, e.createStreamTable("bad", 24, "bad name"), 400, "OTSParameterInvalid")
	if ls, err := e.c.ListTable(); err != nil || len(ls.TableNames) != 0 {
		t.Fatalf("refused CreateTables left tables: %v %v", err, ls)
	}
	if err := e.createStreamTable("s", 24); err != nil {
		t.Fatal(err)
	}
	stream, shards := e.streamShards("s")
	good := string(*e.iterator(stream, shards[0].SelfShard))
	x, _ := decodeIterator(good)

	bad := func(id string) *tablestore.StreamId { s := tablestore.StreamId(id); return &s }
	_, err := e.c.DescribeStream(&tablestore.DescribeStreamRequest{StreamId: bad("nope")})
	wantCode(t, err, 404, "OTSObjectNotExist")
	_, err = e.c.DescribeStream(&tablestore.DescribeStreamRequest{StreamId: bad(strings.Repeat("a", 36))})
	wantCode(t, err, 404, "OTSObjectNotExist")
	zero := int32(0)
	_, err = e.c.DescribeStream(&tablestore.DescribeStreamRequest{StreamId: stream, ShardLimit: &zero})
	wantCode(t, err, 400, "OTSParameterInvalid")
	noShard := tablestore.ShardId("nope")
	_, err = e.c.GetShardIterator(&tablestore.GetShardIteratorRequest{StreamId: stream, ShardId: &noShard})
	wantCode(t, err, 400, "OTSTrimmedDataAccess")
	ts := int64(1)
	_, err = e.c.GetShardIterator(&tablestore.GetShardIteratorRequest{StreamId: stream, ShardId: shards[0].SelfShard, Timestamp: &ts})
	wantCode(t, err, 400, "OTSParameterInvalid")

	for name, it := range map[string]string{
		"empty":           "-",
		"not base64":      "!!!",
		"too long":        strings.Repeat("A", maxIteratorLen+1),
		"bad version":     base64.RawURLEncoding.EncodeToString([]byte{2, 1, 'a', 1, 'b', 0}),
		"truncated":       good[:len(good)-3],
		"trailing bytes":  base64.RawURLEncoding.EncodeToString(append(mustDecode(t, good), 0)),
		"huge length":     base64.RawURLEncoding.EncodeToString([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a'}),
		"other stream":    shardIterator{stream: strings.Repeat("0", 36), shard: x.shard}.encode(),
		"other shard":     shardIterator{stream: x.stream, shard: "nope"}.encode(),
		"bad checkpoint":  shardIterator{stream: x.stream, shard: x.shard, from: "garbage"}.encode(),
		"future position": shardIterator{stream: x.stream, shard: x.shard, from: tablekit.Checkpoint(x.shard + "/99")}.encode(),
	} {
		it := tablestore.ShardIterator(it)
		_, err := e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: &it})
		oe, ok := err.(*tablestore.OtsError)
		if !ok || oe.HttpStatusCode/100 != 4 || !strings.HasPrefix(oe.Code, "OTS") {
			t.Errorf("%s iterator: %v, want a typed 4xx error", name, err)
		}
	}
	it := tablestore.ShardIterator(good)
	for _, l := range []int32{0, -5} {
		_, err := e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: &it, Limit: &l})
		wantCode(t, err, 400, "OTSParameterInvalid")
	}
	other := "other"
	_, err = e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: &it, TableName: &other})
	wantCode(t, err, 400, "OTSParameterInvalid")
	// A raw request without the required enable_stream.
	raw := protowire.AppendTag(nil, 1, protowire.BytesType)
	raw = protowire.AppendString(raw, "s")
	raw = protowire.AppendTag(raw, 4, protowire.BytesType)
	raw = protowire.AppendBytes(raw, nil)
	do(t, e.srv, signedRequest(t, e.srv, "UpdateTable", raw, e.srv.AccessKeySecret())).want(t, 400, "OTSParameterInvalid", errParse.msg)
}

func mustDecode(t *testing.T, s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStreamSurvivesRestart: over the file engine with a MetaFile, an
// iterator taken before a restart reads on after it, and the stream's id
// and times are kept; without the MetaFile the stream is still found.
func TestStreamSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	for _, withMeta := range []bool{true, false} {
		t.Run(fmt.Sprint("meta=", withMeta), func(t *testing.T) {
			sub := filepath.Join(dir, fmt.Sprint(withMeta))
			open := func() (*env, func()) {
				fe, err := fileengine.Open(filepath.Join(sub, "data"), nil)
				if err != nil {
					t.Fatal(err)
				}
				clock := tablekit.NewManualClock(epoch)
				o := Options{Backend: fe, Clock: clock}
				if withMeta {
					o.MetaFile = filepath.Join(sub, "meta.json")
				}
				srv, err := NewServer(o)
				if err != nil {
					t.Fatal(err)
				}
				return &env{t: t, srv: srv, clock: clock, c: sdkClient(srv, srv.AccessKeySecret())}, func() { srv.Close(); fe.Close() }
			}
			e, stop := open()
			if err := e.createStreamTable("s", 24); err != nil {
				t.Fatal(err)
			}
			stream, shards := e.streamShards("s")
			it := e.iterator(stream, shards[0].SelfShard)
			e.put("s", pk("pk1", "a"), "x", int64(1))
			stop()
			e, stop = open()
			defer stop()
			e.put("s", pk("pk1", "b"), "x", int64(2))
			recs, _ := e.drain(it, 0)
			if len(recs) != 2 {
				t.Fatalf("%d records after a restart, want 2", len(recs))
			}
			d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "s"})
			if err != nil || *d.StreamDetails.StreamId != *stream {
				t.Fatalf("DescribeTable: %v %+v", err, d)
			}
			if withMeta && d.StreamDetails.LastEnableTime != epoch.UnixMicro() {
				t.Errorf("last_enable_time %d after a restart, want %d", d.StreamDetails.LastEnableTime, epoch.UnixMicro())
			}
		})
	}
}

// TestUpdateTableWithoutOptions: an UpdateTable with no table_options (only
// a stream spec, or only reserved throughput) is served; it used to
// panic (a 500) reading the absent options.
func TestUpdateTableWithoutOptions(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"pk1", tablestore.PrimaryKeyType_STRING})
	if _, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t", ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 1, Writecap: 1}}); err != nil {
		t.Fatalf("UpdateTable with reserved throughput only: %v", err)
	}
	if _, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t", StreamSpec: &tablestore.StreamSpecification{EnableStream: false}}); err != nil {
		t.Fatalf("UpdateTable with a stream spec only: %v", err)
	}
}

// FuzzStreamRequest sends the four stream calls arbitrary bodies, and
// GetStreamRecord arbitrary iterators and limits: never a panic or a
// 5xx, and malformed input is a 4xx OTS error.
func FuzzStreamRequest(f *testing.F) {
	e := newEnv(f)
	if err := e.createStreamTable("s", 24); err != nil {
		f.Fatal(err)
	}
	stream, shards := e.streamShards("s")
	e.put("s", pk("pk1", "a"), "x", int64(1))
	good := string(*e.iterator(stream, shards[0].SelfShard))
	ops := []string{"ListStream", "DescribeStream", "GetShardIterator", "GetStreamRecord"}
	for i := range ops {
		f.Add(uint8(i), []byte{}, "", int32(0))
	}
	f.Add(uint8(3), []byte{}, good, int32(1))
	f.Add(uint8(3), []byte{}, good[:len(good)/2], int32(1000))
	f.Add(uint8(3), []byte{}, good+"A", int32(-1))
	f.Add(uint8(2), []byte{0x0a, 0x24}, "", int32(0))
	f.Fuzz(func(t *testing.T, opIdx uint8, body []byte, iter string, limit int32) {
		op := ops[int(opIdx)%len(ops)]
		if op == "GetStreamRecord" && iter != "" {
			req := &otsprotocol.GetStreamRecordRequest{ShardIterator: proto.String(iter)}
			if limit != 0 {
				req.Limit = proto.Int32(limit)
			}
			var err error
			if body, err = proto.Marshal(req); err != nil {
				t.Fatal(err)
			}
		}
		r := do(t, e.srv, signedRequest(t, e.srv, op, body, e.srv.AccessKeySecret()))
		if r.status >= 500 {
			t.Fatalf("%s: status %d %s %q", op, r.status, r.err.GetCode(), r.err.GetMessage())
		}
		if r.status != 200 && (r.status/100 != 4 || !strings.HasPrefix(r.err.GetCode(), "OTS")) {
			t.Fatalf("%s: status %d %v", op, r.status, r.err)
		}
	})
}
