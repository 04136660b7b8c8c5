package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// The features issue 31 found refused though simple: allow_update and
// update_full_row at CreateTable, ColumnPaginationFilter with
// start_column/end_column, and GetShardIterator by timestamp.

// TestAllowUpdateFalse: a table created with allow_update=false reports
// it, refuses UpdateRow (alone, in a batch, in a transaction) and takes
// PutRow; UpdateTable switches it back on.
func TestAllowUpdateFalse(t *testing.T) {
	e := newEnv(t)
	e.createWithFlags("t", false, false)
	e.put("t", pk("k", "a"), "c", "v")
	update := func() error {
		ch := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "a")}
		ch.PutColumn("c", "w")
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		_, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch})
		return err
	}
	const msg = "UpdateRow is not allowed on table 't': its allow_update option is false."
	wantOTS(t, update(), 400, "OTSParameterInvalid", msg)
	ch := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "b")}
	ch.PutColumn("c", "w")
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	bw := &tablestore.BatchWriteRowRequest{}
	bw.AddRowChange(ch)
	resp, err := e.c.BatchWriteRow(bw)
	if err != nil || len(resp.TableToRowsResult["t"]) != 1 || resp.TableToRowsResult["t"][0].IsSucceed || resp.TableToRowsResult["t"][0].Error.Message != msg {
		t.Fatalf("BatchWriteRow of an update: %v %+v", err, resp)
	}
	if r := e.get("t", pk("k", "a"), 1); len(r.Columns) != 1 || r.Columns[0].Value != "v" {
		t.Fatalf("a refused update changed the row: %+v", r.Columns)
	}
	if _, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t", TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1, AllowUpdate: proto.Bool(true)}}); err != nil {
		t.Fatalf("UpdateTable allow_update=true: %v", err)
	}
	if err := update(); err != nil {
		t.Fatalf("UpdateRow after allow_update=true: %v", err)
	}
	e.wantFlags("t", true, false)
}

// createWithFlags creates table t with allow_update and update_full_row
// as given, and checks that DescribeTable reports them.
func (e *env) createWithFlags(table string, allowUpdate, fullRow bool) {
	e.t.Helper()
	opt := tablestore.NewTableOption(-1, 1)
	opt.AllowUpdate, opt.UpdateFullRow = proto.Bool(allowUpdate), proto.Bool(fullRow)
	if err := e.create(table, opt, pkDef{"k", tString}); err != nil {
		e.t.Fatalf("CreateTable allow_update=%v update_full_row=%v: %v", allowUpdate, fullRow, err)
	}
	e.wantFlags(table, allowUpdate, fullRow)
}

func (e *env) wantFlags(table string, allowUpdate, fullRow bool) {
	e.t.Helper()
	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: table})
	if err != nil || d.TableOption.AllowUpdate == nil || *d.TableOption.AllowUpdate != allowUpdate || d.TableOption.UpdateFullRow == nil || *d.TableOption.UpdateFullRow != fullRow {
		e.t.Fatalf("DescribeTable %s: %v %+v; want allow_update=%v update_full_row=%v", table, err, d, allowUpdate, fullRow)
	}
}

// TestTableFlagsSurviveRestart: with Options.MetaFile, allow_update and
// update_full_row are kept across a restart over the same Backend.
func TestTableFlagsSurviveRestart(t *testing.T) {
	backend := localengine.New()
	defer backend.Close()
	meta := filepath.Join(t.TempDir(), "meta.json")
	start := func() *env {
		clock := tablekit.NewManualClock(epoch)
		srv, err := NewServer(Options{Backend: backend, Clock: clock, MetaFile: meta})
		if err != nil {
			t.Fatal(err)
		}
		return &env{t: t, srv: srv, clock: clock, c: sdkClient(srv, srv.AccessKeySecret())}
	}
	e := start()
	e.createWithFlags("t", false, true)
	e.srv.Close()
	e = start()
	defer e.srv.Close()
	e.wantFlags("t", false, true)
}

// TestUpdateFullRowAtCreate: update_full_row=true is taken at creation and
// reported; UpdateRow still changes only the columns it names.
func TestUpdateFullRowAtCreate(t *testing.T) {
	e := newEnv(t)
	e.createWithFlags("t", true, true)
	e.put("t", pk("k", "a"), "c1", "v1", "c2", "v2")
	ch := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "a")}
	ch.PutColumn("c2", "w")
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	if got := cellsOf(e.get("t", pk("k", "a"), 1)); got != "c1=v1 c2=w" {
		t.Fatalf("row after UpdateRow: %s", got)
	}
}

func cellsOf(r *tablestore.GetRowResponse) string {
	var b []string
	for _, c := range r.Columns {
		b = append(b, fmt.Sprintf("%s=%v", c.ColumnName, c.Value))
	}
	return strings.Join(b, " ")
}

// TestColumnPagination: ColumnPaginationFilter pages a row's columns
// (offset, limit, in name order, after start_column/end_column and the
// projection), in GetRow, BatchGetRow and GetRange.
func TestColumnPagination(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 2, pkDef{"k", tString})
	var cols []any
	for i := 1; i <= 6; i++ {
		cols = append(cols, fmt.Sprintf("c%d", i), fmt.Sprintf("v%d", i))
	}
	e.put("t", pk("k", "a"), cols...)
	e.clock.Advance(time.Millisecond)
	ch := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "a")} // two versions of each column: a column counts once
	for i := 0; i < len(cols); i += 2 {
		ch.PutColumn(cols[i].(string), cols[i+1])
	}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	e.put("t", pk("k", "b"), "c1", "x")
	get := func(q *tablestore.SingleRowQueryCriteria) string {
		t.Helper()
		q.TableName, q.PrimaryKey = "t", pk("k", "a")
		if q.MaxVersion == 0 {
			q.MaxVersion = 1
		}
		r, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: q})
		if err != nil {
			t.Fatalf("GetRow %+v: %v", q, err)
		}
		return cellsOf(r)
	}
	page := func(offset, limit int32) *tablestore.PaginationFilter {
		return &tablestore.PaginationFilter{Offset: offset, Limit: limit}
	}
	for _, tc := range []struct {
		name string
		q    *tablestore.SingleRowQueryCriteria
		want string
	}{
		{"offset 1 limit 3", &tablestore.SingleRowQueryCriteria{Filter: page(1, 3)}, "c2=v2 c3=v3 c4=v4"},
		{"past the end", &tablestore.SingleRowQueryCriteria{Filter: page(5, 3)}, "c6=v6"},
		{"from col c3", &tablestore.SingleRowQueryCriteria{Filter: page(1, 3), StartColumn: proto.String("c3")}, "c4=v4 c5=v5 c6=v6"},
		{"c2 to c5", &tablestore.SingleRowQueryCriteria{StartColumn: proto.String("c2"), EndColumn: proto.String("c5")}, "c2=v2 c3=v3 c4=v4"},
		{"projection first", &tablestore.SingleRowQueryCriteria{Filter: page(1, 1), ColumnsToGet: []string{"c1", "c5", "c6"}}, "c5=v5"},
		{"both versions", &tablestore.SingleRowQueryCriteria{Filter: page(0, 1), MaxVersion: 2}, "c1=v1 c1=v1"},
	} {
		if got := get(tc.q); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// BatchGetRow and GetRange page each row.
	mq := &tablestore.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1, Filter: page(1, 2)}
	mq.AddRow(pk("k", "a"))
	bg, err := e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{mq}})
	if err != nil || len(bg.TableToRowsResult["t"]) != 1 || len(bg.TableToRowsResult["t"][0].Columns) != 2 || bg.TableToRowsResult["t"][0].Columns[0].ColumnName != "c2" {
		t.Fatalf("BatchGetRow with pagination: %v %+v", err, bg)
	}
	gr, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: allInf(true, "k"), EndPrimaryKey: allInf(false, "k"), MaxVersion: 1, Filter: page(0, 1),
	}})
	if err != nil || len(gr.Rows) != 2 || len(gr.Rows[0].Columns) != 1 || len(gr.Rows[1].Columns) != 1 {
		t.Fatalf("GetRange with pagination: %v %+v", err, gr)
	}
	// Bad pages are refused.
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1, Filter: page(-1, 2)}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "ColumnPaginationFilter: offset must not be negative, got -1.")
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1, Filter: page(0, 0)}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "ColumnPaginationFilter: limit must be greater than 0, got 0.")
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1,
		StartColumn: proto.String("c5"), EndColumn: proto.String("c2")}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "start_column 'c5' must be less than end_column 'c2'.")
	// Inside a composite filter it stays refused.
	or := tablestore.NewCompositeColumnCondition(tablestore.LO_OR)
	or.AddFilter(page(0, 1))
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1, Filter: or}})
	wantCode(t, err, 400, "OTSParameterInvalid")
}

// TestShardIteratorByTimestamp: GetShardIterator with a timestamp (µs)
// starts at the first record committed at or after it.
func TestShardIteratorByTimestamp(t *testing.T) {
	e := newEnv(t)
	if err := e.createStreamTable("s", 24); err != nil {
		t.Fatal(err)
	}
	var times []int64
	for i := range 5 {
		times = append(times, e.clock.Now().UnixMicro())
		e.put("s", pk("pk1", fmt.Sprintf("r%d", i)), "c", int64(i))
		e.clock.Advance(time.Second)
	}
	stream, shards := e.streamShards("s")
	for _, tc := range []struct {
		ts   int64
		want string
	}{
		{0, "r0 r1 r2 r3 r4"},
		{times[2], "r2 r3 r4"},
		{times[2] + 1, "r3 r4"},
		{times[4] + 1, ""},
	} {
		it, err := e.c.GetShardIterator(&tablestore.GetShardIteratorRequest{StreamId: stream, ShardId: shards[0].SelfShard, Timestamp: proto.Int64(tc.ts)})
		if err != nil {
			t.Fatalf("GetShardIterator timestamp %d: %v", tc.ts, err)
		}
		recs, _ := e.drain(it.ShardIterator, 0)
		var got []string
		for _, r := range recs {
			got = append(got, fmt.Sprint(r.PrimaryKey.PrimaryKeys[0].Value))
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("from timestamp %d: %q, want %q", tc.ts, g, tc.want)
		}
	}
	_, err := e.c.GetShardIterator(&tablestore.GetShardIteratorRequest{StreamId: stream, ShardId: shards[0].SelfShard, Timestamp: proto.Int64(-1)})
	wantOTS(t, err, 400, "OTSParameterInvalid", "timestamp must not be negative, got -1.")
}
