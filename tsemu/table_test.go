package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
)

func TestTableLifecycle(t *testing.T) {
	e := newEnv(t)
	meta := &tablestore.TableMeta{TableName: "orders"}
	meta.AddPrimaryKeyColumn("shop", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_INTEGER)
	meta.AddPrimaryKeyColumn("blob", tablestore.PrimaryKeyType_BINARY)
	meta.DefinedColumns = []*tablestore.DefinedColumnSchema{{Name: "price", ColumnType: tablestore.DefinedColumn_DOUBLE}}
	opt := tablestore.NewTableOption(86400*3, 5)
	opt.DeviationCellVersionInSec = 600
	if _, err := e.c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta: meta, TableOption: opt, ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 7, Writecap: 9},
	}); err != nil {
		t.Fatal(err)
	}
	e.createTable("another", 1, pkDef{"k", tablestore.PrimaryKeyType_STRING})

	lt, err := e.c.ListTable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lt.TableNames, ",") != "another,orders" {
		t.Fatalf("ListTable = %v", lt.TableNames)
	}

	d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if d.TableMeta.TableName != "orders" || len(d.TableMeta.SchemaEntry) != 3 {
		t.Fatalf("meta = %+v", d.TableMeta)
	}
	wantPK := []struct {
		n string
		t tablestore.PrimaryKeyType
	}{{"shop", tablestore.PrimaryKeyType_STRING}, {"id", tablestore.PrimaryKeyType_INTEGER}, {"blob", tablestore.PrimaryKeyType_BINARY}}
	for i, w := range wantPK {
		if *d.TableMeta.SchemaEntry[i].Name != w.n || *d.TableMeta.SchemaEntry[i].Type != w.t {
			t.Errorf("pk %d = %s %v", i, *d.TableMeta.SchemaEntry[i].Name, *d.TableMeta.SchemaEntry[i].Type)
		}
	}
	if len(d.TableMeta.DefinedColumns) != 1 || d.TableMeta.DefinedColumns[0].Name != "price" || d.TableMeta.DefinedColumns[0].ColumnType != tablestore.DefinedColumn_DOUBLE {
		t.Errorf("defined columns = %+v", d.TableMeta.DefinedColumns)
	}
	if d.TableOption.TimeToAlive != 86400*3 || d.TableOption.MaxVersion != 5 || d.TableOption.DeviationCellVersionInSec != 600 {
		t.Errorf("options = %+v", d.TableOption)
	}
	if d.ReservedThroughput.Readcap != 7 || d.ReservedThroughput.Writecap != 9 {
		t.Errorf("throughput = %+v", d.ReservedThroughput)
	}

	// Defaults: deviation 86400 (the SDK's integration test asserts it).
	d, err = e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "another"})
	if err != nil {
		t.Fatal(err)
	}
	if d.TableOption.TimeToAlive != -1 || d.TableOption.MaxVersion != 1 || d.TableOption.DeviationCellVersionInSec != 86400 {
		t.Errorf("default options = %+v", d.TableOption)
	}

	up, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{
		TableName: "orders", TableOption: tablestore.NewTableOption(-1, 2),
		ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 1, Writecap: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.TableOption.TimeToAlive != -1 || up.TableOption.MaxVersion != 2 || up.TableOption.DeviationCellVersionInSec != 600 {
		t.Errorf("UpdateTable options = %+v", up.TableOption)
	}
	if up.ReservedThroughput.Readcap != 1 || up.ReservedThroughput.Writecap != 2 || up.StreamDetails == nil || up.StreamDetails.EnableStream {
		t.Errorf("UpdateTable throughput/stream = %+v %+v", up.ReservedThroughput, up.StreamDetails)
	}
	d, err = e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if d.TableOption.MaxVersion != 2 || d.TableOption.TimeToAlive != -1 {
		t.Errorf("options after update = %+v", d.TableOption)
	}

	if _, err := e.c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "orders"}); err != nil {
		t.Fatal(err)
	}
	lt, _ = e.c.ListTable()
	if strings.Join(lt.TableNames, ",") != "another" {
		t.Fatalf("ListTable after delete = %v", lt.TableNames)
	}
	// DeleteTable's body is empty.
	r := e.call("DeleteTable", &otsprotocol.DeleteTableRequest{TableName: proto.String("another")})
	if r.status != 200 || len(r.body) != 0 {
		t.Fatalf("DeleteTable: status %d, %d body bytes", r.status, len(r.body))
	}
}

func TestTableErrors(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tablestore.PrimaryKeyType_STRING})
	s := tablestore.PrimaryKeyType_STRING
	opt := func(ttl, mv int) *tablestore.TableOption { return tablestore.NewTableOption(ttl, mv) }

	wantOTS(t, e.create("t", opt(-1, 1), pkDef{"k", s}), 409, "OTSObjectAlreadyExist", "Requested table already exists.")
	wantOTS(t, e.create("1bad", opt(-1, 1), pkDef{"k", s}), 400, "OTSParameterInvalid", "Invalid table name: 1bad.")
	wantOTS(t, e.create("x", opt(-1, 1), pkDef{"bad-name", s}), 400, "OTSParameterInvalid", "Invalid column name: bad-name.")
	wantOTS(t, e.create("x", opt(-1, 1), pkDef{"a", s}, pkDef{"b", s}, pkDef{"c", s}, pkDef{"d", s}, pkDef{"e", s}),
		400, "OTSParameterInvalid", "The number of primary key columns must be in range: [1, 4].")
	wantOTS(t, e.create("x", opt(-1, 1), pkDef{"a", s}, pkDef{"a", s}), 400, "OTSParameterInvalid", "Duplicated primary key name: 'a'.")
	wantOTS(t, e.create("x", opt(0, 1), pkDef{"k", s}), 400, "OTSParameterInvalid", "TimeToLive cannot be 0 or less than -1.")
	wantOTS(t, e.create("x", opt(-2, 1), pkDef{"k", s}), 400, "OTSParameterInvalid", "TimeToLive cannot be 0 or less than -1.")
	wantOTS(t, e.create("x", opt(86399, 1), pkDef{"k", s}), 400, "OTSParameterInvalid", "TimeToLive must be -1 or at least 86400 seconds, got 86399.")
	wantOTS(t, e.create("x", opt(-1, 0), pkDef{"k", s}), 400, "OTSParameterInvalid", "MaxVersions must be greater than 0, got 0.")

	r := e.call("CreateTable", &otsprotocol.CreateTableRequest{
		TableMeta:          &otsprotocol.TableMeta{TableName: proto.String("x"), PrimaryKey: []*otsprotocol.PrimaryKeySchema{{Name: proto.String("k"), Type: otsprotocol.PrimaryKeyType_STRING.Enum()}}},
		ReservedThroughput: &otsprotocol.ReservedThroughput{CapacityUnit: &otsprotocol.CapacityUnit{Read: proto.Int32(1)}},
	})
	r.want(t, 400, "OTSParameterInvalid", "Both read and write capacity unit are required to create table.")

	for _, op := range []func() error{
		func() error {
			_, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "nope"})
			return err
		},
		func() error {
			_, err := e.c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "nope"})
			return err
		},
		func() error {
			_, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "nope", TableOption: opt(-1, 1)})
			return err
		},
		func() error {
			ch := &tablestore.PutRowChange{TableName: "nope", PrimaryKey: pk("k", "a")}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			return err
		},
		func() error {
			_, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "nope", PrimaryKey: pk("k", "a"), MaxVersion: 1}})
			return err
		},
	} {
		wantOTS(t, op(), 404, "OTSObjectNotExist", "Requested table does not exist.")
	}

	_, err := e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t", TableOption: opt(0, 1)})
	wantOTS(t, err, 400, "OTSParameterInvalid", "TimeToLive cannot be 0 or less than -1.")
	_, err = e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "bad name"})
	wantOTS(t, err, 400, "OTSParameterInvalid", "Invalid table name: bad name.")
	e.call("UpdateTable", &otsprotocol.UpdateTableRequest{TableName: proto.String("t"),
		ReservedThroughput: &otsprotocol.ReservedThroughput{CapacityUnit: &otsprotocol.CapacityUnit{}}}).
		want(t, 400, "OTSParameterInvalid", "Neither read nor writes capacity unit is set.")
	e.call("UpdateTable", &otsprotocol.UpdateTableRequest{TableName: proto.String("t"),
		TableOptions: &otsprotocol.TableOptions{DeviationCellVersionInSec: proto.Int64(-5)}}).
		want(t, 400, "OTSParameterInvalid", "DeviationCellVersionInSec must be greater than 0, got -5.")
	e.call("UpdateTable", &otsprotocol.UpdateTableRequest{TableName: proto.String("t"),
		TableOptions: &otsprotocol.TableOptions{AllowUpdate: proto.Bool(false)}}).
		want(t, 400, "OTSParameterInvalid", "allow_update=false is not supported by the tablekit Tablestore emulator.")
	// UpdateTable refuses update_full_row whatever its value, and changes
	// nothing.
	for _, full := range []bool{true, false} {
		_, err = e.c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "t",
			TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 5, UpdateFullRow: proto.Bool(full)}})
		wantOTS(t, err, 400, "OTSParameterInvalid", "UpdateTable request must not contain updateFullRow.")
	}
	if d, err := e.c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "t"}); err != nil || d.TableOption.MaxVersion == 5 {
		t.Errorf("a refused UpdateTable changed MaxVersions: %+v, %v", d.TableOption, err)
	}
}
