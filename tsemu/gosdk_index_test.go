package tsemu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// The Go SDK's secondary-index code has no test of its own in its test
// files; its index samples (package sample of the SDK module,
// GlobalTableOperation.go and LocalIndexTableOperation.go) are what it
// ships. TestGoSDKIndexSamples builds testdata/gosdkindex, a program that
// calls them against the emulator binary, and, since the samples print
// instead of failing, checks what they print and then their effects with
// the SDK.

// goSDKIndexPrints are lines the samples print on success, with how many
// times each must appear.
var goSDKIndexPrints = []struct {
	line string
	n    int
}{
	{"Create table finished", 2},
	{"Create index finished", 2},
	{"drop index finished", 2},
	{"DescribeTableSample. indexinfo: &{testindex1 [pk1 pk2] [definedcol1 definedcol2] 0 INCR} 1", 1},
	{"DescribeTableSample finished. indexinfo: &{testindex1 [pk1 pk2] [definedcol1 definedcol2] 0 INCR} 1", 1},
	{"DescribeTableSample finished. indexinfo: &{testLocalIndex1 [pk1 definedcol1 pk2] [definedcol2] 1 INCR} 1", 1},
	{"putrow finished", 1},
	{"get row col0 result is  definedcol2 3", 1},
	{"batch write row finished", 1},
	{"get row with key pk1value1 ", 100},
	{"batchget finished", 1},
	{"=== done", 1},
}

// TestGoSDKIndexSamples runs the Go SDK's CreateTableWithGlobalIndexSample
// and CreateTableWithLocalIndexSample against
// tsemu/cmd/tablestore-emulator and checks: each step printed success
// (tables and indexes created, an index created and deleted, the index
// described, a row and 100 rows read through the local index with
// GetRow and BatchGetRow); then, with the SDK, that DescribeTable shows
// the indexes left and the defined column added, that rows put into the
// global-index table are read through its index, that the local index
// holds exactly the 100 rows (the overwritten row's old index row is
// gone), and that a deleted index, and each table, is gone.
func TestGoSDKIndexSamples(t *testing.T) {
	goBin := goTool(t)
	emu := startEmulator(t)
	bin := filepath.Join(t.TempDir(), "gosdkindex")
	build := exec.Command(goBin, "build", "-o", bin, "./tsemu/testdata/gosdkindex")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building testdata/gosdkindex: %v\n%s", err, out)
	}
	const globalTable, localTable = "gosdk_global_index", "gosdk_local_index"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, bin, DefaultInstanceName, globalTable, localTable)
	run.Env = append(os.Environ(), "endpoint="+emu.endpoint, "accessKeyId="+DefaultAccessKeyID, "secret="+emu.secret)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the samples failed: %v\n%.6000s", err, out)
	}
	text := string(out)
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(line), "failed") || strings.Contains(line, "not exist") {
			t.Errorf("a sample reports a failure: %s", line)
		}
	}
	for _, p := range goSDKIndexPrints {
		if n := strings.Count(text, p.line); n != p.n {
			t.Errorf("the samples printed %q %d times, want %d", p.line, n, p.n)
		}
	}
	if t.Failed() {
		t.Fatalf("the samples' output:\n%.6000s", out)
	}

	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	c := tablestore.NewClientWithConfig(emu.endpoint, DefaultInstanceName, DefaultAccessKeyID, emu.secret, "", cfg)

	// The global-index table: index testindex1 (index2 was created and
	// deleted), three defined columns.
	checkIndexes(t, c, globalTable, []string{"testindex1 [pk1 pk2] [definedcol1 definedcol2] global"})
	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: globalTable})
	if err != nil {
		t.Fatal(err)
	}
	var defined []string
	for _, dc := range d.TableMeta.DefinedColumns {
		defined = append(defined, dc.Name)
	}
	if want := []string{"definedcol1", "definedcol2", "definedcol3"}; !slices.Equal(defined, want) {
		t.Errorf("%s's defined columns are %v, want %v", globalTable, defined, want)
	}
	checkGone(t, c, "index2")
	for i, pk1 := range []string{"b", "a"} {
		ch := &tablestore.PutRowChange{TableName: globalTable, PrimaryKey: &tablestore.PrimaryKey{}}
		ch.PrimaryKey.AddPrimaryKeyColumn("pk1", pk1)
		ch.PrimaryKey.AddPrimaryKeyColumn("pk2", int64(i))
		ch.AddColumn("definedcol1", "v"+pk1)
		ch.AddColumn("definedcol2", int64(10+i))
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readAll(t, c, "testindex1", []string{"pk1", "pk2"}), []string{"a 1 definedcol1=va definedcol2=11", "b 0 definedcol1=vb definedcol2=10"}; !slices.Equal(got, want) {
		t.Errorf("testindex1 holds %q, want %q", got, want)
	}

	// The local-index table: index testLocalIndex1 (testLocalIndex2 was
	// created and deleted) holding the 100 rows the batch wrote, in index
	// order; the row first put at pk2 2 with col1data1 was overwritten, so
	// its old index row is gone.
	checkIndexes(t, c, localTable, []string{"testLocalIndex1 [pk1 definedcol1 pk2] [definedcol2] local"})
	checkGone(t, c, "testLocalIndex2")
	var want []string
	for i := range 100 {
		want = append(want, fmt.Sprintf("pk1value1 col1data%d %d definedcol2=%d", i, i, i))
	}
	slices.Sort(want) // the index's order: col1data0, col1data1, col1data10, ...
	if got := readAll(t, c, "testLocalIndex1", []string{"pk1", "definedcol1", "pk2"}); !slices.Equal(got, want) {
		t.Errorf("testLocalIndex1 holds %d rows %.300q..., want %d %.300q...", len(got), got, len(want), want)
	}

	// Deleting the index and the tables removes them.
	if _, err := c.DeleteIndex(&tablestore.DeleteIndexRequest{MainTableName: localTable, IndexName: "testLocalIndex1"}); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, c, localTable, nil)
	checkGone(t, c, "testLocalIndex1")
	for _, table := range []string{globalTable, localTable} {
		if _, err := c.DeleteTable(&tablestore.DeleteTableRequest{TableName: table}); err != nil {
			t.Fatal(err)
		}
		checkGone(t, c, table)
	}
	checkGone(t, c, "testindex1")
	l, err := c.ListTable()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.TableNames) != 0 {
		t.Errorf("tables left: %v", l.TableNames)
	}
}

// checkIndexes compares table's DescribeTable indexes with want, each
// "name [primary key] [defined columns] global|local".
func checkIndexes(t *testing.T, c *tablestore.TableStoreClient, table string, want []string) {
	t.Helper()
	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: table})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, im := range d.IndexMetas {
		kind := "global"
		if im.IndexType == tablestore.IT_LOCAL_INDEX {
			kind = "local"
		}
		got = append(got, fmt.Sprintf("%s %v %v %s", im.IndexName, im.Primarykey, im.DefinedColumns, kind))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s's indexes are %q, want %q", table, got, want)
	}
}

// checkGone checks that reading table fails because it does not exist.
func checkGone(t *testing.T, c *tablestore.TableStoreClient, table string) {
	t.Helper()
	_, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: table})
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) || oe.Code != "OTSObjectNotExist" {
		t.Errorf("DescribeTable %s: %v, want OTSObjectNotExist", table, err)
	}
}

// readAll reads table (or index) whole, forward, each row as its key
// values then its columns "name=value".
func readAll(t *testing.T, c *tablestore.TableStoreClient, table string, key []string) []string {
	t.Helper()
	start, end := &tablestore.PrimaryKey{}, &tablestore.PrimaryKey{}
	for _, k := range key {
		start.AddPrimaryKeyColumnWithMinValue(k)
		end.AddPrimaryKeyColumnWithMaxValue(k)
	}
	var rows []string
	for start != nil {
		r, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: table, StartPrimaryKey: start, EndPrimaryKey: end, Direction: tablestore.FORWARD, MaxVersion: 1}})
		if err != nil {
			t.Fatalf("GetRange %s: %v", table, err)
		}
		for _, row := range r.Rows {
			var parts []string
			for _, pk := range row.PrimaryKey.PrimaryKeys {
				parts = append(parts, fmt.Sprint(pk.Value))
			}
			for _, col := range row.Columns {
				parts = append(parts, fmt.Sprintf("%s=%v", col.ColumnName, col.Value))
			}
			rows = append(rows, strings.Join(parts, " "))
		}
		start = r.NextStartPrimaryKey
	}
	return rows
}
