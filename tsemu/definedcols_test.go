package tsemu

import (
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// TestDefinedColumns: AddDefinedColumn and DeleteDefinedColumn change what
// DescribeTable reports and what CreateIndex may use; a column an index
// uses cannot be deleted; bad input is refused and changes nothing.
func TestDefinedColumns(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	add := func(cols ...*tablestore.DefinedColumnSchema) error {
		_, err := e.c.AddDefinedColumn(&tablestore.AddDefinedColumnRequest{TableName: "t", DefinedColumns: cols})
		return err
	}
	del := func(names ...string) error {
		_, err := e.c.DeleteDefinedColumn(&tablestore.DeleteDefinedColumnRequest{TableName: "t", DefinedColumns: names})
		return err
	}
	defined := func() map[string]tablestore.DefinedColumnType {
		t.Helper()
		d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "t"})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]tablestore.DefinedColumnType{}
		for _, dc := range d.TableMeta.DefinedColumns {
			m[dc.Name] = dc.ColumnType
		}
		return m
	}
	if err := add(&tablestore.DefinedColumnSchema{Name: "a", ColumnType: tablestore.DefinedColumn_STRING},
		&tablestore.DefinedColumnSchema{Name: "b", ColumnType: tablestore.DefinedColumn_INTEGER}); err != nil {
		t.Fatal(err)
	}
	if d := defined(); len(d) != 2 || d["a"] != tablestore.DefinedColumn_STRING || d["b"] != tablestore.DefinedColumn_INTEGER {
		t.Fatalf("after AddDefinedColumn: %v", d)
	}
	wantOTS(t, add(&tablestore.DefinedColumnSchema{Name: "a", ColumnType: tablestore.DefinedColumn_STRING}),
		400, "OTSParameterInvalid", "Defined column: 'a' already exists in table: 't'.")
	wantOTS(t, add(&tablestore.DefinedColumnSchema{Name: "k", ColumnType: tablestore.DefinedColumn_STRING}),
		400, "OTSParameterInvalid", "Defined column: 'k' has the name of a primary key column.")
	_, err := e.c.AddDefinedColumn(&tablestore.AddDefinedColumnRequest{TableName: "nope",
		DefinedColumns: []*tablestore.DefinedColumnSchema{{Name: "a", ColumnType: tablestore.DefinedColumn_STRING}}})
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")

	// An index may use a column added later, which then cannot go.
	if _, err := e.c.CreateIndex(&tablestore.CreateIndexRequest{MainTableName: "t", IndexMeta: &tablestore.IndexMeta{
		IndexName: "t_by_a", Primarykey: []string{"a"}, IndexType: tablestore.IT_GLOBAL_INDEX}}); err != nil {
		t.Fatalf("CreateIndex on an added defined column: %v", err)
	}
	wantOTS(t, del("a"), 400, "OTSParameterInvalid", "Defined column: 'a' is used by index: 't_by_a'.")
	wantOTS(t, del("b", "zz"), 400, "OTSParameterInvalid", "Defined column: 'zz' does not exist in table: 't'.")
	if d := defined(); len(d) != 2 {
		t.Fatalf("a refused DeleteDefinedColumn changed the columns: %v", d)
	}
	if err := del("b"); err != nil {
		t.Fatal(err)
	}
	if d := defined(); len(d) != 1 || d["a"] != tablestore.DefinedColumn_STRING {
		t.Fatalf("after DeleteDefinedColumn b: %v", d)
	}
}

// TestComputeSplitPointsBySize: one split, from the key's INF_MIN to its
// INF_MAX, at one location, whatever the size asked.
func TestComputeSplitPointsBySize(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"s", tString}, pkDef{"i", tInteger})
	e.put("t", pk("s", "a", "i", int64(1)), "v", int64(1))
	r, err := e.c.ComputeSplitPointsBySize(&tablestore.ComputeSplitPointsBySizeRequest{TableName: "t", SplitSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Splits) != 1 || r.Splits[0].Location != splitLocation {
		t.Fatalf("splits %+v", r.Splits)
	}
	lo, hi := r.Splits[0].LowerBound.PrimaryKeys, r.Splits[0].UpperBound.PrimaryKeys
	if len(lo) != 2 || len(hi) != 2 || lo[0].ColumnName != "s" || lo[1].ColumnName != "i" ||
		lo[0].PrimaryKeyOption != tablestore.MIN || hi[1].PrimaryKeyOption != tablestore.MAX {
		t.Errorf("split bounds %+v .. %+v", lo, hi)
	}
	_, err = e.c.ComputeSplitPointsBySize(&tablestore.ComputeSplitPointsBySizeRequest{TableName: "t", SplitSize: 0})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Split size must be greater than 0, got 0.")
	_, err = e.c.ComputeSplitPointsBySize(&tablestore.ComputeSplitPointsBySizeRequest{TableName: "nope", SplitSize: 1})
	wantOTS(t, err, 404, "OTSObjectNotExist", "Requested table does not exist.")
}
