package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"fmt"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
)

func TestBatchGetRow(t *testing.T) {
	e := newEnv(t)
	e.createTable("a", 1, pkDef{"k", tString})
	e.createTable("b", 1, pkDef{"id", tInteger})
	e.put("a", pk("k", "x"), "v", int64(1))
	e.put("a", pk("k", "z"), "v", int64(3))
	e.put("b", pk("id", int64(7)), "v", "seven")

	ca := &tablestore.MultiRowQueryCriteria{TableName: "a", MaxVersion: 1}
	ca.AddRow(pk("k", "z"))
	ca.AddRow(pk("k", "missing"))
	ca.AddRow(pk("wrong", "x")) // per-row OTSInvalidPK
	ca.AddRow(pk("k", "x"))
	cb := &tablestore.MultiRowQueryCriteria{TableName: "b", MaxVersion: 1}
	cb.AddRow(pk("id", int64(7)))
	// A missing table fails the whole request, as the service documents.
	cn := &tablestore.MultiRowQueryCriteria{TableName: "nope", MaxVersion: 1}
	cn.AddRow(pk("k", "x"))
	_, err := e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{ca, cb, cn}})
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")
	r, err := e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{ca, cb}})
	if err != nil {
		t.Fatal(err)
	}
	ra := r.TableToRowsResult["a"]
	if len(ra) != 4 {
		t.Fatalf("table a: %d results", len(ra))
	}
	if !ra[0].IsSucceed || colMap(ra[0].Columns)["v"][0] != int64(3) || ra[0].PrimaryKey.PrimaryKeys[0].Value != "z" {
		t.Errorf("a[0] = %+v", ra[0])
	}
	if !ra[1].IsSucceed || len(ra[1].Columns) != 0 || len(ra[1].PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("a[1] (missing) = %+v", ra[1])
	}
	if ra[2].IsSucceed || ra[2].Error.Code != "OTSInvalidPK" || ra[2].Error.Message != "Validate PK name fail. Input: wrong, Meta: k." {
		t.Errorf("a[2] = %+v", ra[2])
	}
	if !ra[3].IsSucceed || colMap(ra[3].Columns)["v"][0] != int64(1) {
		t.Errorf("a[3] = %+v", ra[3])
	}
	if rb := r.TableToRowsResult["b"]; len(rb) != 1 || !rb[0].IsSucceed || colMap(rb[0].Columns)["v"][0] != "seven" {
		t.Errorf("b = %+v", rb)
	}

	big := &tablestore.MultiRowQueryCriteria{TableName: "a", MaxVersion: 1}
	for i := 0; i < 101; i++ {
		big.AddRow(pk("k", fmt.Sprint(i)))
	}
	_, err = e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{big}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Rows count exceeds the upper limit: 100.")
	big.PrimaryKey = big.PrimaryKey[:100]
	if _, err := e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{big}}); err != nil {
		t.Fatalf("100 rows: %v", err)
	}
	e.call("BatchGetRow", &otsprotocol.BatchGetRowRequest{}).want(t, 400, "OTSParameterInvalid", "No row specified in the request of BatchGetRow.")
	dup := &tablestore.MultiRowQueryCriteria{TableName: "a", MaxVersion: 1}
	dup.AddRow(pk("k", "x"))
	dup.AddRow(pk("k", "x"))
	_, err = e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{dup}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "The input parameter is invalid.")
}

func TestBatchWriteRow(t *testing.T) {
	e := newEnv(t)
	e.createTable("a", 1, pkDef{"k", tString})
	e.put("a", pk("k", "del"), "v", int64(1))
	e.put("a", pk("k", "cnt"), "n", int64(10))
	e.put("a", pk("k", "exists"), "v", int64(0))

	req := &tablestore.BatchWriteRowRequest{}
	p := &tablestore.PutRowChange{TableName: "a", PrimaryKey: pk("k", "new")}
	p.AddColumn("v", "hello")
	p.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
	p.SetReturnPk()
	req.AddRowChange(p)
	failing := &tablestore.PutRowChange{TableName: "a", PrimaryKey: pk("k", "exists")}
	failing.AddColumn("v", int64(2))
	failing.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST) // exists: fails
	req.AddRowChange(failing)
	u := &tablestore.UpdateRowChange{TableName: "a", PrimaryKey: pk("k", "cnt")}
	u.IncrementColumn("n", 5)
	u.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	u.SetReturnIncrementValue()
	u.AppendIncrementColumnToReturn("n")
	req.AddRowChange(u)
	badKey := &tablestore.DeleteRowChange{TableName: "a", PrimaryKey: pk("k", int64(1))}
	badKey.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(badKey)
	d := &tablestore.DeleteRowChange{TableName: "a", PrimaryKey: pk("k", "del")}
	d.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	req.AddRowChange(d)
	missing := &tablestore.PutRowChange{TableName: "nope", PrimaryKey: pk("k", "x")}
	missing.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(missing)
	// A missing table fails the whole request, as the service documents,
	// and nothing is written.
	_, err := e.c.BatchWriteRow(req)
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")
	if g := e.get("a", pk("k", "new"), 1); len(g.Columns) != 0 {
		t.Fatalf("a refused batch wrote %+v", g.Columns)
	}
	delete(req.RowChangesGroupByTable, "nope")

	r, err := e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	ra := r.TableToRowsResult["a"]
	if len(ra) != 5 {
		t.Fatalf("%d results for table a", len(ra))
	}
	if !ra[0].IsSucceed || len(ra[0].PrimaryKey.PrimaryKeys) != 1 || ra[0].PrimaryKey.PrimaryKeys[0].Value != "new" {
		t.Errorf("put with RT_PK = %+v", ra[0])
	}
	if ra[1].IsSucceed || ra[1].Error.Code != "OTSConditionCheckFail" || ra[1].Error.Message != "Row exists which is expected nonexistent" {
		t.Errorf("failing put = %+v", ra[1])
	}
	if !ra[2].IsSucceed || len(ra[2].Columns) != 1 || ra[2].Columns[0].Value != int64(15) {
		t.Errorf("increment = %+v", ra[2])
	}
	if ra[3].IsSucceed || ra[3].Error.Code != "OTSInvalidPK" || ra[3].Error.Message != "Validate PK type fail. Input: VT_INTEGER, Meta: VT_STRING." {
		t.Errorf("bad key = %+v", ra[3])
	}
	if !ra[4].IsSucceed {
		t.Errorf("delete = %+v", ra[4])
	}
	if v := colMap(e.get("a", pk("k", "new"), 1).Columns)["v"]; len(v) != 1 || v[0] != "hello" {
		t.Errorf("new = %v", v)
	}
	if got := e.get("a", pk("k", "del"), 1); len(got.Columns) != 0 {
		t.Errorf("deleted row still there: %+v", got.Columns)
	}

	// Limits and request-wide errors.
	over := &tablestore.BatchWriteRowRequest{}
	for i := 0; i < 201; i++ {
		c := &tablestore.PutRowChange{TableName: "a", PrimaryKey: pk("k", fmt.Sprint("r", i))}
		c.AddColumn("v", int64(i))
		c.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		over.AddRowChange(c)
	}
	_, err = e.c.BatchWriteRow(over)
	wantOTS(t, err, 400, "OTSParameterInvalid", "Rows count exceeds the upper limit: 200.")
	if got := e.get("a", pk("k", "r0"), 1); len(got.Columns) != 0 {
		t.Fatal("a refused batch wrote a row")
	}
	over.RowChangesGroupByTable["a"] = over.RowChangesGroupByTable["a"][:200]
	if _, err := e.c.BatchWriteRow(over); err != nil {
		t.Fatalf("200 rows: %v", err)
	}
	e.call("BatchWriteRow", &otsprotocol.BatchWriteRowRequest{}).want(t, 400, "OTSParameterInvalid", "No row is specified in BatchWriteRow.")
	dup := &tablestore.BatchWriteRowRequest{}
	for i := 0; i < 2; i++ {
		c := &tablestore.PutRowChange{TableName: "a", PrimaryKey: pk("k", "same")}
		c.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		dup.AddRowChange(c)
	}
	_, err = e.c.BatchWriteRow(dup)
	wantOTS(t, err, 400, "OTSParameterInvalid", "The input parameter is invalid.")
}

// TestBatchOrderOnWire checks on the wire that results come back in
// request order, tables and rows, which the SDK's partial retry needs.
func TestBatchOrderOnWire(t *testing.T) {
	e := newEnv(t)
	e.createTable("a", 1, pkDef{"k", tString})
	e.createTable("b", 1, pkDef{"k", tString})
	var req otsprotocol.BatchWriteRowRequest
	for _, table := range []string{"b", "a"} {
		tr := &otsprotocol.TableInBatchWriteRowRequest{TableName: proto.String(table)}
		for i := 0; i < 5; i++ {
			key := pk("k", fmt.Sprint(i))
			if i == 2 {
				key = pk("x", "bad")
			}
			ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: key}
			ch.AddColumn("v", int64(i))
			tr.Rows = append(tr.Rows, &otsprotocol.RowInBatchWriteRowRequest{
				Type: otsprotocol.OperationType_PUT.Enum(), RowChange: ch.Serialize(),
				Condition:     &otsprotocol.Condition{RowExistence: otsprotocol.RowExistenceExpectation_IGNORE.Enum()},
				ReturnContent: &otsprotocol.ReturnContent{ReturnType: otsprotocol.ReturnType_RT_PK.Enum()},
			})
		}
		req.Tables = append(req.Tables, tr)
	}
	raw := e.call("BatchWriteRow", &req)
	var resp otsprotocol.BatchWriteRowResponse
	if err := proto.Unmarshal(raw.body, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Tables) != 2 || resp.Tables[0].GetTableName() != "b" || resp.Tables[1].GetTableName() != "a" {
		t.Fatalf("tables out of order: %v", resp.Tables)
	}
	for _, tr := range resp.Tables {
		for i, row := range tr.Rows {
			if (i == 2) == row.GetIsOk() {
				t.Errorf("%s row %d: is_ok %v", tr.GetTableName(), i, row.GetIsOk())
			}
			if i != 2 && row.Consumed == nil {
				t.Errorf("%s row %d: no consumed", tr.GetTableName(), i)
			}
		}
	}
}

// TestTimeRangeFindsRowWithoutCells: a read with a time_range and no
// columns_to_get answers an existing row that has no cell in the range as
// found, with its key and no columns (the Go SDK's own TestBatchGetRow
// asserts this of the service); with columns_to_get the row is absent.
// GetRow and BatchGetRow alike.
func TestTimeRangeFindsRowWithoutCells(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	e.put("t", pk("k", "x"), "v", int64(1))
	later := &tablestore.TimeRange{Start: e.now() + 10000, End: e.now() + 20000}

	g, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: pk("k", "x"), TimeRange: later}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.PrimaryKey.PrimaryKeys) != 1 || len(g.Columns) != 0 {
		t.Errorf("GetRow with a time_range only: key %v, %d columns; want the key and 0 columns", g.PrimaryKey.PrimaryKeys, len(g.Columns))
	}
	g, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: pk("k", "x"), TimeRange: later, ColumnsToGet: []string{"v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.PrimaryKey.PrimaryKeys) != 0 || len(g.Columns) != 0 {
		t.Errorf("GetRow with a time_range and columns_to_get: key %v, %d columns; want absent", g.PrimaryKey.PrimaryKeys, len(g.Columns))
	}

	batch := func(cols ...string) *tablestore.RowResult {
		t.Helper()
		c := &tablestore.MultiRowQueryCriteria{TableName: "t", TimeRange: later, ColumnsToGet: cols}
		c.AddRow(pk("k", "x"))
		r, err := e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{c}})
		if err != nil {
			t.Fatal(err)
		}
		rows := r.TableToRowsResult["t"]
		if len(rows) != 1 || !rows[0].IsSucceed {
			t.Fatalf("BatchGetRow: %+v", rows)
		}
		return &rows[0]
	}
	if r := batch(); len(r.PrimaryKey.PrimaryKeys) != 1 || len(r.Columns) != 0 {
		t.Errorf("BatchGetRow with a time_range only: key %v, %d columns; want the key and 0 columns", r.PrimaryKey.PrimaryKeys, len(r.Columns))
	}
	if r := batch("v"); len(r.PrimaryKey.PrimaryKeys) != 0 || len(r.Columns) != 0 {
		t.Errorf("BatchGetRow with a time_range and columns_to_get: key %v, %d columns; want absent", r.PrimaryKey.PrimaryKeys, len(r.Columns))
	}
}
