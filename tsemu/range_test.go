package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// fill writes n rows k=0..n-1 (integer key) with one column of size bytes,
// through BatchWriteRow.
func (e *env) fill(table string, n, size int) {
	e.t.Helper()
	val := strings.Repeat("x", size)
	per := min(200, (4<<20)/(size+100)) // stay under the 5 MB body limit
	for i := 0; i < n; i += per {
		req := &tablestore.BatchWriteRowRequest{}
		for j := i; j < min(i+per, n); j++ {
			ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: pk("k", int64(j))}
			ch.AddColumn("v", val)
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			req.AddRowChange(ch)
		}
		r, err := e.c.BatchWriteRow(req)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, rr := range r.TableToRowsResult[table] {
			if !rr.IsSucceed {
				e.t.Fatalf("fill: %+v", rr.Error)
			}
		}
	}
}

func intKey(name string, v int64) *tablestore.PrimaryKey { return pk(name, v) }

// scan reads a range page by page with next_start_primary_key and returns
// the keys and each page's size.
func (e *env) scan(table string, start, end *tablestore.PrimaryKey, dir tablestore.Direction, limit int32) (keys []int64, pages []int) {
	e.t.Helper()
	for {
		r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: table, StartPrimaryKey: start, EndPrimaryKey: end, Direction: dir, MaxVersion: 1, Limit: limit,
		}})
		if err != nil {
			e.t.Fatal(err)
		}
		pages = append(pages, len(r.Rows))
		for _, row := range r.Rows {
			keys = append(keys, row.PrimaryKey.PrimaryKeys[0].Value.(int64))
		}
		if r.NextStartPrimaryKey == nil {
			return keys, pages
		}
		start = r.NextStartPrimaryKey
		if len(pages) > 1000 {
			e.t.Fatal("range does not end")
		}
	}
}

func checkSeq(t *testing.T, keys []int64, from, to int64) {
	t.Helper()
	step := int64(1)
	if to < from {
		step = -1
	}
	n := (to-from)*step + 1
	if int64(len(keys)) != n {
		t.Fatalf("%d keys, want %d (%d..%d)", len(keys), n, from, to)
	}
	for i, k := range keys {
		if k != from+int64(i)*step {
			t.Fatalf("key %d is %d, want %d", i, k, from+int64(i)*step)
		}
	}
}

func TestGetRangeBasics(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tInteger})
	e.fill("t", 50, 10)
	keys, pages := e.scan("t", allInf(true, "k"), allInf(false, "k"), tablestore.FORWARD, 0)
	checkSeq(t, keys, 0, 49)
	if len(pages) != 1 {
		t.Errorf("pages %v, want one", pages)
	}
	keys, pages = e.scan("t", intKey("k", 10), intKey("k", 20), tablestore.FORWARD, 3)
	checkSeq(t, keys, 10, 19)
	if fmt.Sprint(pages) != "[3 3 3 1]" {
		t.Errorf("pages %v", pages)
	}
	keys, _ = e.scan("t", allInf(false, "k"), allInf(true, "k"), tablestore.BACKWARD, 7)
	checkSeq(t, keys, 49, 0)
	keys, _ = e.scan("t", intKey("k", 20), intKey("k", 10), tablestore.BACKWARD, 0)
	checkSeq(t, keys, 20, 11)

	rangeErr := func(start, end *tablestore.PrimaryKey, dir tablestore.Direction, limit int32) error {
		_, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: "t", StartPrimaryKey: start, EndPrimaryKey: end, Direction: dir, MaxVersion: 1, Limit: limit,
		}})
		return err
	}
	wantOTS(t, rangeErr(intKey("k", 5), intKey("k", 5), tablestore.FORWARD, 0), 400, "OTSParameterInvalid", "Begin key must less than end key in FORWARD")
	wantOTS(t, rangeErr(intKey("k", 5), intKey("k", 6), tablestore.BACKWARD, 0), 400, "OTSParameterInvalid", "Begin key must more than end key in BACKWARD")
	wantOTS(t, rangeErr(intKey("k", 5), intKey("k", 6), tablestore.FORWARD, -1), 400, "OTSParameterInvalid", "The limit must be greater than 0.")
	wantOTS(t, rangeErr(pk("k", "s"), intKey("k", 6), tablestore.FORWARD, 0), 400, "OTSInvalidPK", "Validate PK type fail. Input: VT_STRING, Meta: VT_INTEGER.")
	wantOTS(t, rangeErr(pk("j", int64(1)), intKey("k", 6), tablestore.FORWARD, 0), 400, "OTSInvalidPK", "Validate PK name fail. Input: j, Meta: k.")

	// An empty range: no rows, no next key, and rows is set (required).
	raw := e.call("GetRange", &otsprotocol.GetRangeRequest{
		TableName: proto.String("t"), Direction: otsprotocol.Direction_FORWARD.Enum(), MaxVersions: proto.Int32(1),
		InclusiveStartPrimaryKey: intKey("k", 1000).Build(false), ExclusiveEndPrimaryKey: allInf(false, "k").Build(false),
	})
	var gr otsprotocol.GetRangeResponse
	if err := proto.Unmarshal(raw.body, &gr); err != nil || gr.Rows == nil || len(gr.Rows) != 0 || gr.NextStartPrimaryKey != nil {
		t.Fatalf("empty range: %v %v %v", err, gr.Rows, gr.NextStartPrimaryKey)
	}
}

func TestGetRangeMultiColumnKeyAndInf(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"a", tString}, pkDef{"b", tInteger})
	for _, a := range []string{"x", "y"} {
		for b := int64(-2); b <= 2; b++ {
			e.put("t", pk("a", a, "b", b), "v", a+fmt.Sprint(b))
		}
	}
	start := &tablestore.PrimaryKey{}
	start.AddPrimaryKeyColumn("a", "x")
	start.AddPrimaryKeyColumnWithMinValue("b")
	end := &tablestore.PrimaryKey{}
	end.AddPrimaryKeyColumn("a", "x")
	end.AddPrimaryKeyColumnWithMaxValue("b")
	r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: start, EndPrimaryKey: end, MaxVersion: 1, Limit: 4,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 4 || r.Rows[0].PrimaryKey.PrimaryKeys[1].Value != int64(-2) {
		t.Fatalf("rows %d", len(r.Rows))
	}
	// The next start key is a real key (x, 2), never INF.
	nk := r.NextStartPrimaryKey
	if nk == nil || len(nk.PrimaryKeys) != 2 || nk.PrimaryKeys[0].Value != "x" || nk.PrimaryKeys[1].Value != int64(2) {
		t.Fatalf("next = %+v", nk)
	}
	r, err = e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: nk, EndPrimaryKey: end, MaxVersion: 1, Limit: 4,
	}})
	if err != nil || len(r.Rows) != 1 || r.NextStartPrimaryKey != nil {
		t.Fatalf("second page: %d rows, next %v, %v", len(r.Rows), r.NextStartPrimaryKey, err)
	}
}

// TestGetRangePagesOver5000Rows: no limit, 6001 rows: a full page of 5000
// and a next key, then the rest.
func TestGetRangePagesOver5000Rows(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tInteger})
	e.fill("t", 6001, 1)
	keys, pages := e.scan("t", allInf(true, "k"), allInf(false, "k"), tablestore.FORWARD, 0)
	checkSeq(t, keys, 0, 6000)
	if fmt.Sprint(pages) != "[5000 1001]" {
		t.Errorf("pages %v, want [5000 1001]", pages)
	}
	// A limit above 5000 is capped at 5000.
	keys, pages = e.scan("t", allInf(false, "k"), allInf(true, "k"), tablestore.BACKWARD, 6000)
	checkSeq(t, keys, 6000, 0)
	if fmt.Sprint(pages) != "[5000 1001]" {
		t.Errorf("backward pages %v, want [5000 1001]", pages)
	}
}

// TestGetRangePagesOver4MB: 60 rows of 100 KB (6 MB): every page stays
// within 4 MB, and next_start_primary_key, fed back as it is, resumes
// exactly where the page stopped.
func TestGetRangePagesOver4MB(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tInteger})
	e.fill("t", 60, 100<<10)
	start := allInf(true, "k").Build(false)
	var keys []int64
	var pages []int
	for len(start) > 0 {
		raw := e.call("GetRange", &otsprotocol.GetRangeRequest{
			TableName: proto.String("t"), Direction: otsprotocol.Direction_FORWARD.Enum(), MaxVersions: proto.Int32(1),
			InclusiveStartPrimaryKey: start, ExclusiveEndPrimaryKey: allInf(false, "k").Build(false),
		})
		var gr otsprotocol.GetRangeResponse
		if err := proto.Unmarshal(raw.body, &gr); err != nil {
			t.Fatal(err)
		}
		if len(gr.Rows) > MaxPageSize {
			t.Fatalf("page of %d bytes", len(gr.Rows))
		}
		rows, err := plainbuffer.DecodeRows(gr.Rows)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			keys = append(keys, r.PrimaryKey[0].Value.Int)
		}
		pages = append(pages, len(rows))
		start = gr.NextStartPrimaryKey
		if len(pages) > 10 {
			t.Fatal("range does not end")
		}
	}
	checkSeq(t, keys, 0, 59)
	if len(pages) != 2 || pages[0] < 35 || pages[0] > 40 {
		t.Fatalf("pages %v: want a 4 MB page (~39 rows of 100 KB) then the rest", pages)
	}
	// The SDK reads the same paging.
	keys, sdkPages := e.scan("t", allInf(true, "k"), allInf(false, "k"), tablestore.FORWARD, 0)
	checkSeq(t, keys, 0, 59)
	if fmt.Sprint(sdkPages) != fmt.Sprint(pages) {
		t.Fatalf("SDK pages %v, raw pages %v", sdkPages, pages)
	}
}

func TestGetRangeFilterWithPaging(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tInteger})
	for i := int64(0); i < 30; i++ {
		e.put("t", intKey("k", i), "even", i%2 == 0)
	}
	var keys []int64
	start := allInf(true, "k")
	for {
		r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: "t", StartPrimaryKey: start, EndPrimaryKey: allInf(false, "k"), MaxVersion: 1, Limit: 4,
			Filter: tablestore.NewSingleColumnCondition("even", tablestore.CT_EQUAL, true), ColumnsToGet: []string{"even"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range r.Rows {
			keys = append(keys, row.PrimaryKey.PrimaryKeys[0].Value.(int64))
		}
		if r.NextStartPrimaryKey == nil {
			break
		}
		start = r.NextStartPrimaryKey
	}
	if len(keys) != 15 {
		t.Fatalf("keys %v", keys)
	}
	for i, k := range keys {
		if k != int64(2*i) {
			t.Fatalf("keys %v", keys)
		}
	}
}

// TestGetRangeSimpleRowMatrix: data_block_type_hint DBT_SIMPLE_ROW_MATRIX
// is answered in that block type, read by the SDK's own decoder to the
// same rows as the PlainBuffer answer (newest version of each column, a
// column a row lacks left out), with and without columns_to_get, and for
// an empty range.
func TestGetRangeSimpleRowMatrix(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 3, pkDef{"s", tString}, pkDef{"i", tInteger}, pkDef{"b", tBinary})
	e.put("t", pk("s", "a", "i", int64(-1), "b", []byte{0}), "str", "x", "int", int64(7), "dbl", 2.5, "bool", true, "bin", []byte{1, 2})
	e.clock.Advance(time.Second)
	e.put("t", pk("s", "a", "i", int64(-1), "b", []byte{0}), "int", int64(8)) // a newer version
	e.put("t", pk("s", "b", "i", int64(5), "b", []byte{}), "bool", false)
	start, end := &tablestore.PrimaryKey{}, &tablestore.PrimaryKey{}
	for _, n := range []string{"s", "i", "b"} {
		start.AddPrimaryKeyColumnWithMinValue(n)
		end.AddPrimaryKeyColumnWithMaxValue(n)
	}
	get := func(bt tablestore.DataBlockType, cols []string, s, e2 *tablestore.PrimaryKey) *tablestore.GetRangeResponse {
		t.Helper()
		r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: "t", StartPrimaryKey: s, EndPrimaryKey: e2, MaxVersion: 1, ColumnsToGet: cols, DataBlockType: bt,
		}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// rowsOf renders rows without timestamps (a matrix has none).
	rowsOf := func(rows []*tablestore.Row) string {
		var sb strings.Builder
		for _, r := range rows {
			for _, p := range r.PrimaryKey.PrimaryKeys {
				fmt.Fprintf(&sb, "%s=%v ", p.ColumnName, p.Value)
			}
			cols := slices.Clone(r.Columns)
			slices.SortFunc(cols, func(a, b *tablestore.AttributeColumn) int { return strings.Compare(a.ColumnName, b.ColumnName) })
			for _, c := range cols {
				fmt.Fprintf(&sb, "| %s=%v ", c.ColumnName, c.Value)
			}
			sb.WriteString("\n")
		}
		return sb.String()
	}
	for _, cols := range [][]string{nil, {"int", "bool", "missing", "i"}} {
		plain := get(tablestore.PlainBuffer, cols, start, end)
		m := get(tablestore.SimpleRowMatrix, cols, start, end)
		if m.DataBlockType != tablestore.SimpleRowMatrix {
			t.Fatalf("columns %v: answered in block type %v, want SimpleRowMatrix", cols, m.DataBlockType)
		}
		if len(m.Rows) != 2 || rowsOf(m.Rows) != rowsOf(plain.Rows) {
			t.Errorf("columns %v: matrix rows\n%s\nplain rows\n%s", cols, rowsOf(m.Rows), rowsOf(plain.Rows))
		}
		if c := colMap(m.Rows[0].Columns)["int"]; len(c) != 1 || c[0] != int64(8) {
			t.Errorf("columns %v: int = %v, want the newest version only [8]", cols, c)
		}
	}
	// An empty range is a matrix of no rows.
	from := &tablestore.PrimaryKey{}
	from.AddPrimaryKeyColumn("s", "zz")
	from.AddPrimaryKeyColumnWithMinValue("i")
	from.AddPrimaryKeyColumnWithMinValue("b")
	if r := get(tablestore.SimpleRowMatrix, nil, from, end); r.DataBlockType != tablestore.SimpleRowMatrix || len(r.Rows) != 0 {
		t.Errorf("empty range: block type %v, %d rows", r.DataBlockType, len(r.Rows))
	}
}
