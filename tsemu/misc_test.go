package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
	"github.com/tablekit/tablekit/localengine"
)

// TestUpdateCellErrors sends update cells the SDK would not build.
func TestUpdateCellErrors(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	key := []plainbuffer.Cell{{Name: "k", Value: plainbuffer.StringValue("a")}}
	ts := int64(5)
	update := func(c plainbuffer.Cell) rawResp {
		return e.call("UpdateRow", &otsprotocol.UpdateRowRequest{TableName: proto.String("t"),
			RowChange: plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: key, Columns: []plainbuffer.Cell{c}}),
			Condition: ignoreCond})
	}
	update(plainbuffer.Cell{Name: "c", Op: plainbuffer.OpDeleteOneVersion}).
		want(t, 400, "OTSParameterInvalid", "DELETE_ONE_VERSION of column: 'c' must carry a timestamp and no value.")
	update(plainbuffer.Cell{Name: "c", Op: plainbuffer.OpDeleteAllVersions, Timestamp: &ts}).
		want(t, 400, "OTSParameterInvalid", "DELETE_ALL_VERSION of column: 'c' must carry neither value nor timestamp.")
	update(plainbuffer.Cell{Name: "c", Op: plainbuffer.OpIncrement, Value: plainbuffer.StringValue("1")}).
		want(t, 400, "OTSParameterInvalid", "INCREMENT of column: 'c' needs an INTEGER value.")
	update(plainbuffer.Cell{Name: "c", Op: plainbuffer.OpIncrement, Value: plainbuffer.IntegerValue(1), Timestamp: &ts}).
		want(t, 400, "OTSParameterInvalid", "INCREMENT of column: 'c' must not carry a timestamp.")
	update(plainbuffer.Cell{Name: "c"}).
		want(t, 400, "OTSParameterInvalid", "The value of attribute column: 'c' is missing while updating row.")
	update(plainbuffer.Cell{Name: "k", Value: plainbuffer.IntegerValue(1)}).
		want(t, 400, "OTSParameterInvalid", "Duplicated attribute column name with primary key column: 'k' while updating row.")
	update(plainbuffer.Cell{Name: "c", Value: plainbuffer.DoubleValue(1), Timestamp: &ts}).
		want(t, 400, "OTSParameterInvalid", "Invalid timestamp. Cell:c")
	// A put row must not carry cell operations.
	e.call("PutRow", &otsprotocol.PutRowRequest{TableName: proto.String("t"),
		Row:       plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: key, Columns: []plainbuffer.Cell{{Name: "c", Op: plainbuffer.OpDeleteAllVersions}}}),
		Condition: ignoreCond}).
		want(t, 400, "OTSParameterInvalid", "Invalid cell type DELETE_ALL_VERSION of column: 'c' while putting row.")
	// Two cells of one column at one version.
	e.call("PutRow", &otsprotocol.PutRowRequest{TableName: proto.String("t"),
		Row: plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: key, Columns: []plainbuffer.Cell{
			{Name: "c", Value: plainbuffer.IntegerValue(1)}, {Name: "c", Value: plainbuffer.IntegerValue(2)}}}),
		Condition: ignoreCond}).
		want(t, 400, "OTSParameterInvalid", "Duplicated attribute column name: 'c' while putting row.")
	if r := e.get("t", pk("k", "a"), 1); len(r.PrimaryKey.PrimaryKeys) != 0 {
		t.Fatalf("a refused write created the row: %+v", r)
	}
}

// TestUnsupportedFeatures: what tablekit does not model is refused, clearly.
func TestUnsupportedFeatures(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	key := pk("k", "a").Build(false)
	suffix := " is not supported by the tablekit Tablestore emulator."
	e.call("GetRow", &otsprotocol.GetRowRequest{TableName: proto.String("t"), PrimaryKey: key, MaxVersions: proto.Int32(1), StartColumn: proto.String("a")}).
		want(t, 400, "OTSParameterInvalid", "start_column/end_column"+suffix)
	e.call("GetRange", &otsprotocol.GetRangeRequest{TableName: proto.String("t"), Direction: otsprotocol.Direction_FORWARD.Enum(), MaxVersions: proto.Int32(1),
		InclusiveStartPrimaryKey: allInf(true, "k").Build(false), ExclusiveEndPrimaryKey: allInf(false, "k").Build(false), ReturnEntirePrimaryKeys: proto.Bool(false)}).
		want(t, 400, "OTSParameterInvalid", "return_entire_primary_keys=false"+suffix)
	// The SDK's DescribeTable of an emulator table reports no stream.
	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "t"})
	if err != nil || d.StreamDetails == nil || d.StreamDetails.EnableStream {
		t.Fatalf("DescribeTable: %+v %v", d, err)
	}
}

// TestConcurrentIncrements: increments from many SDK clients at once lose
// nothing.
func TestConcurrentIncrements(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tString})
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := sdkClient(e.srv, e.srv.AccessKeySecret())
			for i := 0; i < each; i++ {
				up := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("k", "ctr")}
				up.IncrementColumn("n", 1)
				up.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
				if _, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: up}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := colMap(e.get("t", pk("k", "ctr"), 1).Columns)["n"]; len(n) != 1 || n[0] != int64(workers*each) {
		t.Fatalf("n = %v, want %d", n, workers*each)
	}
}

// TestSharedBackend: a Backend given in Options is used as is and is not
// closed by Close.
func TestSharedBackend(t *testing.T) {
	be := localengine.New()
	defer be.Close()
	ctx := context.Background()
	tk := tablekit.NewClient(be)
	if err := tk.CreateTable(ctx, tablekit.TableMeta{Name: "pre", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	if err := tk.Table("pre").PutRow(ctx, tablekit.Key("k", tablekit.String("a")), []tablekit.Column{{Name: "v", Value: tablekit.Integer(9)}}); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	c := sdkClient(srv, srv.AccessKeySecret())
	r, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "pre", PrimaryKey: pk("k", "a"), MaxVersion: 1}})
	if err != nil || len(r.Columns) != 1 || r.Columns[0].Value != int64(9) {
		t.Fatalf("GetRow through the server = %+v, %v", r, err)
	}
	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "pre"})
	if err != nil || d.TableOption.DeviationCellVersionInSec != 86400 {
		t.Fatalf("DescribeTable of a table the server did not create: %+v, %v", d, err)
	}
	srv.Close()
	srv.Close() // idempotent
	if _, err := be.ListTables(ctx); err != nil {
		t.Fatalf("the shared backend was closed: %v", err)
	}
	if _, err := NewServer(Options{Backend: be, Addr: "256.1.1.1:0"}); err == nil {
		t.Fatal("NewServer on a bad address succeeded")
	}
}

// TestBackendRequired: the server imports no engine, so a missing Backend
// is the caller's error, said before anything starts.
func TestBackendRequired(t *testing.T) {
	srv, err := NewServer(Options{})
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "Options.Backend") {
		t.Fatalf("NewServer without a Backend = %v, %v; want ErrInvalidArgument naming Options.Backend", srv, err)
	}
}
