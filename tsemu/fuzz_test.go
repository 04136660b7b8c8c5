package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
)

var fuzzOps = []string{
	"CreateTable", "ListTable", "DescribeTable", "UpdateTable", "DeleteTable", "PutRow",
	"GetRow", "UpdateRow", "DeleteRow", "BatchGetRow", "BatchWriteRow", "GetRange",
}

func fuzzRequestMsg(op string) proto.Message {
	switch op {
	case "CreateTable":
		return new(otsprotocol.CreateTableRequest)
	case "ListTable":
		return new(otsprotocol.ListTableRequest)
	case "DescribeTable":
		return new(otsprotocol.DescribeTableRequest)
	case "UpdateTable":
		return new(otsprotocol.UpdateTableRequest)
	case "DeleteTable":
		return new(otsprotocol.DeleteTableRequest)
	case "PutRow":
		return new(otsprotocol.PutRowRequest)
	case "GetRow":
		return new(otsprotocol.GetRowRequest)
	case "UpdateRow":
		return new(otsprotocol.UpdateRowRequest)
	case "DeleteRow":
		return new(otsprotocol.DeleteRowRequest)
	case "BatchGetRow":
		return new(otsprotocol.BatchGetRowRequest)
	case "BatchWriteRow":
		return new(otsprotocol.BatchWriteRowRequest)
	}
	return new(otsprotocol.GetRangeRequest)
}

func fuzzResponseMsg(op string) proto.Message {
	switch op {
	case "CreateTable":
		return new(otsprotocol.CreateTableResponse)
	case "ListTable":
		return new(otsprotocol.ListTableResponse)
	case "DescribeTable":
		return new(otsprotocol.DescribeTableResponse)
	case "UpdateTable":
		return new(otsprotocol.UpdateTableResponse)
	case "DeleteTable":
		return new(otsprotocol.DeleteTableResponse)
	case "PutRow":
		return new(otsprotocol.PutRowResponse)
	case "GetRow":
		return new(otsprotocol.GetRowResponse)
	case "UpdateRow":
		return new(otsprotocol.UpdateRowResponse)
	case "DeleteRow":
		return new(otsprotocol.DeleteRowResponse)
	case "BatchGetRow":
		return new(otsprotocol.BatchGetRowResponse)
	case "BatchWriteRow":
		return new(otsprotocol.BatchWriteRowResponse)
	}
	return new(otsprotocol.GetRangeResponse)
}

var ignoreCond = &otsprotocol.Condition{RowExistence: otsprotocol.RowExistenceExpectation_IGNORE.Enum()}

// wrapRow puts data where op carries PlainBuffer, in an otherwise valid
// request on table "fz".
func wrapRow(op string, data []byte) proto.Message {
	fz := proto.String("fz")
	switch op {
	case "PutRow":
		return &otsprotocol.PutRowRequest{TableName: fz, Row: data, Condition: ignoreCond}
	case "GetRow":
		return &otsprotocol.GetRowRequest{TableName: fz, PrimaryKey: data, MaxVersions: proto.Int32(1)}
	case "UpdateRow":
		return &otsprotocol.UpdateRowRequest{TableName: fz, RowChange: data, Condition: ignoreCond}
	case "DeleteRow":
		return &otsprotocol.DeleteRowRequest{TableName: fz, PrimaryKey: data, Condition: ignoreCond}
	case "BatchGetRow":
		return &otsprotocol.BatchGetRowRequest{Tables: []*otsprotocol.TableInBatchGetRowRequest{{TableName: fz, PrimaryKey: [][]byte{data}, MaxVersions: proto.Int32(1)}}}
	case "BatchWriteRow":
		return &otsprotocol.BatchWriteRowRequest{Tables: []*otsprotocol.TableInBatchWriteRowRequest{{TableName: fz, Rows: []*otsprotocol.RowInBatchWriteRowRequest{
			{Type: otsprotocol.OperationType_UPDATE.Enum(), RowChange: data, Condition: ignoreCond},
		}}}}
	}
	return &otsprotocol.GetRangeRequest{TableName: fz, Direction: otsprotocol.Direction_FORWARD.Enum(), MaxVersions: proto.Int32(1),
		InclusiveStartPrimaryKey: data, ExclusiveEndPrimaryKey: fzMax}
}

// wrapFilter puts data where op carries a serialized Filter.
func wrapFilter(op string, data []byte) proto.Message {
	fz := proto.String("fz")
	cond := &otsprotocol.Condition{RowExistence: otsprotocol.RowExistenceExpectation_IGNORE.Enum(), ColumnCondition: data}
	switch op {
	case "PutRow":
		return &otsprotocol.PutRowRequest{TableName: fz, Row: fzRow, Condition: cond}
	case "GetRow":
		return &otsprotocol.GetRowRequest{TableName: fz, PrimaryKey: fzKey, MaxVersions: proto.Int32(1), Filter: data}
	case "DeleteRow":
		return &otsprotocol.DeleteRowRequest{TableName: fz, PrimaryKey: fzKey, Condition: cond}
	}
	return &otsprotocol.GetRangeRequest{TableName: fz, Direction: otsprotocol.Direction_FORWARD.Enum(), MaxVersions: proto.Int32(1),
		InclusiveStartPrimaryKey: fzMin, ExclusiveEndPrimaryKey: fzMax, Filter: data}
}

var (
	fzKey = pk("k", "a", "i", int64(1)).Build(false)
	fzRow = (&tablestore.PutRowChange{PrimaryKey: pk("k", "a", "i", int64(1)), Columns: []tablestore.AttributeColumn{{ColumnName: "c", Value: int64(1)}}}).Serialize()
	fzMin = allInf(true, "k", "i").Build(false)
	fzMax = allInf(false, "k", "i").Build(false)
)

// sentinelTable's name is long and random-looking so that no mutated
// request names it: the sentinel row must survive every input unchanged.
const sentinelTable = "sentinel_q7Zt3xWv9KpLm2RfYc8NbHd4GsJe6UaT"

// FuzzRequest feeds the server arbitrary bodies (mode 0), arbitrary
// PlainBuffer inside valid protobuf (mode 1) and arbitrary filters inside
// valid protobuf (mode 2), all properly signed. The server must never
// panic or answer 5xx, must answer malformed input with 400
// OTSParameterInvalid, must fill every required field of a 200 response,
// and must leave a row written beforehand unchanged.
func FuzzRequest(f *testing.F) {
	for i, op := range fuzzOps {
		f.Add(uint8(i), uint8(0), []byte{})
		f.Add(uint8(i), uint8(1), fzRow)
		f.Add(uint8(i), uint8(1), fzKey)
		f.Add(uint8(i), uint8(2), tablestore.NewSingleColumnCondition("c", tablestore.CT_EQUAL, int64(1)).Serialize())
		if b, err := proto.Marshal(wrapRow(op, fzRow)); err == nil {
			f.Add(uint8(i), uint8(0), b)
		}
	}
	up := &tablestore.UpdateRowChange{PrimaryKey: pk("k", "a", "i", int64(2))}
	up.IncrementColumn("n", 3)
	up.DeleteColumnWithTimestamp("c", 5)
	up.DeleteColumn("d")
	f.Add(uint8(7), uint8(1), up.Serialize())
	comp := tablestore.NewCompositeColumnCondition(tablestore.LO_OR)
	comp.AddFilter(tablestore.NewSingleColumnCondition("c", tablestore.CT_LESS_THAN, "x"))
	comp.AddFilter(tablestore.NewSingleColumnCondition("d", tablestore.CT_GREATER_EQUAL, 2.5))
	f.Add(uint8(11), uint8(2), comp.Serialize())
	ct, _ := proto.Marshal(&otsprotocol.CreateTableRequest{
		TableMeta:          &otsprotocol.TableMeta{TableName: proto.String("new"), PrimaryKey: []*otsprotocol.PrimaryKeySchema{{Name: proto.String("p"), Type: otsprotocol.PrimaryKeyType_BINARY.Enum()}}},
		ReservedThroughput: &otsprotocol.ReservedThroughput{CapacityUnit: &otsprotocol.CapacityUnit{Read: proto.Int32(0), Write: proto.Int32(0)}},
		TableOptions:       &otsprotocol.TableOptions{TimeToLive: proto.Int32(-1), MaxVersions: proto.Int32(2)},
	})
	f.Add(uint8(0), uint8(0), ct)

	e := newEnv(f)
	e.createTable("fz", 2, pkDef{"k", tString}, pkDef{"i", tInteger})
	e.createTable(sentinelTable, 3, pkDef{"k", tString})
	e.put("fz", pk("k", "a", "i", int64(1)), "c", int64(1))
	e.put(sentinelTable, pk("k", "s"), "a", "keep", "b", int64(42))
	ctx := context.Background()
	sentinelKey := tablekit.Key("k", tablekit.String("s"))
	want, found, err := e.srv.client.Table(sentinelTable).GetRow(ctx, sentinelKey, tablekit.MaxVersions(3))
	if err != nil || !found || len(want.Columns) != 2 {
		f.Fatalf("sentinel: %+v %v %v", want, found, err)
	}

	fzMeta := tablekit.TableMeta{Name: "fz", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}, {Name: "i", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: 2}}
	f.Fuzz(func(t *testing.T, opIdx, mode uint8, data []byte) {
		// An earlier input may have deleted or redefined table fz; the
		// checks below assume it exists with its schema.
		if m, err := e.srv.client.DescribeTable(ctx, "fz"); err != nil || len(m.Key) != 2 || m.Key[0] != fzMeta.Key[0] || m.Key[1] != fzMeta.Key[1] {
			e.srv.client.DeleteTable(ctx, "fz")
			if err := e.srv.client.CreateTable(ctx, fzMeta); err != nil {
				t.Fatal(err)
			}
		}
		op := fuzzOps[int(opIdx)%len(fuzzOps)]
		var body []byte
		malformed := false
		switch mode % 3 {
		case 0:
			body = data
			malformed = proto.Unmarshal(data, fuzzRequestMsg(op)) != nil
		case 1:
			if op == "CreateTable" || op == "ListTable" || op == "DescribeTable" || op == "UpdateTable" || op == "DeleteTable" {
				op = "PutRow"
			}
			body, _ = proto.Marshal(wrapRow(op, data))
			_, err := plainbuffer.DecodeRows(data)
			malformed = err != nil
		case 2:
			switch op {
			case "PutRow", "GetRow", "DeleteRow", "GetRange":
			default:
				op = "GetRange"
			}
			body, _ = proto.Marshal(wrapFilter(op, data))
			// An empty filter counts as no filter.
			var fl otsprotocol.Filter
			malformed = len(data) > 0 && proto.Unmarshal(data, &fl) != nil
		}
		r := do(t, e.srv, signedRequest(t, e.srv, op, body, e.srv.AccessKeySecret()))
		if r.status >= 500 {
			t.Fatalf("%s: status %d %s %q", op, r.status, r.err.GetCode(), r.err.GetMessage())
		}
		if r.status == 200 {
			resp := fuzzResponseMsg(op)
			if err := proto.Unmarshal(r.body, resp); err != nil {
				t.Fatalf("%s: 200 response does not decode: %v", op, err)
			}
			if malformed {
				// Batches report a malformed row in the row's result.
				checkBatchRowErrors(t, op, resp)
			}
		} else if malformed && (r.status != 400 || r.err.GetCode() != "OTSParameterInvalid") {
			t.Fatalf("%s: malformed input got %d %s %q, want 400 OTSParameterInvalid", op, r.status, r.err.GetCode(), r.err.GetMessage())
		}
		got, found, err := e.srv.client.Table(sentinelTable).GetRow(ctx, sentinelKey, tablekit.MaxVersions(3))
		if err != nil || !found || len(got.Columns) != len(want.Columns) {
			t.Fatalf("sentinel changed: %+v %v %v", got, found, err)
		}
		for i := range want.Columns {
			if got.Columns[i] != want.Columns[i] {
				t.Fatalf("sentinel changed: %+v", got.Columns)
			}
		}
	})
}

func checkBatchRowErrors(t *testing.T, op string, resp proto.Message) {
	t.Helper()
	switch m := resp.(type) {
	case *otsprotocol.BatchGetRowResponse:
		for _, tr := range m.Tables {
			for _, r := range tr.Rows {
				if r.GetIsOk() || r.GetError().GetCode() != "OTSParameterInvalid" {
					t.Fatalf("%s: malformed row got %v", op, r)
				}
			}
		}
	case *otsprotocol.BatchWriteRowResponse:
		for _, tr := range m.Tables {
			for _, r := range tr.Rows {
				if r.GetIsOk() || r.GetError().GetCode() != "OTSParameterInvalid" {
					t.Fatalf("%s: malformed row got %v", op, r)
				}
			}
		}
	default:
		t.Fatalf("%s: malformed input got 200", op)
	}
}
