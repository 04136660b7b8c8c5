package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// txnEnv is an env with table "t" (p STRING, r INTEGER).
func txnEnv(t *testing.T, o Options) *env {
	t.Helper()
	clock := tablekit.NewManualClock(epoch)
	o.Clock = clock
	srv, err := NewServer(mem(o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	e := &env{t: t, srv: srv, clock: clock, c: sdkClient(srv, srv.AccessKeySecret())}
	e.createTable("t", 1, pkDef{"p", tString}, pkDef{"r", tInteger})
	return e
}

func (e *env) start(table, p string) (string, error) {
	r, err := e.c.StartLocalTransaction(&tablestore.StartLocalTransactionRequest{TableName: table, PrimaryKey: pk("p", p)})
	if err != nil {
		return "", err
	}
	return *r.TransactionId, nil
}

func (e *env) mustStart(table, p string) string {
	e.t.Helper()
	id, err := e.start(table, p)
	if err != nil {
		e.t.Fatalf("StartLocalTransaction %s %s: %v", table, p, err)
	}
	return id
}

func (e *env) commit(id string) error {
	_, err := e.c.CommitTransaction(&tablestore.CommitTransactionRequest{TransactionId: &id})
	return err
}

func (e *env) abort(id string) error {
	_, err := e.c.AbortTransaction(&tablestore.AbortTransactionRequest{TransactionId: &id})
	return err
}

// txnPut puts row (p, r) with column v; id "" writes without a transaction.
func (e *env) txnPut(id, p string, r int64, v any, cond tablestore.RowExistenceExpectation) error {
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("p", p, "r", r)}
	ch.AddColumn("v", v)
	ch.SetCondition(cond)
	if id != "" {
		ch.TransactionId = &id
	}
	_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	return err
}

// txnGet reads column v of row (p, r): nil when the row is absent.
func (e *env) txnGet(id, p string, r int64) any {
	e.t.Helper()
	q := &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("p", p, "r", r), MaxVersion: 1}
	if id != "" {
		q.TransactionId = &id
	}
	resp, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: q})
	if err != nil {
		e.t.Fatalf("GetRow %s/%d in %q: %v", p, r, id, err)
	}
	if len(resp.PrimaryKey.PrimaryKeys) == 0 {
		return nil
	}
	if vs := colMap(resp.Columns)["v"]; len(vs) > 0 {
		return vs[0]
	}
	return "<no v>"
}

// txnRange reads partition p's rows (every row for p "*") as "r=v"
// strings.
func (e *env) txnRange(id, p string, backward bool, limit int32) ([]string, error) {
	q := &tablestore.RangeRowQueryCriteria{TableName: "t", MaxVersion: 1, Limit: limit,
		StartPrimaryKey: pk("p", p, "r", tablestore.MIN), EndPrimaryKey: pk("p", p, "r", tablestore.MAX)}
	inf := 1
	if p == "*" {
		inf = 0
	}
	for i := inf; i < 2; i++ {
		q.StartPrimaryKey.PrimaryKeys[i].PrimaryKeyOption = tablestore.MIN
		q.StartPrimaryKey.PrimaryKeys[i].Value = nil
		q.EndPrimaryKey.PrimaryKeys[i].PrimaryKeyOption = tablestore.MAX
		q.EndPrimaryKey.PrimaryKeys[i].Value = nil
	}
	if backward {
		q.Direction = tablestore.BACKWARD
		q.StartPrimaryKey, q.EndPrimaryKey = q.EndPrimaryKey, q.StartPrimaryKey
	}
	if id != "" {
		q.TransactionId = &id
	}
	var out []string
	for {
		resp, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: q})
		if err != nil {
			return nil, err
		}
		for _, row := range resp.Rows {
			out = append(out, fmt.Sprintf("%v=%v", row.PrimaryKey.PrimaryKeys[1].Value, colMap(row.Columns)["v"][0]))
		}
		if resp.NextStartPrimaryKey == nil {
			return out, nil
		}
		q.StartPrimaryKey = resp.NextStartPrimaryKey
	}
}

func (e *env) mustRange(id, p string, backward bool, limit int32) string {
	e.t.Helper()
	rows, err := e.txnRange(id, p, backward, limit)
	if err != nil {
		e.t.Fatalf("GetRange %s in %q: %v", p, id, err)
	}
	return strings.Join(rows, " ")
}

// TestTxnCommitVisible: a transaction's writes are invisible to others and
// visible to itself until commit, then visible to all; the id is then gone.
func TestTxnCommitVisible(t *testing.T) {
	e := txnEnv(t, Options{})
	for r := int64(1); r <= 4; r++ {
		e.put("t", pk("p", "a", "r", r), "v", fmt.Sprint("old", r))
	}
	id := e.mustStart("t", "a")
	if err := e.txnPut(id, "a", 5, "new5", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST); err != nil {
		t.Fatal(err)
	}
	if err := e.txnPut(id, "a", 2, "new2", tablestore.RowExistenceExpectation_EXPECT_EXIST); err != nil {
		t.Fatal(err)
	}
	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(3)), TransactionId: &id}
	del.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	if _, err := e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del}); err != nil {
		t.Fatal(err)
	}
	upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(4)), TransactionId: &id}
	upd.PutColumn("v", "new4")
	upd.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd}); err != nil {
		t.Fatal(err)
	}
	before := "1=old1 2=old2 3=old3 4=old4"
	inside := "1=old1 2=new2 4=new4 5=new5"
	if got := e.mustRange("", "a", false, 0); got != before {
		t.Errorf("outside, before commit: %s, want %s", got, before)
	}
	if got := e.txnGet("", "a", 5); got != nil {
		t.Errorf("outside, before commit: row 5 = %v", got)
	}
	if got := e.txnGet(id, "a", 5); got != "new5" {
		t.Errorf("inside: row 5 = %v", got)
	}
	if got := e.txnGet(id, "a", 3); got != nil {
		t.Errorf("inside: deleted row 3 = %v", got)
	}
	if got := e.txnGet(id, "a", 1); got != "old1" {
		t.Errorf("inside: untouched row 1 = %v", got)
	}
	if got := e.mustRange(id, "a", false, 0); got != inside {
		t.Errorf("inside: %s, want %s", got, inside)
	}
	// A range over every partition key: the transaction's rows as it sees
	// them, the others' committed.
	e.put("t", pk("p", "0", "r", int64(1)), "v", "zero")
	e.put("t", pk("p", "b", "r", int64(1)), "v", "bee")
	for _, limit := range []int32{0, 1, 2} {
		if got := e.mustRange(id, "*", false, limit); got != "1=zero "+inside+" 1=bee" {
			t.Errorf("inside, every partition key, limit %d: %s", limit, got)
		}
		if got := e.mustRange(id, "*", true, limit); got != "1=bee 5=new5 4=new4 2=new2 1=old1 1=zero" {
			t.Errorf("inside, every partition key, backward, limit %d: %s", limit, got)
		}
	}
	// Pages of one and two rows, both ways, stitch the same rows.
	for _, limit := range []int32{1, 2} {
		if got := e.mustRange(id, "a", false, limit); got != inside {
			t.Errorf("inside, limit %d: %s, want %s", limit, got, inside)
		}
		if got := e.mustRange(id, "a", true, limit); got != "5=new5 4=new4 2=new2 1=old1" {
			t.Errorf("inside, backward, limit %d: %s", limit, got)
		}
	}
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	if got := e.mustRange("", "a", false, 0); got != inside {
		t.Errorf("after commit: %s, want %s", got, inside)
	}
	wantOTS(t, e.commit(id), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")
	wantOTS(t, e.txnPut(id, "a", 6, "x", tablestore.RowExistenceExpectation_IGNORE), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")
	// The partition key is free again.
	if err := e.txnPut("", "a", 6, "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
}

// TestTxnAbortInvisible: an aborted transaction leaves no trace.
func TestTxnAbortInvisible(t *testing.T) {
	e := txnEnv(t, Options{})
	e.put("t", pk("p", "a", "r", int64(1)), "v", "old1")
	id := e.mustStart("t", "a")
	if err := e.txnPut(id, "a", 1, "new1", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	if err := e.txnPut(id, "a", 2, "new2", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	if err := e.abort(id); err != nil {
		t.Fatal(err)
	}
	if got := e.mustRange("", "a", false, 0); got != "1=old1" {
		t.Errorf("after abort: %s", got)
	}
	wantOTS(t, e.abort(id), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")
	wantOTS(t, e.commit(id), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")
	// A transaction without writes commits and aborts alike.
	id = e.mustStart("t", "a")
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	if got := e.mustRange("", "a", false, 0); got != "1=old1" {
		t.Errorf("after an empty commit: %s", got)
	}
}

// TestTxnIsolation: while a transaction holds a partition key, writes to it
// without the id and a second transaction are refused, reads are not;
// other partition keys are free.
func TestTxnIsolation(t *testing.T) {
	e := txnEnv(t, Options{})
	e.put("t", pk("p", "a", "r", int64(1)), "v", "old1")
	id := e.mustStart("t", "a")
	conflict := func(err error) {
		t.Helper()
		wantOTS(t, err, 409, "OTSRowOperationConflict", "Data is being modified by the other request.")
	}
	conflict(e.txnPut("", "a", 1, "other", tablestore.RowExistenceExpectation_IGNORE))
	_, err := e.start("t", "a")
	conflict(err)
	upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(1))}
	upd.IncrementColumn("n", 1)
	upd.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd})
	conflict(err)
	// A plain batch: the held row fails, the other is written.
	bw := &tablestore.BatchWriteRowRequest{}
	for _, p := range []string{"a", "b"} {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("p", p, "r", int64(9))}
		ch.AddColumn("v", "batch")
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		bw.AddRowChange(ch)
	}
	res, err := e.c.BatchWriteRow(bw)
	if err != nil {
		t.Fatal(err)
	}
	rows := res.TableToRowsResult["t"]
	if len(rows) != 2 || rows[0].IsSucceed || rows[0].Error.Code != "OTSRowOperationConflict" || !rows[1].IsSucceed {
		t.Fatalf("batch across a held partition key: %+v", rows)
	}
	// An atomic batch on the held partition key is refused whole.
	bw.IsAtomic = true
	bw.RowChangesGroupByTable = nil
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(8))}
	ch.AddColumn("v", "atomic")
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	bw.AddRowChange(ch)
	_, err = e.c.BatchWriteRow(bw)
	conflict(err)
	// Reads are not blocked and see committed data only.
	if err := e.txnPut(id, "a", 1, "mine", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	if got := e.txnGet("", "a", 1); got != "old1" {
		t.Errorf("a read outside sees %v", got)
	}
	// Another partition key is free, also for a transaction.
	if err := e.txnPut("", "b", 1, "b1", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	idB := e.mustStart("t", "b")
	if err := e.commit(idB); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	if got := e.mustRange("", "a", false, 0); got != "1=mine" {
		t.Errorf("after commit: %s (refused writes must have written nothing)", got)
	}
	if got := e.mustRange("", "b", false, 0); got != "1=b1 9=batch" {
		t.Errorf("partition b: %s", got)
	}
}

// TestTxnConditionsAndIncrements: conditions inside a transaction see its
// own writes; a refused write leaves it usable; increments return their
// running value and commit it.
func TestTxnConditionsAndIncrements(t *testing.T) {
	e := txnEnv(t, Options{})
	id := e.mustStart("t", "a")
	if err := e.txnPut(id, "a", 1, "v1", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST); err != nil {
		t.Fatal(err)
	}
	wantOTS(t, e.txnPut(id, "a", 1, "again", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST),
		403, "OTSConditionCheckFail", "Row exists which is expected nonexistent")
	// A column condition against the transaction's own value.
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(1)), TransactionId: &id}
	ch.AddColumn("v", "v2")
	ch.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	ch.SetColumnCondition(tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, "v1"))
	if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatalf("condition on the transaction's own write: %v", err)
	}
	ch.Columns = nil
	ch.AddColumn("v", "v3")
	_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	wantOTS(t, err, 403, "OTSConditionCheckFail", "Condition check failed.")
	for want := int64(1); want <= 3; want++ {
		upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(1)), TransactionId: &id}
		upd.IncrementColumn("n", 1)
		upd.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
		upd.SetReturnIncrementValue()
		upd.AppendIncrementColumnToReturn("n")
		r, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Columns) != 1 || r.Columns[0].Value != want {
			t.Fatalf("increment %d answered %+v", want, r.Columns)
		}
	}
	e.clock.Advance(time.Second)
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	r := e.get("t", pk("p", "a", "r", int64(1)), 1)
	m := colMap(r.Columns)
	if len(m["v"]) != 1 || m["v"][0] != "v2" || len(m["n"]) != 1 || m["n"][0] != int64(3) {
		t.Fatalf("after commit: %v", m)
	}
	// Versions are the time of the write in the transaction, not of commit.
	for _, c := range r.Columns {
		if c.Timestamp != epoch.UnixMilli() {
			t.Errorf("column %s has version %d, want %d (the write's time)", c.ColumnName, c.Timestamp, epoch.UnixMilli())
		}
	}
}

// TestTxnBatchWriteRow: a batch carrying the id is taken into the
// transaction row by row.
func TestTxnBatchWriteRow(t *testing.T) {
	e := txnEnv(t, Options{})
	e.createTable("u", 1, pkDef{"p", tString})
	id := e.mustStart("t", "a")
	put := func(p string, r int64, cond otsprotocol.RowExistenceExpectation) *otsprotocol.RowInBatchWriteRowRequest {
		return &otsprotocol.RowInBatchWriteRowRequest{Type: otsprotocol.OperationType_PUT.Enum(),
			RowChange: rowBytes(pk("p", p, "r", r), "v", fmt.Sprint(p, r)),
			Condition: &otsprotocol.Condition{RowExistence: cond.Enum()}}
	}
	req := &otsprotocol.BatchWriteRowRequest{TransactionId: &id, Tables: []*otsprotocol.TableInBatchWriteRowRequest{
		{TableName: proto.String("t"), Rows: []*otsprotocol.RowInBatchWriteRowRequest{
			put("a", 1, otsprotocol.RowExistenceExpectation_IGNORE),
			put("b", 1, otsprotocol.RowExistenceExpectation_IGNORE),
			put("a", 2, otsprotocol.RowExistenceExpectation_EXPECT_EXIST),
			put("a", 3, otsprotocol.RowExistenceExpectation_EXPECT_NOT_EXIST),
		}},
		{TableName: proto.String("u"), Rows: []*otsprotocol.RowInBatchWriteRowRequest{{Type: otsprotocol.OperationType_PUT.Enum(),
			RowChange: rowBytes(pk("p", "a"), "v", "u"), Condition: &otsprotocol.Condition{RowExistence: otsprotocol.RowExistenceExpectation_IGNORE.Enum()}}}},
	}}
	resp := e.call("BatchWriteRow", req)
	if resp.status != 200 {
		t.Fatalf("BatchWriteRow: %d %v", resp.status, resp.err)
	}
	var out otsprotocol.BatchWriteRowResponse
	if err := proto.Unmarshal(resp.body, &out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tb := range out.Tables {
		for _, r := range tb.Rows {
			if r.GetIsOk() {
				got = append(got, "ok")
			} else {
				got = append(got, r.GetError().GetCode())
			}
		}
	}
	want := "ok OTSDataOutOfRange OTSConditionCheckFail ok OTSDataOutOfRange"
	if strings.Join(got, " ") != want {
		t.Fatalf("rows: %v, want %s", got, want)
	}
	if got := e.mustRange("", "a", false, 0); got != "" {
		t.Errorf("before commit: %q", got)
	}
	if got := e.mustRange(id, "a", false, 0); got != "1=a1 3=a3" {
		t.Errorf("inside: %q", got)
	}
	// is_atomic with a transaction id is refused.
	req.IsAtomic = proto.Bool(true)
	e.call("BatchWriteRow", req).want(t, 400, "OTSParameterInvalid", "is_atomic with transaction_id is not supported by the tablekit Tablestore emulator.")
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	if got := e.mustRange("", "a", false, 0); got != "1=a1 3=a3" {
		t.Errorf("after commit: %q", got)
	}
}

// rowBytes encodes a row of key with one column.
func rowBytes(key *tablestore.PrimaryKey, col string, v any) []byte {
	ch := &tablestore.PutRowChange{PrimaryKey: key}
	ch.AddColumn(col, v)
	return ch.Serialize()
}

// TestTxnErrors: the service's answers to bad transaction calls.
func TestTxnErrors(t *testing.T) {
	e := txnEnv(t, Options{})
	e.createTable("u", 1, pkDef{"p", tString})
	_, err := e.c.StartLocalTransaction(&tablestore.StartLocalTransactionRequest{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(1))})
	wantOTS(t, err, 400, "OTSParameterInvalid", "StartLocalTransaction support only one primary key.")
	_, err = e.c.StartLocalTransaction(&tablestore.StartLocalTransactionRequest{TableName: "t", PrimaryKey: pk("p", int64(1))})
	wantOTS(t, err, 400, "OTSInvalidPK", "Validate PK type fail. Input: VT_INTEGER, Meta: VT_STRING.")
	_, err = e.c.StartLocalTransaction(&tablestore.StartLocalTransactionRequest{TableName: "t", PrimaryKey: pk("q", "a")})
	wantOTS(t, err, 400, "OTSInvalidPK", "Validate PK name fail. Input: q, Meta: p.")
	_, err = e.start("missing", "a")
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")
	wantOTS(t, e.commit(""), 400, "OTSParameterInvalid", "TransactionID is invalid.")
	wantOTS(t, e.abort(""), 400, "OTSParameterInvalid", "TransactionID is invalid.")
	wantOTS(t, e.commit("no-such-id"), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")

	id := e.mustStart("t", "a")
	// Writes out of the transaction's range.
	wantOTS(t, e.txnPut(id, "b", 1, "x", tablestore.RowExistenceExpectation_IGNORE), 400, "OTSDataOutOfRange",
		"The primary key is out of the range of the transaction: its p must be a.")
	ch := &tablestore.PutRowChange{TableName: "u", PrimaryKey: pk("p", "a"), TransactionId: &id}
	ch.AddColumn("v", "x")
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	wantOTS(t, err, 400, "OTSDataOutOfRange", "Table 'u' is out of the range of the transaction, which is on table 't'.")
	// Reads are not limited to the partition key: elsewhere they see
	// committed data.
	e.put("t", pk("p", "b", "r", int64(1)), "v", "b1")
	if got := e.mustRange(id, "b", false, 0); got != "1=b1" {
		t.Errorf("a read of partition b in the transaction: %q", got)
	}
	if got := e.txnGet(id, "b", 1); got != "b1" {
		t.Errorf("a read of row b/1 in the transaction: %v", got)
	}
	// The transaction is still usable after refused requests.
	if err := e.txnPut(id, "a", 1, "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	if got := e.mustRange("", "b", false, 0); got != "1=b1" {
		t.Errorf("partition b: %q", got)
	}
}

// TestTxnTimeout: a transaction idle past the timeout, on the server's
// clock, is aborted: its writes are gone and its partition key is free.
func TestTxnTimeout(t *testing.T) {
	for _, tc := range []struct {
		opt  time.Duration
		idle time.Duration
	}{{0, DefaultTransactionTimeout}, {5 * time.Second, 5 * time.Second}} {
		t.Run(tc.idle.String(), func(t *testing.T) {
			e := txnEnv(t, Options{TransactionTimeout: tc.opt})
			id := e.mustStart("t", "a")
			// Each request restarts the idle time.
			for i := range 3 {
				e.clock.Advance(tc.idle)
				if err := e.txnPut(id, "a", int64(i), "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
					t.Fatalf("write %d after %v idle: %v", i, tc.idle, err)
				}
			}
			e.clock.Advance(tc.idle + time.Millisecond)
			// The partition key is free: a writer without the id gets in.
			if err := e.txnPut("", "a", 9, "other", tablestore.RowExistenceExpectation_IGNORE); err != nil {
				t.Fatalf("write after the transaction timed out: %v", err)
			}
			wantOTS(t, e.commit(id), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")
			if got := e.mustRange("", "a", false, 0); got != "9=other" {
				t.Errorf("after timeout: %q (the transaction's writes must be gone)", got)
			}
		})
	}
}

// TestTxnLimits: open transactions and the data of one are bounded, with
// errors that say so; a refused write is not kept.
func TestTxnLimits(t *testing.T) {
	e := txnEnv(t, Options{MaxTransactions: 2})
	a := e.mustStart("t", "a")
	e.mustStart("t", "b")
	_, err := e.start("t", "c")
	wantOTS(t, err, 403, "OTSQuotaExhausted", "Too many open local transactions: the tablekit Tablestore emulator keeps at most 2 (Options.MaxTransactions); commit or abort one, or wait for one to time out.")
	// An expired transaction makes room.
	e.clock.Advance(DefaultTransactionTimeout + time.Second)
	c := e.mustStart("t", "c")
	if err := e.abort(c); err != nil {
		t.Fatal(err)
	}
	wantOTS(t, e.commit(a), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")

	// Bytes: 1 MiB writes until the 4 MB limit.
	id := e.mustStart("t", "a")
	big := strings.Repeat("x", 1<<20)
	var r int64
	for ; r < 5; r++ {
		if err = e.txnPut(id, "a", r, big, tablestore.RowExistenceExpectation_IGNORE); err != nil {
			break
		}
	}
	if r != 3 {
		t.Fatalf("%d writes of 1 MiB taken, want 3", r)
	}
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) || oe.Code != "OTSOutOfTransactionDataSizeLimit" || !strings.Contains(oe.Message, "the limit is 4194304 bytes") {
		t.Fatalf("4th write: %v", err)
	}
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	rows, err := e.txnRange("", "a", false, 0)
	if err != nil || len(rows) != 3 {
		t.Fatalf("after commit: %d rows, %v", len(rows), err)
	}

	// Rows: one AtomicWrite commits a transaction.
	id = e.mustStart("t", "b")
	for r = 0; r < tablekit.MaxAtomicWrite; r++ {
		if err := e.txnPut(id, "b", r, "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
			t.Fatal(err)
		}
	}
	// A row written again is not a new row.
	if err := e.txnPut(id, "b", 0, "y", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	wantOTS(t, e.txnPut(id, "b", r, "x", tablestore.RowExistenceExpectation_IGNORE), 400, "OTSOutOfTransactionDataSizeLimit",
		"The transaction already writes 100 rows, the most the tablekit Tablestore emulator commits in one transaction.")
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
	rows, err = e.txnRange("", "b", false, 0)
	if err != nil || len(rows) != tablekit.MaxAtomicWrite || rows[0] != "0=y" {
		t.Fatalf("after commit: %d rows (first %v), %v", len(rows), rows[:1], err)
	}
}

// TestTxnRefusedWithoutAtomicWriter: over a Backend that cannot write
// several rows atomically, StartLocalTransaction is refused.
func TestTxnRefusedWithoutAtomicWriter(t *testing.T) {
	b := noAtomic{localengine.New()}
	e := txnEnv(t, Options{Backend: b})
	_, err := e.start("t", "a")
	wantOTS(t, err, 400, "OTSParameterInvalid", "Try to call method using explicit transaction on explicit-transaction-disabled table: the tablekit Tablestore emulator's Backend cannot write several rows atomically (tablekit Capabilities.AtomicWrite is false), so table 't' has no local transactions.")
	// Writes without a transaction are not affected.
	if err := e.txnPut("", "a", 1, "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
}

// TestTxnSessionBusy: a transaction serves one request at a time.
func TestTxnSessionBusy(t *testing.T) {
	e := txnEnv(t, Options{})
	id := e.mustStart("t", "a")
	tx, oe := e.srv.useTxn(id) // a request of the transaction in flight
	if oe != nil {
		t.Fatal(oe)
	}
	wantOTS(t, e.txnPut(id, "a", 1, "x", tablestore.RowExistenceExpectation_IGNORE), 409, "OTSSessionBusy", "The last request on the transaction has not completed.")
	// In flight, it does not time out.
	e.clock.Advance(2 * DefaultTransactionTimeout)
	e.srv.doneTxn(tx)
	if err := e.txnPut(id, "a", 1, "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	if err := e.commit(id); err != nil {
		t.Fatal(err)
	}
}

// TestTxnRace: transactions and writers without one contend for one
// partition key's counter; every acknowledged increment is counted once
// (a transaction reads and writes the counter, so an interleaved write
// would be lost), and readers never see a transaction half committed.
func TestTxnRace(t *testing.T) {
	e := txnEnv(t, Options{})
	e.put("t", pk("p", "a", "r", int64(1)), "v", int64(0))
	e.put("t", pk("p", "a", "r", int64(2)), "v", int64(0))
	const workers, rounds = 4, 15
	var mu sync.Mutex
	acked := 0
	var wg sync.WaitGroup
	retry := func(f func() error) error {
		for {
			err := f()
			var oe *tablestore.OtsError
			if errors.As(err, &oe) && (oe.Code == "OTSRowOperationConflict" || oe.Code == "OTSSessionBusy") {
				time.Sleep(time.Millisecond)
				continue
			}
			return err
		}
	}
	errc := make(chan error, 3*workers)
	for w := range workers {
		wg.Add(2)
		go func() { // transactions: counter and its shadow, both += 1
			defer wg.Done()
			c := sdkClient(e.srv, e.srv.AccessKeySecret())
			ee := &env{t: t, srv: e.srv, clock: e.clock, c: c}
			for range rounds {
				var id string
				if err := retry(func() (err error) { id, err = ee.start("t", "a"); return err }); err != nil {
					errc <- err
					return
				}
				q := &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("p", "a", "r", int64(1)), MaxVersion: 1, TransactionId: &id}
				resp, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: q})
				if err != nil {
					errc <- err
					return
				}
				n := colMap(resp.Columns)["v"][0].(int64)
				for _, r := range []int64{1, 2} {
					if err := ee.txnPut(id, "a", r, n+1, tablestore.RowExistenceExpectation_EXPECT_EXIST); err != nil {
						errc <- err
						return
					}
				}
				if err := ee.commit(id); err != nil {
					errc <- err
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		}()
		go func() { // writers without a transaction: both += 1, in one atomic batch
			defer wg.Done()
			c := sdkClient(e.srv, e.srv.AccessKeySecret())
			for range rounds {
				req := &tablestore.BatchWriteRowRequest{IsAtomic: true}
				for _, r := range []int64{1, 2} {
					upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("p", "a", "r", r)}
					upd.IncrementColumn("v", 1)
					upd.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
					req.AddRowChange(upd)
				}
				if err := retry(func() error {
					res, err := c.BatchWriteRow(req)
					if err == nil && !res.TableToRowsResult["t"][0].IsSucceed {
						return fmt.Errorf("atomic increment: %+v", res.TableToRowsResult["t"][0].Error)
					}
					return err
				}); err != nil {
					errc <- err
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
		}()
		_ = w
	}
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() { // a reader: the counter and its shadow are always equal
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rows, err := e.txnRange("", "a", false, 0)
			if err != nil {
				errc <- err
				return
			}
			if len(rows) != 2 || strings.TrimPrefix(rows[0], "1=") != strings.TrimPrefix(rows[1], "2=") {
				errc <- fmt.Errorf("a reader saw %v", rows)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if got, want := e.mustRange("", "a", false, 0), fmt.Sprintf("1=%d 2=%d", acked, acked); got != want {
		t.Fatalf("after %d acknowledged increments: %s", acked, got)
	}
	if acked != 2*workers*rounds {
		t.Fatalf("%d increments acknowledged, want %d", acked, 2*workers*rounds)
	}
}

// gatedBackend blocks the Write of one row until gate is closed.
type gatedBackend struct {
	*localengine.Engine
	row     int64
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedBackend) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if len(req.Key) == 2 && req.Key[1].Value.Equal(tablekit.Integer(g.row)) {
		close(g.entered)
		<-g.gate
	}
	return g.Engine.Write(ctx, req)
}

// TestTxnStartWaitsForWrites: a transaction starts only once the writes
// without one being applied to its partition key are done, and from the
// moment it waits, new ones are refused.
func TestTxnStartWaitsForWrites(t *testing.T) {
	g := &gatedBackend{Engine: localengine.New(), row: 1, entered: make(chan struct{}), gate: make(chan struct{})}
	e := txnEnv(t, Options{Backend: g})
	put := make(chan error, 1)
	go func() { put <- e.txnPut("", "a", 1, "before", tablestore.RowExistenceExpectation_IGNORE) }()
	<-g.entered
	type started struct {
		id  string
		err error
	}
	start := make(chan started, 1)
	go func() {
		id, err := e.start("t", "a")
		start <- started{id, err}
	}()
	for owned := false; !owned; {
		e.srv.txns.mu.Lock()
		p := e.srv.txns.parts[partID("t", tablekit.KeyPart{Name: "p", Value: tablekit.String("a")})]
		owned = p != nil && p.owner != nil
		e.srv.txns.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	wantOTS(t, e.txnPut("", "a", 2, "during", tablestore.RowExistenceExpectation_IGNORE), 409, "OTSRowOperationConflict", "Data is being modified by the other request.")
	select {
	case s := <-start:
		t.Fatalf("StartLocalTransaction answered (%v) while a write to its partition key was being applied", s)
	default:
	}
	close(g.gate)
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	s := <-start
	if s.err != nil {
		t.Fatal(s.err)
	}
	if got := e.txnGet(s.id, "a", 1); got != "before" {
		t.Errorf("the transaction reads %v", got)
	}
	if err := e.commit(s.id); err != nil {
		t.Fatal(err)
	}
}

// TestTxnEndsWithTable: deleting a table, or the admin reset, aborts its
// transactions and frees their partition keys for the next table of
// that name.
func TestTxnEndsWithTable(t *testing.T) {
	e := txnEnv(t, Options{})
	for _, end := range []string{"DeleteTable", "Reset"} {
		id := e.mustStart("t", "a")
		if err := e.txnPut(id, "a", 1, "x", tablestore.RowExistenceExpectation_IGNORE); err != nil {
			t.Fatal(err)
		}
		if end == "DeleteTable" {
			if _, err := e.c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "t"}); err != nil {
				t.Fatal(err)
			}
		} else if _, err := e.srv.Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.createTable("t", 1, pkDef{"p", tString}, pkDef{"r", tInteger})
		if err := e.txnPut("", "a", 2, "y", tablestore.RowExistenceExpectation_IGNORE); err != nil {
			t.Fatalf("after %s: %v", end, err)
		}
		wantOTS(t, e.commit(id), 404, "OTSSessionNotExist", "Session not exist or may be timeout.")
		if got := e.mustRange("", "a", false, 0); got != "2=y" {
			t.Errorf("after %s: %q", end, got)
		}
	}
}
