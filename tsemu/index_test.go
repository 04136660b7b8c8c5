package tsemu

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// scanAll returns every row of table as "key | cells" strings.
func (e *env) scanAll(table string, pkNames ...string) []string {
	e.t.Helper()
	start, end := new(tablestore.PrimaryKey), new(tablestore.PrimaryKey)
	for _, n := range pkNames {
		start.AddPrimaryKeyColumnWithMinValue(n)
		end.AddPrimaryKeyColumnWithMaxValue(n)
	}
	var out []string
	for {
		r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: table, StartPrimaryKey: start, EndPrimaryKey: end, MaxVersion: 1, Direction: tablestore.FORWARD,
		}})
		if err != nil {
			e.t.Fatalf("GetRange %s: %v", table, err)
		}
		for _, row := range r.Rows {
			var k []any
			for _, p := range row.PrimaryKey.PrimaryKeys {
				k = append(k, p.Value)
			}
			cols := map[string]any{}
			for _, c := range row.Columns {
				cols[c.ColumnName] = c.Value
			}
			out = append(out, fmt.Sprint(k, " | ", cols))
		}
		if r.NextStartPrimaryKey == nil {
			return out
		}
		start = r.NextStartPrimaryKey
	}
}

func TestSecondaryIndexes(t *testing.T) {
	e := newEnv(t)
	meta := &tablestore.TableMeta{TableName: "base"}
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
	meta.AddDefinedColumn("c", tablestore.DefinedColumn_STRING)
	meta.AddDefinedColumn("v", tablestore.DefinedColumn_INTEGER)
	meta.AddDefinedColumn("d", tablestore.DefinedColumn_DOUBLE)
	global := &tablestore.IndexMeta{IndexName: "by_c", Primarykey: []string{"c"}, DefinedColumns: []string{"v"}, IndexType: tablestore.IT_GLOBAL_INDEX}
	local := &tablestore.IndexMeta{IndexName: "by_v", Primarykey: []string{"id", "v"}, DefinedColumns: []string{"c"}, IndexType: tablestore.IT_LOCAL_INDEX}
	if _, err := e.c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{},
		IndexMetas: []*tablestore.IndexMeta{global, local},
	}); err != nil {
		t.Fatal(err)
	}
	e.put("base", pk("id", "a"), "c", "x", "v", int64(1))
	e.put("base", pk("id", "b"), "c", "y", "v", int64(2))
	e.put("base", pk("id", "n"), "v", int64(3)) // no c: not in by_c
	want := func(table string, rows []string, pks ...string) {
		t.Helper()
		if got := e.scanAll(table, pks...); !reflect.DeepEqual(got, rows) {
			t.Fatalf("%s:\n got %q\nwant %q", table, got, rows)
		}
	}
	want("by_c", []string{"[x a] | map[v:1]", "[y b] | map[v:2]"}, "c", "id")
	want("by_v", []string{"[a 1] | map[c:x]", "[b 2] | map[c:y]", "[n 3] | map[]"}, "id", "v")

	// Updates move index rows; deletes remove them; a write through a
	// batch does the same.
	up := &tablestore.UpdateRowChange{TableName: "base", PrimaryKey: pk("id", "a")}
	up.PutColumn("c", "z")
	up.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	r, err := e.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up})
	if err != nil {
		t.Fatal(err)
	}
	if r.ConsumedCapacityUnit.Read != 1 {
		t.Errorf("a write to an indexed table reads %d units, want 1", r.ConsumedCapacityUnit.Read)
	}
	del := &tablestore.DeleteRowChange{TableName: "base", PrimaryKey: pk("id", "b")}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del}); err != nil {
		t.Fatal(err)
	}
	bw := new(tablestore.BatchWriteRowRequest)
	put := &tablestore.PutRowChange{TableName: "base", PrimaryKey: pk("id", "n")}
	put.AddColumn("c", "w")
	put.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	bw.AddRowChange(put)
	if res, err := e.c.BatchWriteRow(bw); err != nil || !res.TableToRowsResult["base"][0].IsSucceed {
		t.Fatalf("BatchWriteRow: %+v, %v", res, err)
	}
	want("by_c", []string{"[w n] | map[]", "[z a] | map[v:1]"}, "c", "id")
	want("by_v", []string{"[a 1] | map[c:z]"}, "id", "v")

	// GetRow reads an index table too; writes to it are refused.
	g := e.get("by_c", pk("c", "z", "id", "a"), 1)
	if colMap(g.Columns)["v"][0] != int64(1) {
		t.Fatalf("GetRow on the index = %+v", g)
	}
	bad := &tablestore.PutRowChange{TableName: "by_c", PrimaryKey: pk("c", "q", "id", "q")}
	bad.AddColumn("v", int64(1))
	bad.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err = e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: bad})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Table: 'by_c' is an index table: it cannot be written directly.")

	// DescribeTable lists the indexes with their full keys; ListTable hides
	// index tables.
	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "base"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.IndexMetas) != 2 || !slices.Equal(d.IndexMetas[0].Primarykey, []string{"c", "id"}) || d.IndexMetas[1].IndexType != tablestore.IT_LOCAL_INDEX {
		t.Fatalf("index metas = %+v %+v", d.IndexMetas[0], d.IndexMetas[1])
	}
	l, err := e.c.ListTable()
	if err != nil || !slices.Equal(l.TableNames, []string{"base"}) {
		t.Fatalf("ListTable = %v, %v", l, err)
	}

	// CreateIndex fills a new index from the base rows; DeleteIndex drops it.
	if _, err := e.c.CreateIndex(&tablestore.CreateIndexRequest{MainTableName: "base", IncludeBaseData: true,
		IndexMeta: &tablestore.IndexMeta{IndexName: "by_v2", Primarykey: []string{"v"}, IndexType: tablestore.IT_GLOBAL_INDEX}}); err != nil {
		t.Fatal(err)
	}
	want("by_v2", []string{"[1 a] | map[]"}, "v", "id")
	_, err = e.c.CreateIndex(&tablestore.CreateIndexRequest{MainTableName: "base",
		IndexMeta: &tablestore.IndexMeta{IndexName: "by_d", Primarykey: []string{"d"}, IndexType: tablestore.IT_GLOBAL_INDEX}})
	wantOTS(t, err, 400, "OTSParameterInvalid", "The type of column: 'd' cannot be a primary key of index: 'by_d'.")
	if _, err := e.c.DeleteIndex(&tablestore.DeleteIndexRequest{MainTableName: "base", IndexName: "by_v2"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "by_v2"})
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")

	// Deleting the base table deletes its indexes.
	if _, err := e.c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "base"}); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "by_c"})
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")
}
