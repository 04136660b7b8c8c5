package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit/internal/plainbuffer"
)

var (
	tString  = tablestore.PrimaryKeyType_STRING
	tInteger = tablestore.PrimaryKeyType_INTEGER
	tBinary  = tablestore.PrimaryKeyType_BINARY
)

func TestPutGetRoundTrip(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"s", tString}, pkDef{"i", tInteger}, pkDef{"b", tBinary})
	key := pk("s", "shop", "i", int64(-7), "b", []byte{0, 1, 0xff})
	e.put("t", key, "str", "héllo", "int", int64(math.MinInt64), "dbl", 2.5, "bool", true, "bin", []byte{9, 8}, "empty", "")
	r := e.get("t", key, 1)
	if len(r.PrimaryKey.PrimaryKeys) != 3 || r.PrimaryKey.PrimaryKeys[0].Value != "shop" || r.PrimaryKey.PrimaryKeys[1].Value != int64(-7) ||
		!bytes.Equal(r.PrimaryKey.PrimaryKeys[2].Value.([]byte), []byte{0, 1, 0xff}) {
		t.Fatalf("key = %+v", r.PrimaryKey.PrimaryKeys)
	}
	m := colMap(r.Columns)
	want := map[string]any{"str": "héllo", "int": int64(math.MinInt64), "dbl": 2.5, "bool": true, "empty": ""}
	for k, v := range want {
		if len(m[k]) != 1 || m[k][0] != v {
			t.Errorf("column %s = %v, want %v", k, m[k], v)
		}
	}
	if b, _ := m["bin"][0].([]byte); !bytes.Equal(b, []byte{9, 8}) {
		t.Errorf("bin = %v", m["bin"])
	}
	// Columns come in name order, each with the write's timestamp (the
	// server clock's now).
	var names []string
	for _, c := range r.Columns {
		names = append(names, c.ColumnName)
		if c.Timestamp != e.now() {
			t.Errorf("column %s timestamp %d, want %d", c.ColumnName, c.Timestamp, e.now())
		}
	}
	if strings.Join(names, ",") != "bin,bool,dbl,empty,int,str" {
		t.Errorf("column order %v", names)
	}

	// A missing row is no error and no row.
	r = e.get("t", pk("s", "other", "i", int64(1), "b", []byte{}), 1)
	if len(r.PrimaryKey.PrimaryKeys) != 0 || len(r.Columns) != 0 {
		t.Fatalf("missing row = %+v", r)
	}
	raw := e.call("GetRow", &otsprotocol.GetRowRequest{TableName: proto.String("t"), PrimaryKey: pk("s", "x", "i", int64(1), "b", []byte{}).Build(false), MaxVersions: proto.Int32(1)})
	var gr otsprotocol.GetRowResponse
	if err := proto.Unmarshal(raw.body, &gr); err != nil || gr.Row == nil || len(gr.Row) != 0 {
		t.Fatalf("missing row on the wire: %v, row %v", err, gr.Row)
	}

	// A key-only row exists.
	e.put("t", pk("s", "keyonly", "i", int64(0), "b", []byte{}))
	if r := e.get("t", pk("s", "keyonly", "i", int64(0), "b", []byte{}), 1); len(r.PrimaryKey.PrimaryKeys) != 3 || len(r.Columns) != 0 {
		t.Fatalf("key-only row = %+v", r)
	}

	// Projection: key columns always, only the named attribute columns.
	g, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: key, MaxVersion: 1, ColumnsToGet: []string{"int", "s", "nothere"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Columns) != 1 || g.Columns[0].ColumnName != "int" || len(g.PrimaryKey.PrimaryKeys) != 3 {
		t.Fatalf("projection = %+v %+v", g.PrimaryKey, g.Columns)
	}

	// PutRow replaces the row.
	e.put("t", key, "only", int64(1))
	if m := colMap(e.get("t", key, 1).Columns); len(m) != 1 || m["only"][0] != int64(1) {
		t.Fatalf("after replace: %v", m)
	}

	// DeleteRow.
	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: key}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del}); err != nil {
		t.Fatal(err)
	}
	if r := e.get("t", key, 1); len(r.Columns) != 0 || len(r.PrimaryKey.PrimaryKeys) != 0 {
		t.Fatalf("deleted row = %+v", r)
	}
}

func TestPrimaryKeyErrors(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"PK1", tString}, pkDef{"PK2", tInteger}, pkDef{"PK3", tBinary}, pkDef{"PK4", tString})
	full := func(pk1 any) *tablestore.PrimaryKey {
		return pk("PK1", pk1, "PK2", int64(1), "PK3", []byte("x"), "PK4", "y")
	}
	putErr := func(key *tablestore.PrimaryKey, cols ...any) error {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: key}
		for i := 0; i < len(cols); i += 2 {
			ch.AddColumn(cols[i].(string), cols[i+1])
		}
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		return err
	}
	getErr := func(key *tablestore.PrimaryKey) error {
		_, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: key, MaxVersion: 1}})
		return err
	}
	for _, f := range []func(*tablestore.PrimaryKey) error{func(k *tablestore.PrimaryKey) error { return putErr(k) }, getErr} {
		wantOTS(t, f(pk("PK1", "a")), 400, "OTSInvalidPK", "Validate PK size fail. Input: 1, Meta: 4.")
		wantOTS(t, f(pk("PK1", "a", "PKX", int64(1), "PK3", []byte("x"), "PK4", "y")), 400, "OTSInvalidPK", "Validate PK name fail. Input: PKX, Meta: PK2.")
		wantOTS(t, f(full(int64(3))), 400, "OTSInvalidPK", "Validate PK type fail. Input: VT_INTEGER, Meta: VT_STRING.")
		wantOTS(t, f(pk("PK1", "a", "PK2", int64(1), "PK3", "str", "PK4", "y")), 400, "OTSInvalidPK", "Validate PK type fail. Input: VT_STRING, Meta: VT_BLOB.")
		wantOTS(t, f(full(strings.Repeat("k", 1025))), 400, "OTSParameterInvalid", "The length of primary key column: 'PK1' exceeded the MaxLength:1024 with CurrentLength:1025.")
	}
	inf := &tablestore.PrimaryKey{}
	inf.AddPrimaryKeyColumnWithMinValue("PK1")
	inf.AddPrimaryKeyColumn("PK2", int64(1))
	inf.AddPrimaryKeyColumn("PK3", []byte("x"))
	inf.AddPrimaryKeyColumn("PK4", "y")
	wantOTS(t, getErr(inf), 400, "OTSInvalidPK", "Validate PK type fail. Input: VT_INF_MIN, Meta: VT_STRING.")
	// The SDK's put serializer writes an INF key column as AUTO_INCREMENT.
	wantOTS(t, putErr(inf), 400, "OTSInvalidPK", "Validate PK type fail. Input: VT_AUTO_INCREMENT, Meta: VT_STRING.")
	if err := putErr(full(strings.Repeat("k", 1024))); err != nil {
		t.Fatalf("1024-byte key: %v", err)
	}
	wantOTS(t, putErr(full("a"), "bad-col", int64(1)), 400, "OTSParameterInvalid", "Invalid column name: bad-col.")
	wantOTS(t, putErr(full("a"), "PK2", int64(1)), 400, "OTSParameterInvalid", "Duplicated attribute column name with primary key column: 'PK2' while putting row.")
	wantOTS(t, putErr(full("a"), "d", math.NaN()), 400, "OTSParameterInvalid", "NaN can't be set to double value.")
	wantOTS(t, putErr(full("a"), "big", strings.Repeat("v", 2<<20+1)), 400, "OTSParameterInvalid",
		"The length of attribute column: 'big' exceeded the MaxLength:2097152 with CurrentLength:2097153.")
	// Nothing was written by any refused write.
	rs, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: allInf(true, "PK1", "PK2", "PK3", "PK4"), EndPrimaryKey: allInf(false, "PK1", "PK2", "PK3", "PK4"), MaxVersion: 1,
	}})
	if err != nil || len(rs.Rows) != 1 {
		t.Fatalf("rows after refused writes: %d, %v (want only the 1024-byte key row)", len(rs.Rows), err)
	}
}

func allInf(min bool, names ...string) *tablestore.PrimaryKey {
	k := &tablestore.PrimaryKey{}
	for _, n := range names {
		if min {
			k.AddPrimaryKeyColumnWithMinValue(n)
		} else {
			k.AddPrimaryKeyColumnWithMaxValue(n)
		}
	}
	return k
}

// TestPlainBufferErrors sends rows the SDK would never build.
func TestPlainBufferErrors(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	good := (&tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", "a"), Columns: []tablestore.AttributeColumn{{ColumnName: "c", Value: int64(5)}}}).Serialize()
	putRaw := func(row []byte) rawResp {
		return e.call("PutRow", &otsprotocol.PutRowRequest{TableName: proto.String("t"), Row: row,
			Condition: &otsprotocol.Condition{RowExistence: otsprotocol.RowExistenceExpectation_IGNORE.Enum()}})
	}
	if r := putRaw(good); r.status != 200 {
		t.Fatalf("good row: %d %v", r.status, r.err)
	}
	// Flip a payload byte of the cell value: the cell checksum no longer matches.
	bad := bytes.Clone(good)
	i := bytes.LastIndex(bad, []byte{5, 0, 0, 0, 0, 0, 0, 0})
	bad[i] = 6
	putRaw(bad).want(t, 400, "OTSParameterInvalid", "Cell data broken, checksum is mismatch")
	// Flip the row checksum.
	bad = bytes.Clone(good)
	bad[len(bad)-1] ^= 0xff
	putRaw(bad).want(t, 400, "OTSParameterInvalid", "Row data broken, checksum is mismatch")
	// An attribute holding INF_MIN.
	row := plainbuffer.EncodeRow(plainbuffer.Row{
		PrimaryKey: []plainbuffer.Cell{{Name: "k", Value: plainbuffer.StringValue("a")}},
		Columns:    []plainbuffer.Cell{{Name: "c", Value: plainbuffer.InfMinValue()}},
	})
	putRaw(row).want(t, 400, "OTSParameterInvalid", "INF_MIN is an invalid type for the attribute column.")
	// The stored row is unchanged by all of it.
	if m := colMap(e.get("t", pk("k", "a"), 1).Columns); len(m) != 1 || m["c"][0] != int64(5) {
		t.Fatalf("row after refused writes: %v", m)
	}
}

func TestConditions(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	put := func(key string, exp tablestore.RowExistenceExpectation, cond tablestore.ColumnFilter, cols ...any) error {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", key)}
		for i := 0; i < len(cols); i += 2 {
			ch.AddColumn(cols[i].(string), cols[i+1])
		}
		ch.SetCondition(exp)
		if cond != nil {
			ch.SetColumnCondition(cond)
		}
		_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		return err
	}
	fail := func(err error) { t.Helper(); wantOTS(t, err, 403, "OTSConditionCheckFail", "Condition check failed.") }
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Row existence fails with the service's own messages.
	wantOTS(t, put("a", tablestore.RowExistenceExpectation_EXPECT_EXIST, nil, "v", int64(1)), 403, "OTSConditionCheckFail", "Row does not exist which is expected existent")
	ok(put("a", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST, nil, "v", int64(1)))
	wantOTS(t, put("a", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST, nil, "v", int64(2)), 403, "OTSConditionCheckFail", "Row exists which is expected nonexistent")
	ok(put("a", tablestore.RowExistenceExpectation_EXPECT_EXIST, nil, "v", int64(2)))
	// Column conditions.
	fail(put("a", tablestore.RowExistenceExpectation_IGNORE, tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(1)), "v", int64(3)))
	ok(put("a", tablestore.RowExistenceExpectation_IGNORE, tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(2)), "v", int64(3)))
	// A type mismatch never matches, != included.
	fail(put("a", tablestore.RowExistenceExpectation_IGNORE, tablestore.NewSingleColumnCondition("v", tablestore.CT_NOT_EQUAL, "3"), "v", int64(4)))
	// Missing column: passes unless filter_if_missing.
	miss := tablestore.NewSingleColumnCondition("nope", tablestore.CT_EQUAL, int64(1))
	ok(put("a", tablestore.RowExistenceExpectation_IGNORE, miss, "v", int64(4)))
	miss.FilterIfMissing = true
	fail(put("a", tablestore.RowExistenceExpectation_IGNORE, miss, "v", int64(5)))
	// Composite.
	and := tablestore.NewCompositeColumnCondition(tablestore.LO_AND)
	and.AddFilter(tablestore.NewSingleColumnCondition("v", tablestore.CT_GREATER_EQUAL, int64(4)))
	and.AddFilter(tablestore.NewSingleColumnCondition("v", tablestore.CT_LESS_THAN, int64(5)))
	ok(put("a", tablestore.RowExistenceExpectation_EXPECT_EXIST, and, "v", int64(6)))
	fail(put("a", tablestore.RowExistenceExpectation_EXPECT_EXIST, and, "v", int64(7)))
	if v := colMap(e.get("t", pk("k", "a"), 1).Columns)["v"]; len(v) != 1 || v[0] != int64(6) {
		t.Fatalf("v = %v, want 6", v)
	}

	// UpdateRow and DeleteRow conditions.
	up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "b")}
	up.PutColumn("v", int64(1))
	up.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	_, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	wantOTS(t, err, 403, "OTSConditionCheckFail", "Row does not exist which is expected existent")
	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: pk("k", "a")}
	del.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	del.SetColumnCondition(tablestore.NewSingleColumnCondition("v", tablestore.CT_LESS_THAN, int64(6)))
	_, err = e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del})
	fail(err)
	del.SetColumnCondition(tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(6)))
	_, err = e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del})
	ok(err)
	if r := e.get("t", pk("k", "a"), 1); len(r.Columns) != 0 {
		t.Fatalf("row survived a conditional delete: %+v", r.Columns)
	}
}

func TestUpdateAndIncrement(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 3, pkDef{"k", tString})
	key := pk("k", "a")
	up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	up.PutColumn("name", "x")
	up.IncrementColumn("n", 5)
	up.IncrementColumn("m", -2)
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	up.SetReturnIncrementValue()
	up.AppendIncrementColumnToReturn("n")
	r, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Columns) != 1 || r.Columns[0].ColumnName != "n" || r.Columns[0].Value != int64(5) || r.Columns[0].Timestamp != e.now() {
		t.Fatalf("returned = %+v", r.Columns)
	}
	e.clock.Advance(time.Second)
	up = &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	up.IncrementColumn("n", 10)
	up.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	up.SetReturnIncrementValue()
	if r, err = e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up}); err != nil {
		t.Fatal(err)
	}
	if len(r.Columns) != 1 || r.Columns[0].Value != int64(15) {
		t.Fatalf("returned = %+v", r.Columns)
	}
	m := colMap(e.get("t", key, 3).Columns)
	if len(m["n"]) != 2 || m["n"][0] != int64(15) || m["n"][1] != int64(5) || m["m"][0] != int64(-2) || m["name"][0] != "x" {
		t.Fatalf("row = %v", m)
	}
	// Increment of a non-integer column changes nothing.
	up = &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	up.IncrementColumn("name", 1)
	up.IncrementColumn("n", 1)
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	wantOTS(t, err, 400, "OTSParameterInvalid", `column "name": Increment needs an Integer, the latest version is String`)
	if m := colMap(e.get("t", key, 1).Columns); m["n"][0] != int64(15) {
		t.Fatalf("n = %v after a refused increment", m["n"])
	}
	// Delete one version, then the whole column.
	ts := e.get("t", key, 3).Columns
	var oldN int64
	for _, c := range ts {
		if c.ColumnName == "n" && c.Value == int64(5) {
			oldN = c.Timestamp
		}
	}
	up = &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	up.DeleteColumnWithTimestamp("n", oldN)
	up.DeleteColumn("m")
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up}); err != nil {
		t.Fatal(err)
	}
	m = colMap(e.get("t", key, 3).Columns)
	if len(m["n"]) != 1 || m["n"][0] != int64(15) || m["m"] != nil {
		t.Fatalf("row after deletes = %v", m)
	}
	// RT_PK on PutRow returns the key.
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", "z")}
	ch.AddColumn("c", int64(1))
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	ch.SetReturnPk()
	pr, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	if err != nil || len(pr.PrimaryKey.PrimaryKeys) != 1 || pr.PrimaryKey.PrimaryKeys[0].Value != "z" {
		t.Fatalf("RT_PK = %+v, %v", pr, err)
	}
	// An empty update is refused.
	up = &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	wantOTS(t, err, 400, "OTSParameterInvalid", "No column specified while updating row.")
}

func TestVersions(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 3, pkDef{"k", tString})
	key := pk("k", "a")
	now := e.now()
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: key}
	for i := int64(1); i <= 4; i++ {
		ch.AddColumnWithTimestamp("c", i, now-i*1000) // c=1 is the newest
	}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	read := func(c tablestore.SingleRowQueryCriteria) []any {
		t.Helper()
		c.TableName, c.PrimaryKey = "t", key
		r, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &c})
		if err != nil {
			t.Fatal(err)
		}
		return colMap(r.Columns)["c"]
	}
	eq := func(got []any, want ...int64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("versions %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("versions %v, want %v", got, want)
			}
		}
	}
	eq(read(tablestore.SingleRowQueryCriteria{MaxVersion: 10}), 1, 2, 3) // table keeps 3
	eq(read(tablestore.SingleRowQueryCriteria{MaxVersion: 2}), 1, 2)
	eq(read(tablestore.SingleRowQueryCriteria{TimeRange: &tablestore.TimeRange{Start: now - 3000, End: now - 1000}}), 2, 3)
	eq(read(tablestore.SingleRowQueryCriteria{TimeRange: &tablestore.TimeRange{Start: now - 3000, End: now}, MaxVersion: 1}), 1)
	eq(read(tablestore.SingleRowQueryCriteria{TimeRange: &tablestore.TimeRange{Specific: now - 2000}}), 2)
	_, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: key, MaxVersion: 1, TimeRange: &tablestore.TimeRange{Specific: now},
	}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Specific tiemstamp and max versions cannot be given at the same time.")
	// The SDK refuses a read with neither; the server does too.
	e.call("GetRow", &otsprotocol.GetRowRequest{TableName: proto.String("t"), PrimaryKey: key.Build(false)}).
		want(t, 400, "OTSParameterInvalid", "No version condition is specified while querying row.")
	e.call("GetRow", &otsprotocol.GetRowRequest{TableName: proto.String("t"), PrimaryKey: key.Build(false), MaxVersions: proto.Int32(0)}).
		want(t, 400, "OTSParameterInvalid", "max_versions must be greater than 0, got 0.")
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: key, TimeRange: &tablestore.TimeRange{Start: 10, End: 5},
	}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Invalid time range: start time 10 must be at least 0 and less than end time 5.")
}

// TestTTLAndVersionWindow drives TTL and deviation_cell_version_in_sec with
// the server's ManualClock.
func TestTTLAndVersionWindow(t *testing.T) {
	e := newEnv(t)
	opt := tablestore.NewTableOption(86400, 1)
	opt.DeviationCellVersionInSec = 3600
	if err := e.create("t", opt, pkDef{"k", tString}); err != nil {
		t.Fatal(err)
	}
	putTS := func(ts int64) error {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", "w")}
		ch.AddColumnWithTimestamp("c", int64(1), ts)
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		return err
	}
	now := e.now()
	for _, ts := range []int64{now - 3600*1000, now, now + 3599*1000} {
		if err := putTS(ts); err != nil {
			t.Errorf("timestamp %+d ms: %v", ts-now, err)
		}
	}
	for _, ts := range []int64{now - 3601*1000, now + 3600*1000, -5} {
		wantOTS(t, putTS(ts), 400, "OTSParameterInvalid", "Invalid timestamp. Cell:c")
	}
	up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "w")}
	up.PutColumnWithTimestamp("c", int64(2), now+7200*1000)
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Invalid timestamp. Cell:c")

	e.put("t", pk("k", "a"), "c", "v")
	e.clock.Advance(86399 * time.Second)
	if r := e.get("t", pk("k", "a"), 1); len(r.Columns) != 1 {
		t.Fatalf("row gone before its TTL: %+v", r)
	}
	e.clock.Advance(time.Second)
	if r := e.get("t", pk("k", "a"), 1); len(r.Columns) != 0 || len(r.PrimaryKey.PrimaryKeys) != 0 {
		t.Fatalf("row visible after its TTL: %+v", r)
	}
	// A write with the now-expired version is refused, although the window
	// (offset) alone would not refuse it... the offset is 3600 s, so it is
	// out of the window too; use a table with a large offset.
	opt = tablestore.NewTableOption(86400, 1)
	opt.DeviationCellVersionInSec = 86400 * 10
	if err := e.create("t2", opt, pkDef{"k", tString}); err != nil {
		t.Fatal(err)
	}
	ch := &tablestore.PutRowChange{TableName: "t2", PrimaryKey: pk("k", "a")}
	ch.AddColumnWithTimestamp("c", int64(1), e.now()-86400*1000)
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Invalid timestamp. Cell:c")

	// UpdateTable's TTL change applies at once.
	e.put("t2", pk("k", "b"), "c", "v")
	e.clock.Advance(2 * 86400 * time.Second)
	if _, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t2", TableOption: tablestore.NewTableOption(86400*3, 1)}); err != nil {
		t.Fatal(err)
	}
	if r := e.get("t2", pk("k", "b"), 1); len(r.Columns) != 1 {
		t.Fatalf("row with TTL 3 days gone after 2 days: %+v", r)
	}
}

func TestFilters(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 3, pkDef{"k", tString})
	now := e.now()
	for i, v := range []int64{1, 2, 3} {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", string(rune('a'+i)))}
		ch.AddColumnWithTimestamp("v", v, now)
		ch.AddColumnWithTimestamp("v", v*10, now-1000) // older version
		if i == 1 {
			ch.AddColumn("tag", "two")
		}
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(f tablestore.ColumnFilter, maxVer int32) string {
		t.Helper()
		r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: "t", StartPrimaryKey: allInf(true, "k"), EndPrimaryKey: allInf(false, "k"), MaxVersion: maxVer, Filter: f,
		}})
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, row := range r.Rows {
			ks = append(ks, row.PrimaryKey.PrimaryKeys[0].Value.(string))
		}
		return strings.Join(ks, ",")
	}
	single := func(col string, op tablestore.ComparatorType, v any, ifMissing, latest bool) *tablestore.SingleColumnCondition {
		c := tablestore.NewSingleColumnCondition(col, op, v)
		c.FilterIfMissing, c.LatestVersionOnly = ifMissing, latest
		return c
	}
	cases := []struct {
		name   string
		f      tablestore.ColumnFilter
		maxVer int32
		want   string
	}{
		{"eq", single("v", tablestore.CT_EQUAL, int64(2), false, true), 1, "b"},
		{"ne", single("v", tablestore.CT_NOT_EQUAL, int64(2), false, true), 1, "a,c"},
		{"gt", single("v", tablestore.CT_GREATER_THAN, int64(1), false, true), 1, "b,c"},
		{"le", single("v", tablestore.CT_LESS_EQUAL, int64(2), false, true), 1, "a,b"},
		{"typeMismatch", single("v", tablestore.CT_NOT_EQUAL, "2", false, true), 1, ""},
		{"missingPasses", single("tag", tablestore.CT_EQUAL, "two", false, true), 1, "a,b,c"},
		{"filterIfMissing", single("tag", tablestore.CT_EQUAL, "two", true, true), 1, "b"},
		// The older version 20 matches only when all versions are tested.
		{"latestOnly", single("v", tablestore.CT_EQUAL, int64(20), false, true), 2, ""},
		{"allVersions", single("v", tablestore.CT_EQUAL, int64(20), false, false), 2, "b"},
	}
	for _, tc := range cases {
		if got := keys(tc.f, tc.maxVer); got != tc.want {
			t.Errorf("%s: rows %q, want %q", tc.name, got, tc.want)
		}
	}
	not := tablestore.NewCompositeColumnCondition(tablestore.LO_NOT)
	not.AddFilter(single("v", tablestore.CT_EQUAL, int64(2), false, true))
	if got := keys(not, 1); got != "a,c" {
		t.Errorf("NOT: %q", got)
	}
	or := tablestore.NewCompositeColumnCondition(tablestore.LO_OR)
	or.AddFilter(single("v", tablestore.CT_EQUAL, int64(1), false, true))
	and := tablestore.NewCompositeColumnCondition(tablestore.LO_AND)
	and.AddFilter(single("v", tablestore.CT_GREATER_THAN, int64(1), false, true))
	and.AddFilter(single("tag", tablestore.CT_EQUAL, "two", true, true))
	or.AddFilter(and)
	if got := keys(or, 1); got != "a,b" {
		t.Errorf("OR(v=1, AND(v>1, tag=two)): %q", got)
	}
	// GetRow with a filter that fails returns no row.
	g, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1, Filter: single("v", tablestore.CT_EQUAL, int64(2), false, true),
	}})
	if err != nil || len(g.Columns) != 0 || len(g.PrimaryKey.PrimaryKeys) != 0 {
		t.Fatalf("filtered GetRow = %+v, %v", g, err)
	}

	// Unsupported filters are refused clearly.
	_, err = e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: allInf(true, "k"), EndPrimaryKey: allInf(false, "k"), MaxVersion: 1,
		Filter: &tablestore.PaginationFilter{Offset: 0, Limit: 1},
	}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "ColumnPaginationFilter is not supported by the tablekit Tablestore emulator.")
	rx := single("v", tablestore.CT_EQUAL, int64(1), false, true)
	rx.TransferRule = tablestore.NewValueTransferRule("([0-9]+)", tablestore.Variant_INTEGER)
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1, Filter: rx}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "SingleColumnValueFilter with value_trans_rule (regex) is not supported by the tablekit Tablestore emulator.")
	// A NOT with two sub filters is malformed.
	bad := tablestore.NewCompositeColumnCondition(tablestore.LO_NOT)
	bad.AddFilter(single("v", tablestore.CT_EQUAL, int64(1), false, true))
	bad.AddFilter(single("v", tablestore.CT_EQUAL, int64(2), false, true))
	_, err = e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1, Filter: bad}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "The NOT operator needs exactly one sub filter, got 2.")
}

// TestLoweredMaxVersionsStayHidden is SPEC §5 over the wire: after
// UpdateTable lowers max_versions, deleting the one visible version with
// DELETE_ONE_VERSION leaves the column empty; the versions the lower
// max_versions hid do not come back.
func TestLoweredMaxVersionsStayHidden(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 3, pkDef{"k", tString})
	key := pk("k", "a")
	now := e.now()
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: key}
	for i := int64(1); i <= 3; i++ {
		ch.AddColumnWithTimestamp("c", i, now-i*1000) // c=1 is the newest
	}
	ch.AddColumnWithTimestamp("d", int64(9), now-1000)
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t", TableOption: tablestore.NewTableOption(-1, 1)}); err != nil {
		t.Fatal(err)
	}
	if got := colMap(e.get("t", key, 10).Columns)["c"]; len(got) != 1 || got[0] != int64(1) {
		t.Fatalf("after lowering max_versions to 1: c = %v, want [1]", got)
	}
	up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	up.DeleteColumnWithTimestamp("c", now-1000)
	up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up}); err != nil {
		t.Fatal(err)
	}
	cols := colMap(e.get("t", key, 10).Columns)
	if got, ok := cols["c"]; ok {
		t.Errorf("after deleting the visible version of c: c = %v, want no version (the hidden ones stay hidden)", got)
	}
	if got := cols["d"]; len(got) != 1 || got[0] != int64(9) {
		t.Errorf("d = %v, want [9]", got)
	}
}
