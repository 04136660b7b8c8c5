package tsemu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// atomicPut is a put of row (p, s) with column v, under existence cond.
func atomicPut(table, p, s string, v int64, cond tablestore.RowExistenceExpectation) *tablestore.PutRowChange {
	c := &tablestore.PutRowChange{TableName: table, PrimaryKey: pk("p", p, "s", s)}
	c.AddColumn("v", v)
	c.SetCondition(cond)
	return c
}

// wantAtomicFailed checks that every row of resp failed, row failAt with
// code and msg and the others with code and a message naming failAt.
func wantAtomicFailed(t *testing.T, resp *tablestore.BatchWriteRowResponse, table string, failAt int, code, msg string) {
	t.Helper()
	rows := resp.TableToRowsResult[table]
	if len(rows) == 0 {
		t.Fatalf("no result for table %s", table)
	}
	for i, r := range rows {
		if r.IsSucceed {
			t.Fatalf("row %d succeeded in a failed atomic batch", i)
		}
		if r.Error.Code != code {
			t.Fatalf("row %d: code %s, want %s", i, r.Error.Code, code)
		}
		if i == failAt {
			if r.Error.Message != msg {
				t.Fatalf("failing row %d: message %q, want %q", i, r.Error.Message, msg)
			}
			continue
		}
		if want := fmt.Sprintf("%s%d of table '%s'", atomicNotApplied, failAt, table); !strings.HasPrefix(r.Error.Message, want) {
			t.Fatalf("row %d: message %q, want it to begin %q", i, r.Error.Message, want)
		}
	}
}

func TestAtomicBatchWriteRow(t *testing.T) {
	e := newEnv(t)
	e.createTable("a", 1, pkDef{"p", tablestore.PrimaryKeyType_STRING}, pkDef{"s", tablestore.PrimaryKeyType_STRING})
	e.createTable("b", 1, pkDef{"p", tablestore.PrimaryKeyType_STRING}, pkDef{"s", tablestore.PrimaryKeyType_STRING})
	e.put("a", pk("p", "x", "s", "held"), "v", int64(7))
	v := func(p, s string) (int64, bool) {
		r := e.get("a", pk("p", p, "s", s), 1)
		if len(r.Columns) == 0 {
			return 0, false
		}
		return r.Columns[0].Value.(int64), true
	}

	// A condition failing at each index: every row fails, nothing is written.
	for at := 0; at < 3; at++ {
		req := &tablestore.BatchWriteRowRequest{IsAtomic: true}
		for i := 0; i < 3; i++ {
			s, cond := fmt.Sprint("n", i), tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST
			if i == at {
				s = "held" // exists: EXPECT_NOT_EXIST fails
			}
			req.AddRowChange(atomicPut("a", "x", s, int64(100+i), cond))
		}
		resp, err := e.c.BatchWriteRow(req)
		if err != nil {
			t.Fatalf("failing at %d: %v", at, err)
		}
		wantAtomicFailed(t, resp, "a", at, errRowExists.code, errRowExists.msg)
		for i := 0; i < 3; i++ {
			if _, ok := v("x", fmt.Sprint("n", i)); ok {
				t.Fatalf("failing at %d: row n%d was written", at, i)
			}
		}
		if got, _ := v("x", "held"); got != 7 {
			t.Fatalf("failing at %d: held row is %d, want 7", at, got)
		}
	}

	// Another partition key: every row fails, the call itself succeeds
	// (the Go SDK's TestAtomicBatchWriteRowWithDiffPartitionKey).
	req := &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "n0", 1, tablestore.RowExistenceExpectation_IGNORE))
	req.AddRowChange(atomicPut("a", "y", "n1", 1, tablestore.RowExistenceExpectation_IGNORE))
	resp, err := e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	wantAtomicFailed(t, resp, "a", 1, "OTSParameterInvalid", "An atomic BatchWriteRow writes rows of one partition key: p=y is not p=x, the first row's.")
	if _, ok := v("x", "n0"); ok {
		t.Fatal("a batch across partition keys wrote a row")
	}

	// Two tables: every row fails.
	req = &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "n0", 1, tablestore.RowExistenceExpectation_IGNORE))
	req.AddRowChange(atomicPut("b", "x", "n0", 1, tablestore.RowExistenceExpectation_IGNORE))
	resp, err = e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"a", "b"} {
		for _, r := range resp.TableToRowsResult[table] {
			if r.IsSucceed || r.Error.Code != "OTSParameterInvalid" {
				t.Fatalf("table %s: a batch across tables answered %+v", table, r)
			}
		}
	}
	if _, ok := v("x", "n0"); ok {
		t.Fatal("a batch across tables wrote a row")
	}

	// A row's own invalid key fails every row.
	req = &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "n0", 1, tablestore.RowExistenceExpectation_IGNORE))
	bad := &tablestore.PutRowChange{TableName: "a", PrimaryKey: pk("p", "x")}
	bad.AddColumn("v", int64(1))
	bad.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(bad)
	resp, err = e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	rows := resp.TableToRowsResult["a"]
	if len(rows) != 2 || rows[0].IsSucceed || rows[1].IsSucceed || !strings.HasPrefix(rows[0].Error.Message, atomicNotApplied+"1 ") {
		t.Fatalf("a batch with an invalid key answered %+v", rows)
	}
	if _, ok := v("x", "n0"); ok {
		t.Fatal("a batch with an invalid key wrote a row")
	}

	// Success: puts, an update with an increment returned, a delete.
	req = &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "n0", 1, tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST))
	up := &tablestore.UpdateRowChange{TableName: "a", PrimaryKey: pk("p", "x", "s", "held")}
	up.IncrementColumn("v", int64(5))
	up.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	up.SetReturnIncrementValue()
	up.AppendIncrementColumnToReturn("v")
	req.AddRowChange(up)
	del := &tablestore.DeleteRowChange{TableName: "a", PrimaryKey: pk("p", "x", "s", "gone")}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(del)
	resp, err = e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	rows = resp.TableToRowsResult["a"]
	for i, r := range rows {
		if !r.IsSucceed {
			t.Fatalf("row %d failed: %+v", i, r.Error)
		}
	}
	if len(rows) != 3 || len(rows[1].Columns) != 1 || rows[1].Columns[0].Value != int64(12) {
		t.Fatalf("update's returned increment: %+v", rows)
	}
	if got, _ := v("x", "n0"); got != 1 {
		t.Fatalf("n0 = %d, want 1", got)
	}
	if got, _ := v("x", "held"); got != 12 {
		t.Fatalf("held = %d, want 12", got)
	}

	// A row written again is applied in order (the Go SDK's
	// TestAtomicBatchWriteRowWithSamePartitionKey): put then update, put
	// then delete.
	req = &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "r0", 1, tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST))
	req.AddRowChange(atomicPut("a", "x", "r1", 1, tablestore.RowExistenceExpectation_IGNORE))
	up = &tablestore.UpdateRowChange{TableName: "a", PrimaryKey: pk("p", "x", "s", "r0")}
	up.DeleteColumn("v")
	up.PutColumn("w", int64(2))
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(up)
	del = &tablestore.DeleteRowChange{TableName: "a", PrimaryKey: pk("p", "x", "s", "r1")}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(del)
	resp, err = e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range resp.TableToRowsResult["a"] {
		if !r.IsSucceed {
			t.Fatalf("row %d of a batch writing rows twice failed: %+v", i, r.Error)
		}
	}
	if r := e.get("a", pk("p", "x", "s", "r0"), 1); len(r.Columns) != 1 || r.Columns[0].ColumnName != "w" || r.Columns[0].Value != int64(2) {
		t.Fatalf("r0 after put then update: %+v", r.Columns)
	}
	if _, ok := v("x", "r1"); ok {
		t.Fatal("r1 survived put then delete")
	}
	// ... but a later write of a row with a condition is refused, every row failing.
	req = &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "r2", 1, tablestore.RowExistenceExpectation_IGNORE))
	req.AddRowChange(atomicPut("a", "x", "r3", 1, tablestore.RowExistenceExpectation_IGNORE))
	del = &tablestore.DeleteRowChange{TableName: "a", PrimaryKey: pk("p", "x", "s", "r2")}
	del.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	req.AddRowChange(del)
	resp, err = e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	wantAtomicFailed(t, resp, "a", 2, "OTSParameterInvalid", "Writing a row again in an atomic BatchWriteRow with a condition or an increment is not supported by the tablekit Tablestore emulator.")
	if _, ok := v("x", "r3"); ok {
		t.Fatal("a refused atomic batch wrote a row")
	}

	// More rows than an atomic write holds: the whole call is refused.
	req = &tablestore.BatchWriteRowRequest{IsAtomic: true}
	for i := 0; i <= tablekit.MaxAtomicWrite; i++ {
		req.AddRowChange(atomicPut("a", "x", fmt.Sprint("m", i), 1, tablestore.RowExistenceExpectation_IGNORE))
	}
	_, err = e.c.BatchWriteRow(req)
	wantOTS(t, err, 400, "OTSParameterInvalid", "Rows count of an atomic BatchWriteRow exceeds the upper limit of the tablekit Tablestore emulator: 100.")
	if _, ok := v("x", "m0"); ok {
		t.Fatal("a refused atomic batch wrote a row")
	}
}

// noAtomic is a Backend that hides the local engine's optional
// interfaces, atomic writes among them.
type noAtomic struct{ tablekit.Backend }

// TestAtomicBatchWriteRowRefused checks that over a Backend without atomic
// writes is_atomic is refused as an unsupported feature, nothing written.
func TestAtomicBatchWriteRowRefused(t *testing.T) {
	b := noAtomic{localengine.New()}
	if tablekit.CapabilitiesOf(b).AtomicWrite {
		t.Fatal("the wrapper still declares atomic writes")
	}
	srv, err := NewServer(Options{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	e := &env{t: t, srv: srv, c: sdkClient(srv, srv.AccessKeySecret())}
	e.createTable("a", 1, pkDef{"p", tablestore.PrimaryKeyType_STRING}, pkDef{"s", tablestore.PrimaryKeyType_STRING})
	req := &tablestore.BatchWriteRowRequest{IsAtomic: true}
	req.AddRowChange(atomicPut("a", "x", "n0", 1, tablestore.RowExistenceExpectation_IGNORE))
	_, err = e.c.BatchWriteRow(req)
	wantOTS(t, err, 400, "OTSParameterInvalid", "Atomic BatchWriteRow (is_atomic) over a backend that cannot write several rows atomically (tablekit Capabilities.AtomicWrite is false) is not supported by the tablekit Tablestore emulator.")
	if r := e.get("a", pk("p", "x", "s", "n0"), 1); len(r.Columns) != 0 {
		t.Fatal("a refused atomic batch wrote a row")
	}
	req.IsAtomic = false
	if resp, err := e.c.BatchWriteRow(req); err != nil || !resp.TableToRowsResult["a"][0].IsSucceed {
		t.Fatalf("a plain batch over the same backend: %v", err)
	}
}
