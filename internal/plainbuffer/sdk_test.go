package plainbuffer

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

// Cross-checks against the real Go SDK (github.com/aliyun/aliyun-tablestore-go-sdk):
//   - bytes from the SDK's exported serializers decode to the expected rows,
//     and our encoder reproduces those bytes exactly;
//   - rows we encode are read back by the SDK: directly through its exported
//     readers (search/model.ReadRowsWithHeader, a copy of the unexported
//     tablestore reader, tablestore.ParsePlainbufferToNormalColumns and
//     tablestore.ReadCellValue), and end to end through a real
//     tablestore.TableStoreClient talking to a fake HTTP server, which
//     exercises the unexported tablestore reader itself.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	sdkmodel "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/search/model"
	"github.com/golang/protobuf/proto"
)

// fromSDK converts an SDK column value (int64, float64, bool, string,
// []byte) to ours; nil stays nil.
func fromSDK(v any) *Value {
	switch v := v.(type) {
	case nil:
		return nil
	case int64:
		return IntegerValue(v)
	case float64:
		return DoubleValue(v)
	case bool:
		return BooleanValue(v)
	case string:
		return StringValue(v)
	case []byte:
		return BlobValue(v)
	}
	panic(fmt.Sprintf("unexpected SDK value %T", v))
}

func sdkPK(cols ...any) *tablestore.PrimaryKey {
	pk := new(tablestore.PrimaryKey)
	for i := 0; i < len(cols); i += 2 {
		name := cols[i].(string)
		switch v := cols[i+1].(type) {
		case ValueType:
			switch v {
			case TypeInfMin:
				pk.AddPrimaryKeyColumnWithMinValue(name)
			case TypeInfMax:
				pk.AddPrimaryKeyColumnWithMaxValue(name)
			case TypeAutoIncrement:
				pk.AddPrimaryKeyColumnWithAutoIncrement(name)
			}
		default:
			pk.AddPrimaryKeyColumn(name, v)
		}
	}
	return pk
}

func pkCells(cols ...any) []Cell {
	var cs []Cell
	for i := 0; i < len(cols); i += 2 {
		c := Cell{Name: cols[i].(string)}
		if t, ok := cols[i+1].(ValueType); ok {
			c.Value = &Value{Type: t}
		} else {
			c.Value = fromSDK(cols[i+1])
		}
		cs = append(cs, c)
	}
	return cs
}

type sdkSample struct {
	name string
	b    []byte
	want Row
}

// sdkSamples are blocks produced by the SDK's exported serializers, with the
// rows they should decode to. They also seed FuzzDecodeRows.
func sdkSamples() []sdkSample {
	var out []sdkSample
	add := func(name string, b []byte, want Row) { out = append(out, sdkSample{name, b, want}) }

	pk := []any{"pk_s", "user-1", "pk_i", int64(42), "pk_b", []byte{0, 1, 2}}

	put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: sdkPK(pk...)}
	put.AddColumn("s", "hello, 世界")
	put.AddColumn("empty", "")
	put.AddColumn("i", int64(-7))
	put.AddColumn("imax", int64(math.MaxInt64))
	put.AddColumn("d", 3.5)
	put.AddColumn("nan", math.NaN())
	put.AddColumn("negzero", math.Copysign(0, -1))
	put.AddColumn("t", true)
	put.AddColumn("f", false)
	put.AddColumn("bin", []byte{9, 8, 0xff})
	put.AddColumn("nobin", []byte{})
	put.AddColumnWithTimestamp("ts", "v", 1_700_000_000_123)
	put.AddColumnWithTimestamp("tsneg", int64(1), -5)
	add("PutRowChange", put.Serialize(), Row{
		PrimaryKey: pkCells(pk...),
		Columns: []Cell{
			{Name: "s", Value: StringValue("hello, 世界")},
			{Name: "empty", Value: StringValue("")},
			{Name: "i", Value: IntegerValue(-7)},
			{Name: "imax", Value: IntegerValue(math.MaxInt64)},
			{Name: "d", Value: DoubleValue(3.5)},
			{Name: "nan", Value: DoubleValue(math.NaN())},
			{Name: "negzero", Value: DoubleValue(math.Copysign(0, -1))},
			{Name: "t", Value: BooleanValue(true)},
			{Name: "f", Value: BooleanValue(false)},
			{Name: "bin", Value: BlobValue([]byte{9, 8, 0xff})},
			{Name: "nobin", Value: BlobValue([]byte{})},
			{Name: "ts", Value: StringValue("v"), Timestamp: ptr[int64](1_700_000_000_123)},
			{Name: "tsneg", Value: IntegerValue(1), Timestamp: ptr[int64](-5)},
		},
	})

	putPKOnly := &tablestore.PutRowChange{TableName: "t", PrimaryKey: sdkPK("pk", "x")}
	add("PutRowChange without columns", putPKOnly.Serialize(), Row{PrimaryKey: pkCells("pk", "x")})

	autoInc := &tablestore.PutRowChange{TableName: "t", PrimaryKey: sdkPK("pk", "x", "id", TypeAutoIncrement)}
	autoInc.AddColumn("c", int64(1))
	add("PutRowChange with AUTO_INCREMENT", autoInc.Serialize(), Row{
		PrimaryKey: pkCells("pk", "x", "id", TypeAutoIncrement),
		Columns:    []Cell{{Name: "c", Value: IntegerValue(1)}},
	})

	// SDK quirk: in a row change an INF_MIN/INF_MAX key column is written as
	// AUTO_INCREMENT (PrimaryKeyColumnInner.toColumnValue returns nil for
	// them and a nil ColumnValue is written as AUTO_INCREMENT).
	infPut := &tablestore.PutRowChange{TableName: "t", PrimaryKey: sdkPK("a", TypeInfMin, "b", TypeInfMax)}
	add("PutRowChange with INF_MIN/INF_MAX (SDK writes AUTO_INCREMENT)", infPut.Serialize(), Row{
		PrimaryKey: pkCells("a", TypeAutoIncrement, "b", TypeAutoIncrement),
	})

	upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: sdkPK(pk...)}
	upd.PutColumn("a", int64(1))
	upd.PutColumnWithTimestamp("b", "x", 123)
	upd.DeleteColumn("c")
	upd.DeleteColumnWithTimestamp("d", 456)
	upd.IncrementColumn("e", 5)
	upd.IncrementColumn("e2", -3)
	upd.PutColumn("f", 2.25)
	upd.PutColumn("g", []byte("blob"))
	upd.PutColumn("h", false)
	add("UpdateRowChange", upd.Serialize(), Row{
		PrimaryKey: pkCells(pk...),
		Columns: []Cell{
			{Name: "a", Value: IntegerValue(1)},
			{Name: "b", Value: StringValue("x"), Timestamp: ptr[int64](123)},
			{Name: "c", Op: OpDeleteAllVersions},
			{Name: "d", Op: OpDeleteOneVersion, Timestamp: ptr[int64](456)},
			{Name: "e", Value: IntegerValue(5), Op: OpIncrement},
			{Name: "e2", Value: IntegerValue(-3), Op: OpIncrement},
			{Name: "f", Value: DoubleValue(2.25)},
			{Name: "g", Value: BlobValue([]byte("blob"))},
			{Name: "h", Value: BooleanValue(false)},
		},
	})

	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: sdkPK(pk...)}
	add("DeleteRowChange", del.Serialize(), Row{PrimaryKey: pkCells(pk...), DeleteMarker: true})

	add("PrimaryKey.Build(false)", sdkPK(pk...).Build(false), Row{PrimaryKey: pkCells(pk...)})
	add("PrimaryKey.Build(true)", sdkPK("k", int64(-1)).Build(true), Row{PrimaryKey: pkCells("k", int64(-1)), DeleteMarker: true})
	add("range start", sdkPK("a", "m", "b", TypeInfMin, "c", TypeInfMin).Build(false),
		Row{PrimaryKey: pkCells("a", "m", "b", TypeInfMin, "c", TypeInfMin)})
	add("range end", sdkPK("a", TypeInfMax, "b", TypeInfMax).Build(false),
		Row{PrimaryKey: pkCells("a", TypeInfMax, "b", TypeInfMax)})
	add("auto-increment key", sdkPK("a", "m", "id", TypeAutoIncrement).Build(false),
		Row{PrimaryKey: pkCells("a", "m", "id", TypeAutoIncrement)})
	add("empty key", new(tablestore.PrimaryKey).Build(false), Row{})
	return out
}

func TestDecodeSDKSerializedRows(t *testing.T) {
	for _, s := range sdkSamples() {
		t.Run(s.name, func(t *testing.T) {
			got, err := DecodeRow(s.b)
			if err != nil {
				t.Fatalf("DecodeRow(%x): %v", s.b, err)
			}
			if !sameRow(got, s.want) {
				t.Fatalf("decoded\n %s\nwant\n %s", fmtRow(got), fmtRow(s.want))
			}
			if enc := EncodeRow(s.want); !bytes.Equal(enc, s.b) {
				t.Fatalf("our encoding differs from the SDK's:\n ours %x\n  sdk %x", enc, s.b)
			}
			// Every checksum byte is checked: flipping any of them fails.
			cells, rows := checksumOffsets(t, s.b)
			for _, off := range append(cells, rows...) {
				c := bytes.Clone(s.b)
				c[off] ^= 0x5a
				if _, err := DecodeRow(c); err == nil {
					t.Fatalf("flipped checksum at %d accepted", off)
				}
			}
		})
	}
}

func TestFilterValuesFromSDK(t *testing.T) {
	for _, v := range []any{int64(0), int64(-123456789), 1.5, math.Inf(1), true, false, "", "abc", []byte{}, []byte{1, 2}} {
		cond := tablestore.NewSingleColumnCondition("col", tablestore.CT_EQUAL, v)
		f := tablestore.NewSingleColumnValueFilter(cond)
		got, err := DecodeValueNoLengthPrefix(f.ColumnValue)
		if err != nil || !sameValue(&got, fromSDK(v)) {
			t.Fatalf("filter value %#v: decoded %v, %v from %x", v, got, err, f.ColumnValue)
		}
		if enc := EncodeValueNoLengthPrefix(*fromSDK(v)); !bytes.Equal(enc, f.ColumnValue) {
			t.Fatalf("filter value %#v: ours %x, SDK %x", v, enc, f.ColumnValue)
		}
		cv := tablestore.ColumnValue{Type: sdkColumnType(v), Value: v}
		if b := cv.WriteCellValueWithoutLengthPrefix(); !bytes.Equal(b, f.ColumnValue) {
			t.Fatalf("WriteCellValueWithoutLengthPrefix(%#v) = %x, filter has %x", v, b, f.ColumnValue)
		}
	}
}

func sdkColumnType(v any) tablestore.ColumnType {
	switch v.(type) {
	case int64:
		return tablestore.ColumnType_INTEGER
	case float64:
		return tablestore.ColumnType_DOUBLE
	case bool:
		return tablestore.ColumnType_BOOLEAN
	case string:
		return tablestore.ColumnType_STRING
	}
	return tablestore.ColumnType_BINARY
}

// readerRows is a block exercising everything the SDK readers can see.
func readerRows() []Row {
	return []Row{
		{
			PrimaryKey: pkCells("pk_s", "user-1", "pk_i", int64(-42), "pk_b", []byte{0, 0xff}),
			Columns: []Cell{
				{Name: "s", Value: StringValue("héllo"), Timestamp: ptr[int64](1_700_000_000_001)},
				{Name: "s", Value: StringValue("older"), Timestamp: ptr[int64](1_600_000_000_000)},
				{Name: "i", Value: IntegerValue(math.MinInt64), Timestamp: ptr[int64](1)},
				{Name: "d", Value: DoubleValue(-2.5), Timestamp: ptr[int64](2)},
				{Name: "b", Value: BooleanValue(true), Timestamp: ptr[int64](3)},
				{Name: "bin", Value: BlobValue([]byte{1, 2, 3}), Timestamp: ptr[int64](4)},
				{Name: "empty", Value: StringValue(""), Timestamp: ptr[int64](5)},
			},
		},
		{PrimaryKey: pkCells("pk_s", "user-2", "pk_i", int64(0), "pk_b", []byte{}), Columns: []Cell{{Name: "x", Value: IntegerValue(9)}}},
		{PrimaryKey: pkCells("pk_s", "user-3", "pk_i", int64(1), "pk_b", []byte{1}), DeleteMarker: true, Sequence: &SequenceInfo{Epoch: 3, Timestamp: 1_700_000_000_000_000, RowIndex: 2}},
		{PrimaryKey: pkCells("pk_s", TypeInfMin, "pk_i", TypeInfMax, "pk_b", TypeAutoIncrement)},
	}
}

func TestSDKReadsOurRows(t *testing.T) {
	rows := readerRows()
	b := EncodeRows(rows)

	got, err := sdkmodel.ReadRowsWithHeader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("search/model.ReadRowsWithHeader: %v", err)
	}
	if len(got) != len(rows) {
		t.Fatalf("SDK read %d rows, want %d", len(got), len(rows))
	}
	checkCells := func(i int, what string, sdk []*sdkmodel.PlainBufferCell, want []Cell) {
		t.Helper()
		if len(sdk) != len(want) {
			t.Fatalf("row %d: SDK read %d %s cells, want %d", i, len(sdk), what, len(want))
		}
		for j, c := range sdk {
			w := want[j]
			if string(c.CellName) != w.Name {
				t.Fatalf("row %d %s cell %d: name %q, want %q", i, what, j, c.CellName, w.Name)
			}
			var ts int64
			if w.Timestamp != nil {
				ts = *w.Timestamp
			}
			if c.CellTimestamp != ts {
				t.Fatalf("row %d %s cell %d: timestamp %d, want %d", i, what, j, c.CellTimestamp, ts)
			}
			switch w.Value.Type {
			case TypeInfMin, TypeInfMax, TypeAutoIncrement:
				// The SDK reader has no representation for these.
				if c.CellValue.Value != nil {
					t.Fatalf("row %d %s cell %d: SDK value %v for %s", i, what, j, c.CellValue.Value, w.Value.Type)
				}
			default:
				if !sameValue(fromSDK(c.CellValue.Value), w.Value) {
					t.Fatalf("row %d %s cell %d: SDK value %#v, want %v", i, what, j, c.CellValue.Value, w.Value)
				}
			}
		}
	}
	for i, r := range got {
		checkCells(i, "pk", r.PrimaryKey, rows[i].PrimaryKey)
		checkCells(i, "data", r.Cells, rows[i].Columns)
		if r.HasDeleteMarker != rows[i].DeleteMarker {
			t.Fatalf("row %d: SDK delete marker %v", i, r.HasDeleteMarker)
		}
		if s := rows[i].Sequence; s == nil {
			if r.Extension != nil {
				t.Fatalf("row %d: SDK read an extension", i)
			}
		} else if r.Extension == nil || r.Extension.Epoch != s.Epoch || r.Extension.Timestamp != s.Timestamp || r.Extension.RowIndex != s.RowIndex {
			t.Fatalf("row %d: SDK extension %+v, want %+v", i, r.Extension, s)
		}
	}

	// The tablestore package's own reader, through its exported wrapper.
	cols, err := tablestore.ParsePlainbufferToNormalColumns(EncodeRow(rows[0]))
	if err != nil {
		t.Fatalf("ParsePlainbufferToNormalColumns: %v", err)
	}
	if len(cols) != len(rows[0].Columns) {
		t.Fatalf("ParsePlainbufferToNormalColumns read %d columns", len(cols))
	}
	for j, c := range cols {
		w := rows[0].Columns[j]
		if c.ColumnName != w.Name || c.Timestamp != *w.Timestamp || !sameValue(fromSDK(c.Value), w.Value) {
			t.Fatalf("column %d: SDK read %+v, want %s", j, c, fmtCell(w))
		}
	}

	// tablestore.ReadCellValue reads a length-prefixed value (what follows
	// TAG_CELL_VALUE) and reports INF_MAX.
	for _, v := range sampleValues() {
		if v == nil || v.Type == TypeInfMin || v.Type == TypeAutoIncrement {
			continue
		}
		enc := EncodeRow(Row{PrimaryKey: []Cell{{Name: "k", Value: v}}})
		start := 4 + 1 + 1 + 1 + 4 + len("k") + 1
		cv, isInfMax := tablestore.ReadCellValue(bytes.NewReader(enc[start:]))
		if v.Type == TypeInfMax {
			if !isInfMax || cv != nil {
				t.Fatalf("ReadCellValue(INF_MAX) = %v, %v", cv, isInfMax)
			}
			continue
		}
		if isInfMax || !sameValue(fromSDK(cv.Value), v) {
			t.Fatalf("ReadCellValue(%v) = %#v, %v", v, cv.Value, isInfMax)
		}
	}
}

// fakeOTS serves the Tablestore protocol to a real SDK client: each handler
// gets the raw request body and returns the response message.
func fakeOTS(t *testing.T, handlers map[string]func(body []byte) proto.Message) *tablestore.TableStoreClient {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := handlers[r.URL.Path]
		if h == nil {
			t.Errorf("unexpected request %s", r.URL.Path)
			w.WriteHeader(http.StatusNotImplemented)
			return
		}
		out, err := proto.Marshal(h(body))
		if err != nil {
			t.Errorf("%s: marshal response: %v", r.URL.Path, err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0
	cfg.MaxRetryTime = 0
	return tablestore.NewClientWithConfig(srv.URL, "inst", "ak", "sk", "", cfg)
}

func consumed() *otsprotocol.ConsumedCapacity {
	return &otsprotocol.ConsumedCapacity{CapacityUnit: &otsprotocol.CapacityUnit{Read: proto.Int32(1), Write: proto.Int32(0)}}
}

func unmarshal(t *testing.T, body []byte, m proto.Message) {
	t.Helper()
	if err := proto.Unmarshal(body, m); err != nil {
		t.Errorf("unmarshal %T: %v", m, err)
	}
}

// decodeAs decodes b with DecodeRow and reports a mismatch with want.
func decodeAs(t *testing.T, what string, b []byte, want Row) {
	t.Helper()
	got, err := DecodeRow(b)
	if err != nil {
		t.Errorf("%s: DecodeRow(%x): %v", what, b, err)
		return
	}
	if !sameRow(got, want) {
		t.Errorf("%s: decoded\n %s\nwant\n %s", what, fmtRow(got), fmtRow(want))
	}
}

// filterValue digs the value out of a single-column filter or condition.
func filterValue(t *testing.T, b []byte) Value {
	t.Helper()
	var f otsprotocol.Filter
	unmarshal(t, b, &f)
	if f.GetType() != otsprotocol.FilterType_FT_SINGLE_COLUMN_VALUE {
		t.Errorf("filter type %v", f.GetType())
	}
	var s otsprotocol.SingleColumnValueFilter
	unmarshal(t, f.Filter, &s)
	v, err := DecodeValueNoLengthPrefix(s.ColumnValue)
	if err != nil {
		t.Errorf("filter value %x: %v", s.ColumnValue, err)
	}
	return v
}

func checkSDKColumns(t *testing.T, what string, got []*tablestore.AttributeColumn, want []Cell) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: SDK returned %d columns, want %d", what, len(got), len(want))
	}
	for i, c := range got {
		w := want[i]
		var ts int64
		if w.Timestamp != nil {
			ts = *w.Timestamp
		}
		if c.ColumnName != w.Name || c.Timestamp != ts || !sameValue(fromSDK(c.Value), w.Value) {
			t.Fatalf("%s: column %d is %+v, want %s", what, i, c, fmtCell(w))
		}
	}
}

func checkSDKPK(t *testing.T, what string, got *tablestore.PrimaryKey, want []Cell) {
	t.Helper()
	if got == nil || len(got.PrimaryKeys) != len(want) {
		t.Fatalf("%s: SDK primary key %v, want %d columns", what, got, len(want))
	}
	for i, c := range got.PrimaryKeys {
		if c.ColumnName != want[i].Name || !sameValue(fromSDK(c.Value), want[i].Value) {
			t.Fatalf("%s: key column %d is %+v, want %s", what, i, c, fmtCell(want[i]))
		}
	}
}

func TestSDKClientEndToEnd(t *testing.T) {
	pk := []any{"pk_s", "user-1", "pk_i", int64(42)}
	stored := readerRows()[0]
	stored.PrimaryKey = pkCells(pk...)

	client := fakeOTS(t, map[string]func([]byte) proto.Message{
		"/GetRow": func(body []byte) proto.Message {
			var req otsprotocol.GetRowRequest
			unmarshal(t, body, &req)
			decodeAs(t, "GetRow key", req.PrimaryKey, Row{PrimaryKey: pkCells(pk...)})
			if v := filterValue(t, req.Filter); !sameValue(&v, IntegerValue(18)) {
				t.Errorf("GetRow filter value %v", v)
			}
			return &otsprotocol.GetRowResponse{Consumed: consumed(), Row: EncodeRow(stored)}
		},
		"/GetRange": func(body []byte) proto.Message {
			var req otsprotocol.GetRangeRequest
			unmarshal(t, body, &req)
			decodeAs(t, "GetRange start", req.InclusiveStartPrimaryKey, Row{PrimaryKey: pkCells("pk_s", TypeInfMin, "pk_i", TypeInfMin)})
			decodeAs(t, "GetRange end", req.ExclusiveEndPrimaryKey, Row{PrimaryKey: pkCells("pk_s", TypeInfMax, "pk_i", TypeInfMax)})
			return &otsprotocol.GetRangeResponse{
				Consumed:            consumed(),
				Rows:                EncodeRows([]Row{stored, {PrimaryKey: pkCells("pk_s", "user-2", "pk_i", int64(7))}}),
				NextStartPrimaryKey: EncodeRow(Row{PrimaryKey: pkCells("pk_s", "user-3", "pk_i", int64(0))}),
				DataBlockType:       otsprotocol.DataBlockType_DBT_PLAIN_BUFFER.Enum(),
			}
		},
		"/PutRow": func(body []byte) proto.Message {
			var req otsprotocol.PutRowRequest
			unmarshal(t, body, &req)
			decodeAs(t, "PutRow row", req.Row, Row{
				PrimaryKey: pkCells("pk_s", "user-1", "id", TypeAutoIncrement),
				Columns:    []Cell{{Name: "c", Value: StringValue("v"), Timestamp: ptr[int64](99)}},
			})
			if v := filterValue(t, req.Condition.ColumnCondition); !sameValue(&v, StringValue("old")) {
				t.Errorf("PutRow condition value %v", v)
			}
			return &otsprotocol.PutRowResponse{Consumed: consumed(), Row: EncodeRow(Row{PrimaryKey: pkCells("pk_s", "user-1", "id", int64(1001))})}
		},
		"/UpdateRow": func(body []byte) proto.Message {
			var req otsprotocol.UpdateRowRequest
			unmarshal(t, body, &req)
			decodeAs(t, "UpdateRow change", req.RowChange, Row{
				PrimaryKey: pkCells(pk...),
				Columns: []Cell{
					{Name: "a", Value: BooleanValue(true)},
					{Name: "c", Op: OpDeleteAllVersions},
					{Name: "d", Op: OpDeleteOneVersion, Timestamp: ptr[int64](456)},
					{Name: "n", Value: IntegerValue(5), Op: OpIncrement},
				},
			})
			return &otsprotocol.UpdateRowResponse{Consumed: consumed(), Row: EncodeRow(Row{
				PrimaryKey: pkCells(pk...),
				Columns:    []Cell{{Name: "n", Value: IntegerValue(15), Timestamp: ptr[int64](1_700_000_000_000)}},
			})}
		},
		"/DeleteRow": func(body []byte) proto.Message {
			var req otsprotocol.DeleteRowRequest
			unmarshal(t, body, &req)
			decodeAs(t, "DeleteRow key", req.PrimaryKey, Row{PrimaryKey: pkCells(pk...), DeleteMarker: true})
			return &otsprotocol.DeleteRowResponse{Consumed: consumed()}
		},
		"/GetStreamRecord": func(body []byte) proto.Message {
			put, del := otsprotocol.ActionType_UPDATE_ROW, otsprotocol.ActionType_DELETE_ROW
			return &otsprotocol.GetStreamRecordResponse{
				Consumed: consumed(),
				StreamRecords: []*otsprotocol.GetStreamRecordResponse_StreamRecord{
					{ActionType: &put, Record: EncodeRow(Row{
						PrimaryKey: pkCells(pk...),
						Columns: []Cell{
							{Name: "p", Value: DoubleValue(0.5), Timestamp: ptr[int64](10)},
							{Name: "d1", Op: OpDeleteOneVersion, Timestamp: ptr[int64](11)},
							{Name: "da", Op: OpDeleteAllVersions},
						},
						Sequence: &SequenceInfo{Epoch: 1, Timestamp: 1_700_000_000_000_000, RowIndex: 0},
					})},
					{ActionType: &del, Record: EncodeRow(Row{
						PrimaryKey:   pkCells(pk...),
						DeleteMarker: true,
						Sequence:     &SequenceInfo{Epoch: 1, Timestamp: 1_700_000_000_000_001, RowIndex: 1},
					})},
				},
			}
		},
		"/ComputeSplitPointsBySize": func(body []byte) proto.Message {
			str, integer := otsprotocol.PrimaryKeyType_STRING, otsprotocol.PrimaryKeyType_INTEGER
			return &otsprotocol.ComputeSplitPointsBySizeResponse{
				Consumed: consumed(),
				Schema:   []*otsprotocol.PrimaryKeySchema{{Name: proto.String("pk_s"), Type: &str}, {Name: proto.String("pk_i"), Type: &integer}},
				SplitPoints: [][]byte{
					EncodeRow(Row{PrimaryKey: pkCells("pk_s", "m")}),
					EncodeRow(Row{PrimaryKey: pkCells("pk_s", "t", "pk_i", TypeInfMax)}),
				},
			}
		},
	})

	getRow, err := client.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: sdkPK(pk...), MaxVersion: 2,
		Filter: tablestore.NewSingleColumnCondition("age", tablestore.CT_GREATER_THAN, int64(18)),
	}})
	if err != nil {
		t.Fatalf("GetRow: %v", err)
	}
	checkSDKPK(t, "GetRow", &getRow.PrimaryKey, stored.PrimaryKey)
	checkSDKColumns(t, "GetRow", getRow.Columns, stored.Columns)

	getRange, err := client.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName:       "t",
		StartPrimaryKey: sdkPK("pk_s", TypeInfMin, "pk_i", TypeInfMin),
		EndPrimaryKey:   sdkPK("pk_s", TypeInfMax, "pk_i", TypeInfMax),
		Direction:       tablestore.FORWARD, MaxVersion: 1,
	}})
	if err != nil {
		t.Fatalf("GetRange: %v", err)
	}
	if len(getRange.Rows) != 2 {
		t.Fatalf("GetRange returned %d rows", len(getRange.Rows))
	}
	checkSDKPK(t, "GetRange row 0", getRange.Rows[0].PrimaryKey, stored.PrimaryKey)
	checkSDKColumns(t, "GetRange row 0", getRange.Rows[0].Columns, stored.Columns)
	checkSDKPK(t, "GetRange row 1", getRange.Rows[1].PrimaryKey, pkCells("pk_s", "user-2", "pk_i", int64(7)))
	checkSDKColumns(t, "GetRange row 1", getRange.Rows[1].Columns, nil)
	checkSDKPK(t, "GetRange next start", getRange.NextStartPrimaryKey, pkCells("pk_s", "user-3", "pk_i", int64(0)))

	putChange := &tablestore.PutRowChange{TableName: "t", PrimaryKey: sdkPK("pk_s", "user-1", "id", TypeAutoIncrement)}
	putChange.AddColumnWithTimestamp("c", "v", 99)
	putChange.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	putChange.SetColumnCondition(tablestore.NewSingleColumnCondition("c", tablestore.CT_EQUAL, "old"))
	putChange.SetReturnPk()
	putRow, err := client.PutRow(&tablestore.PutRowRequest{PutRowChange: putChange})
	if err != nil {
		t.Fatalf("PutRow: %v", err)
	}
	checkSDKPK(t, "PutRow", &putRow.PrimaryKey, pkCells("pk_s", "user-1", "id", int64(1001)))

	updChange := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: sdkPK(pk...)}
	updChange.PutColumn("a", true)
	updChange.DeleteColumn("c")
	updChange.DeleteColumnWithTimestamp("d", 456)
	updChange.IncrementColumn("n", 5)
	updChange.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	updChange.SetReturnIncrementValue()
	updChange.AppendIncrementColumnToReturn("n")
	updRow, err := client.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: updChange})
	if err != nil {
		t.Fatalf("UpdateRow: %v", err)
	}
	checkSDKColumns(t, "UpdateRow", updRow.Columns, []Cell{{Name: "n", Value: IntegerValue(15), Timestamp: ptr[int64](1_700_000_000_000)}})

	delChange := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: sdkPK(pk...)}
	delChange.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := client.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: delChange}); err != nil {
		t.Fatalf("DeleteRow: %v", err)
	}

	iter := tablestore.ShardIterator("it")
	stream, err := client.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: &iter})
	if err != nil {
		t.Fatalf("GetStreamRecord: %v", err)
	}
	if len(stream.Records) != 2 {
		t.Fatalf("GetStreamRecord returned %d records", len(stream.Records))
	}
	r0, r1 := stream.Records[0], stream.Records[1]
	if *r0.Info != (tablestore.RecordSequenceInfo{Epoch: 1, Timestamp: 1_700_000_000_000_000, RowIndex: 0}) ||
		*r1.Info != (tablestore.RecordSequenceInfo{Epoch: 1, Timestamp: 1_700_000_000_000_001, RowIndex: 1}) {
		t.Fatalf("stream sequence info %v, %v", r0.Info, r1.Info)
	}
	checkSDKPK(t, "stream record", r0.PrimaryKey, pkCells(pk...))
	if r1.Type != tablestore.AT_Delete || len(r1.Columns) != 0 {
		t.Fatalf("delete record: %v", r1)
	}
	if len(r0.Columns) != 3 ||
		r0.Columns[0].Type != tablestore.RCT_Put || *r0.Columns[0].Name != "p" || r0.Columns[0].Value != 0.5 || *r0.Columns[0].Timestamp != 10 ||
		r0.Columns[1].Type != tablestore.RCT_DeleteOneVersion || *r0.Columns[1].Name != "d1" || *r0.Columns[1].Timestamp != 11 ||
		r0.Columns[2].Type != tablestore.RCT_DeleteAllVersions || *r0.Columns[2].Name != "da" {
		t.Fatalf("stream record columns: %v", r0)
	}

	splits, err := client.ComputeSplitPointsBySize(&tablestore.ComputeSplitPointsBySizeRequest{TableName: "t", SplitSize: 1})
	if err != nil {
		t.Fatalf("ComputeSplitPointsBySize: %v", err)
	}
	if len(splits.Splits) != 3 {
		t.Fatalf("ComputeSplitPointsBySize returned %d splits", len(splits.Splits))
	}
	mid := splits.Splits[1]
	lo, hi := mid.LowerBound.PrimaryKeys, mid.UpperBound.PrimaryKeys
	if lo[0].Value != "m" || lo[1].PrimaryKeyOption != tablestore.MIN ||
		hi[0].Value != "t" || hi[1].PrimaryKeyOption != tablestore.MAX {
		t.Fatalf("split bounds %v .. %v", lo, hi)
	}
}
