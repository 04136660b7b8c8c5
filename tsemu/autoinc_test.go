package tsemu

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// createAuto creates table (p STRING, id INTEGER AUTO_INCREMENT).
func (e *env) createAuto(table string, indexes ...*tablestore.IndexMeta) {
	e.t.Helper()
	meta := &tablestore.TableMeta{TableName: table}
	meta.AddPrimaryKeyColumn("p", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumnOption("id", tablestore.PrimaryKeyType_INTEGER, tablestore.AUTO_INCREMENT)
	if len(indexes) > 0 {
		meta.AddDefinedColumn("c", tablestore.DefinedColumn_STRING)
	}
	if _, err := e.c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1),
		ReservedThroughput: &tablestore.ReservedThroughput{}, IndexMetas: indexes}); err != nil {
		e.t.Fatalf("CreateTable %s: %v", table, err)
	}
}

// autoKey is the key (p=part, id=AUTO_INCREMENT).
func autoKey(part string) *tablestore.PrimaryKey {
	k := pk("p", part)
	k.AddPrimaryKeyColumnWithAutoIncrement("id")
	return k
}

// assigned checks that k is (p=part, id=n) with n > after and returns n.
func assigned(t *testing.T, k tablestore.PrimaryKey, part string, after int64) int64 {
	t.Helper()
	if len(k.PrimaryKeys) != 2 || k.PrimaryKeys[0].ColumnName != "p" || k.PrimaryKeys[0].Value != part || k.PrimaryKeys[1].ColumnName != "id" {
		t.Fatalf("returned key %v, want (p=%s, id=…)", keyString(k), part)
	}
	n, ok := k.PrimaryKeys[1].Value.(int64)
	if !ok || n <= after {
		t.Fatalf("returned key %v: id must be an integer > %d", keyString(k), after)
	}
	return n
}

func keyString(k tablestore.PrimaryKey) string {
	s := "("
	for i, c := range k.PrimaryKeys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%v", c.ColumnName, c.Value)
	}
	return s + ")"
}

func (e *env) putAuto(table, part string, cond tablestore.RowExistenceExpectation, cols ...any) (*tablestore.PutRowResponse, error) {
	ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: autoKey(part)}
	for i := 0; i < len(cols); i += 2 {
		ch.AddColumn(cols[i].(string), cols[i+1])
	}
	ch.SetCondition(cond)
	ch.SetReturnPk()
	return e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
}

func TestAutoIncrementCreateDescribe(t *testing.T) {
	e := newEnv(t)
	e.createAuto("t")
	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if s := d.TableMeta.SchemaEntry; len(s) != 2 || s[0].Option != nil || s[1].Option == nil || *s[1].Option != tablestore.AUTO_INCREMENT {
		t.Fatalf("DescribeTable schema: %+v %+v, want id AUTO_INCREMENT", *s[0], *s[1])
	}

	create := func(c *tablestore.TableStoreClient, cols ...func(*tablestore.TableMeta)) error {
		meta := &tablestore.TableMeta{TableName: "x"}
		for _, f := range cols {
			f(meta)
		}
		_, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}})
		return err
	}
	str := func(n string) func(*tablestore.TableMeta) {
		return func(m *tablestore.TableMeta) { m.AddPrimaryKeyColumn(n, tablestore.PrimaryKeyType_STRING) }
	}
	auto := func(n string, typ tablestore.PrimaryKeyType) func(*tablestore.TableMeta) {
		return func(m *tablestore.TableMeta) { m.AddPrimaryKeyColumnOption(n, typ, tablestore.AUTO_INCREMENT) }
	}
	wantOTS(t, create(e.c, auto("a", tablestore.PrimaryKeyType_INTEGER), str("b")), 400, "OTSParameterInvalid",
		"AUTO_INCREMENT primary key can not be the partition key: column 'a' of table 'x'.")
	wantOTS(t, create(e.c, str("a"), auto("b", tablestore.PrimaryKeyType_STRING)), 400, "OTSParameterInvalid",
		"AUTO_INCREMENT primary key must be integer: column 'b' of table 'x'.")
	wantOTS(t, create(e.c, str("a"), auto("b", tablestore.PrimaryKeyType_INTEGER), auto("c", tablestore.PrimaryKeyType_INTEGER)), 400, "OTSParameterInvalid",
		"At most one AUTO_INCREMENT primary key is allowed in table 'x': 'b' and 'c'.")

	// Over a Backend without auto-increment keys (only the Backend
	// interface's methods: no Capabilities), refused as unsupported.
	srv, err := NewServer(Options{Backend: struct{ tablekit.Backend }{localengine.New()}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	wantOTS(t, create(sdkClient(srv, srv.AccessKeySecret()), str("a"), auto("b", tablestore.PrimaryKeyType_INTEGER)), 400, "OTSParameterInvalid",
		"AUTO_INCREMENT primary key (column 'b' of table 'x') over a backend without auto-increment keys (tablekit Capabilities.AutoIncrement is false) is not supported by the tablekit Tablestore emulator.")
	if names, err := srv.client.ListTables(t.Context()); err != nil || len(names) != 0 {
		t.Fatalf("tables after the refusal: %v %v", names, err)
	}
}

func TestAutoIncrementPutRow(t *testing.T) {
	e := newEnv(t)
	e.createAuto("t")
	var last int64
	var keys []tablestore.PrimaryKey
	for i := range 5 {
		resp, err := e.putAuto("t", "a", tablestore.RowExistenceExpectation_IGNORE, "v", int64(i))
		if err != nil {
			t.Fatalf("PutRow %d: %v", i, err)
		}
		last = assigned(t, resp.PrimaryKey, "a", last)
		keys = append(keys, resp.PrimaryKey)
	}
	// Each row is read with the key the put returned.
	for i, k := range keys {
		r := e.get("t", &k, 1)
		if got := colMap(r.Columns)["v"]; len(got) != 1 || got[0] != int64(i) {
			t.Fatalf("row %s: v = %v, want %d", keyString(k), got, i)
		}
	}
	// Another partition key; and without RT_PK no key is returned.
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: autoKey("b")}
	ch.AddColumn("v", int64(9))
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	resp, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	if err != nil || len(resp.PrimaryKey.PrimaryKeys) != 0 {
		t.Fatalf("PutRow without RT_PK: %v, key %v", err, keyString(resp.PrimaryKey))
	}
	if rows := e.scanAll("t", "p", "id"); len(rows) != 6 {
		t.Fatalf("%d rows, want 6: %q", len(rows), rows)
	}

	// As on the service, such a write takes no condition; nothing written.
	_, err = e.putAuto("t", "a", tablestore.RowExistenceExpectation_EXPECT_EXIST, "v", int64(0))
	wantOTS(t, err, 400, "OTSParameterInvalid", "Invalid expect:EXPECT_EXIST when modify row with pk auto increment")
	_, err = e.putAuto("t", "a", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST, "v", int64(0))
	wantOTS(t, err, 400, "OTSParameterInvalid", "Invalid expect:EXPECT_NOT_EXIST when modify row with pk auto increment")
	up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: autoKey("a")}
	up.PutColumn("v", int64(0))
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	up.SetColumnCondition(tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(0)))
	_, err = e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Can't set condition when modify row with pk auto increment.")
	if rows := e.scanAll("t", "p", "id"); len(rows) != 6 {
		t.Fatalf("%d rows, want 6: %q", len(rows), rows)
	}
}

// TestAutoIncrementRefusedElsewhere: the placeholder outside the key of
// a row to put or update fails the key's type check.
func TestAutoIncrementRefusedElsewhere(t *testing.T) {
	e := newEnv(t)
	e.createAuto("t")
	e.createTable("plain", 1, pkDef{"p", tablestore.PrimaryKeyType_STRING}, pkDef{"id", tablestore.PrimaryKeyType_INTEGER})
	const msg = "Validate PK type fail. Input: VT_AUTO_INCREMENT, Meta: VT_INTEGER."

	_, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: autoKey("a"), MaxVersion: 1}})
	wantOTS(t, err, 400, "OTSInvalidPK", msg)
	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: autoKey("a")}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del})
	wantOTS(t, err, 400, "OTSInvalidPK", msg)
	_, err = e.putAuto("plain", "a", tablestore.RowExistenceExpectation_IGNORE, "v", int64(1))
	wantOTS(t, err, 400, "OTSInvalidPK", msg)
	bg := &tablestore.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
	bg.AddRow(autoKey("a"))
	res, err := e.c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{bg}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.TableToRowsResult["t"]; len(r) != 1 || r[0].IsSucceed || r[0].Error.Code != "OTSInvalidPK" || r[0].Error.Message != msg {
		t.Fatalf("BatchGetRow: %+v", r)
	}
	if rows := e.scanAll("t", "p", "id"); len(rows) != 0 {
		t.Fatalf("rows written: %q", rows)
	}
}

func TestAutoIncrementUpdateAndBatch(t *testing.T) {
	e := newEnv(t)
	e.createAuto("t")
	// UpdateRow creates the row (the SDK's UpdateRow reads no key back).
	up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: autoKey("a")}
	up.PutColumn("v", int64(1))
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up}); err != nil {
		t.Fatal(err)
	}
	if rows := e.scanAll("t", "p", "id"); len(rows) != 1 {
		t.Fatalf("%d rows after UpdateRow, want 1: %q", len(rows), rows)
	}

	for _, atomic := range []bool{false, true} {
		t.Run(fmt.Sprint("atomic=", atomic), func(t *testing.T) {
			before := len(e.scanAll("t", "p", "id"))
			req := &tablestore.BatchWriteRowRequest{IsAtomic: atomic}
			for i := range 3 {
				put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: autoKey("b")}
				put.AddColumn("v", int64(i))
				put.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
				put.SetReturnPk()
				req.AddRowChange(put)
			}
			upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: autoKey("b")}
			upd.PutColumn("v", int64(3))
			upd.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			upd.ReturnType = tablestore.ReturnType_RT_PK
			req.AddRowChange(upd)
			resp, err := e.c.BatchWriteRow(req)
			if err != nil {
				t.Fatal(err)
			}
			rows := resp.TableToRowsResult["t"]
			if len(rows) != 4 {
				t.Fatalf("%d results, want 4", len(rows))
			}
			seen := map[int64]bool{}
			for i, r := range rows {
				if !r.IsSucceed {
					t.Fatalf("row %d: %+v", i, r.Error)
				}
				n := assigned(t, r.PrimaryKey, "b", 0)
				if seen[n] {
					t.Fatalf("id %d assigned twice", n)
				}
				seen[n] = true
				if got := colMap(e.get("t", &r.PrimaryKey, 1).Columns)["v"]; len(got) != 1 || got[0] != int64(i) {
					t.Fatalf("row %s: v = %v, want %d", keyString(r.PrimaryKey), got, i)
				}
			}
			if n := len(e.scanAll("t", "p", "id")); n != before+4 {
				t.Fatalf("%d rows, want %d", n, before+4)
			}
		})
	}

	// A failed atomic batch writes none of its rows.
	before := len(e.scanAll("t", "p", "id"))
	req := &tablestore.BatchWriteRowRequest{IsAtomic: true}
	ok := &tablestore.PutRowChange{TableName: "t", PrimaryKey: autoKey("c")}
	ok.AddColumn("v", int64(1))
	ok.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	bad := &tablestore.PutRowChange{TableName: "t", PrimaryKey: autoKey("c")}
	bad.AddColumn("v", int64(2))
	bad.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	req.AddRowChange(ok)
	req.AddRowChange(bad)
	resp, err := e.c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.TableToRowsResult["t"]; len(r) != 2 || r[0].IsSucceed || r[1].IsSucceed || r[1].Error.Message != "Invalid expect:EXPECT_EXIST when modify row with pk auto increment" {
		t.Fatalf("failed atomic batch: %+v", r)
	}
	if n := len(e.scanAll("t", "p", "id")); n != before {
		t.Fatalf("%d rows after a failed atomic batch, want %d", n, before)
	}
}

// TestAutoIncrementIndexed: a table with a secondary index keeps its index
// in step with rows whose key the Backend assigned.
func TestAutoIncrementIndexed(t *testing.T) {
	e := newEnv(t)
	e.createAuto("t", &tablestore.IndexMeta{IndexName: "by_c", Primarykey: []string{"c"}, IndexType: tablestore.IT_GLOBAL_INDEX})
	resp, err := e.putAuto("t", "a", tablestore.RowExistenceExpectation_IGNORE, "c", "x")
	if err != nil {
		t.Fatal(err)
	}
	id := assigned(t, resp.PrimaryKey, "a", 0)
	want := fmt.Sprintf("[x a %d] | map[]", id)
	if got := e.scanAll("by_c", "c", "p", "id"); len(got) != 1 || got[0] != want {
		t.Fatalf("index rows %q, want [%s]", got, want)
	}
}

// autoIncrementProbe is the file of testdata/node that needs auto-increment
// keys.
const autoIncrementProbe = "autoincrement.test.js"

// emulatorAutoIncrement reports whether the emulator emu serves
// auto-increment key columns (its Backend declares
// tablekit.Capabilities.AutoIncrement): it creates, then deletes, a table
// with one. A refusal must be the emulator's refusal for a Backend without
// them; any other answer fails the test. want true fails the test on that
// refusal too.
func emulatorAutoIncrement(t *testing.T, emu *emulator, want bool) bool {
	t.Helper()
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	c := tablestore.NewClientWithConfig(emu.endpoint, DefaultInstanceName, DefaultAccessKeyID, emu.secret, "", cfg)
	const table = "tstest_autoinc_capability"
	meta := &tablestore.TableMeta{TableName: table}
	meta.AddPrimaryKeyColumn("p", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumnOption("id", tablestore.PrimaryKeyType_INTEGER, tablestore.AUTO_INCREMENT)
	_, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}})
	if err != nil {
		var oe *tablestore.OtsError
		if !errors.As(err, &oe) || oe.Code != "OTSParameterInvalid" || !strings.Contains(oe.Message, "Capabilities.AutoIncrement is false") {
			t.Fatalf("CreateTable with an AUTO_INCREMENT key: %v", err)
		}
		if want {
			t.Fatalf("the emulator's backend has no auto-increment keys: %v", err)
		}
		t.Logf("the emulator's backend has no auto-increment keys: %s", oe.Message)
		return false
	}
	if _, err := c.DeleteTable(&tablestore.DeleteTableRequest{TableName: table}); err != nil {
		t.Fatal(err)
	}
	return true
}

// TestAutoIncrementNoLocalTransactions: as on the service, a table with an
// auto-increment key has no local transactions.
func TestAutoIncrementNoLocalTransactions(t *testing.T) {
	e := txnEnv(t, Options{})
	e.createAuto("auto")
	_, err := e.start("auto", "a")
	wantOTS(t, err, 400, "OTSParameterInvalid", "Local transactions are not supported on table 'auto', whose primary key column 'id' is AUTO_INCREMENT.")
	if _, err := e.start("t", "a"); err != nil { // a table without one has them
		t.Fatal(err)
	}
}
