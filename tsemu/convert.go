package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"math"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/base"
	"github.com/tablekit/tablekit/internal/plainbuffer"
	"github.com/tablekit/tablekit/internal/tsproto"
	"github.com/tablekit/tablekit/rowmodel"
)

// This file translates between the wire (PlainBuffer, otsprotocol) and
// tablekit values, applying Tablestore's checks with Tablestore's messages
// on the way in.

func checkTableName(name string) *otsError {
	if !base.ValidName(name) {
		return paramErr("Invalid table name: %s.", name)
	}
	return nil
}

func checkColumnName(name string) *otsError {
	if !base.ValidName(name) {
		return paramErr("Invalid column name: %s.", name)
	}
	return nil
}

// vtName is the name Tablestore's messages give a value type.
func vtName(t plainbuffer.ValueType) string {
	switch t {
	case plainbuffer.TypeInteger:
		return "VT_INTEGER"
	case plainbuffer.TypeDouble:
		return "VT_DOUBLE"
	case plainbuffer.TypeBoolean:
		return "VT_BOOLEAN"
	case plainbuffer.TypeString:
		return "VT_STRING"
	case plainbuffer.TypeBlob:
		return "VT_BLOB"
	case plainbuffer.TypeInfMin:
		return "VT_INF_MIN"
	case plainbuffer.TypeInfMax:
		return "VT_INF_MAX"
	case plainbuffer.TypeAutoIncrement:
		return "VT_AUTO_INCREMENT"
	}
	return t.String()
}

// keyTypeVT is the name Tablestore's messages give key type t.
func keyTypeVT(t tablekit.Type) string {
	if !t.IsKeyType() {
		return t.String()
	}
	return vtName(wireKeyType(t))
}

func wireKeyType(t tablekit.Type) plainbuffer.ValueType {
	switch t {
	case tablekit.TypeInteger:
		return plainbuffer.TypeInteger
	case tablekit.TypeString:
		return plainbuffer.TypeString
	}
	return plainbuffer.TypeBlob
}

// toValue converts a finite wire value to a tablekit value.
func toValue(v *plainbuffer.Value) tablekit.Value {
	switch v.Type {
	case plainbuffer.TypeInteger:
		return tablekit.Integer(v.Int)
	case plainbuffer.TypeDouble:
		return tablekit.Double(v.Float)
	case plainbuffer.TypeBoolean:
		return tablekit.Boolean(v.Bool)
	case plainbuffer.TypeString:
		return tablekit.String(string(v.Bytes))
	case plainbuffer.TypeBlob:
		return tablekit.Binary(v.Bytes)
	case plainbuffer.TypeInfMin:
		return tablekit.InfMin
	case plainbuffer.TypeInfMax:
		return tablekit.InfMax
	}
	return tablekit.Value{}
}

// fromValue converts a stored tablekit value to the wire.
func fromValue(v tablekit.Value) *plainbuffer.Value {
	switch v.Type() {
	case tablekit.TypeInteger:
		i, _ := v.Int()
		return plainbuffer.IntegerValue(i)
	case tablekit.TypeDouble:
		f, _ := v.Float()
		return plainbuffer.DoubleValue(f)
	case tablekit.TypeBoolean:
		b, _ := v.Bool()
		return plainbuffer.BooleanValue(b)
	case tablekit.TypeString:
		s, _ := v.Str()
		return &plainbuffer.Value{Type: plainbuffer.TypeString, Bytes: readOnlyBytes(s)}
	case tablekit.TypeBinary:
		s, _ := v.BytesString()
		return plainbuffer.BlobValue(readOnlyBytes(s))
	}
	// Never reached for stored data: keys and cells are finite values.
	panic("tsemu: cannot encode " + v.GoString())
}

// readOnlyBytes returns the bytes of s without a copy (an answer's values
// are not copied before they are encoded): they must not be modified, and
// fromValue's values are only ever encoded.
func readOnlyBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// decodeKey decodes a PlainBuffer block holding one primary key and checks
// it against the schema. bound allows INF_MIN/INF_MAX (GetRange bounds).
func decodeKey(meta *tablekit.TableMeta, b []byte, bound bool) (tablekit.PrimaryKey, plainbuffer.Row, *otsError) {
	return decodeKeyAuto(meta, b, bound, false)
}

// decodeKeyAuto is decodeKey; auto allows the AUTO_INCREMENT placeholder
// as the value of the table's auto-increment column (a row to put or
// update), decoded as tablekit.AutoIncrement.
func decodeKeyAuto(meta *tablekit.TableMeta, b []byte, bound, auto bool) (tablekit.PrimaryKey, plainbuffer.Row, *otsError) {
	row, err := plainbuffer.DecodeRow(b)
	if err != nil {
		return nil, row, paramErr("%s", err.Error())
	}
	k, oe := checkKeyAuto(meta, row.PrimaryKey, bound, auto)
	return k, row, oe
}

// checkKey applies Tablestore's primary-key validation (OTSInvalidPK
// messages computed from the schema) and converts the key.
func checkKey(meta *tablekit.TableMeta, cells []plainbuffer.Cell, bound bool) (tablekit.PrimaryKey, *otsError) {
	return checkKeyAuto(meta, cells, bound, false)
}

// checkKeyAuto is checkKey; auto as in decodeKeyAuto.
func checkKeyAuto(meta *tablekit.TableMeta, cells []plainbuffer.Cell, bound, auto bool) (tablekit.PrimaryKey, *otsError) {
	if len(cells) != len(meta.Key) {
		return nil, invalidPK("Validate PK size fail. Input: %d, Meta: %d.", len(cells), len(meta.Key))
	}
	key := make(tablekit.PrimaryKey, len(cells))
	for i, c := range cells {
		kc := meta.Key[i]
		if c.Name != kc.Name {
			return nil, invalidPK("Validate PK name fail. Input: %s, Meta: %s.", c.Name, kc.Name)
		}
		if c.Value == nil || c.Op != plainbuffer.OpPut || c.Timestamp != nil {
			return nil, paramErr("Invalid primary key column: '%s' must carry a value and nothing else.", c.Name)
		}
		t := c.Value.Type
		inf := t == plainbuffer.TypeInfMin || t == plainbuffer.TypeInfMax
		if inf && bound {
			key[i] = tablekit.KeyPart{Name: c.Name, Value: toValue(c.Value)}
			continue
		}
		if t == plainbuffer.TypeAutoIncrement && auto && kc.AutoIncrement {
			key[i] = tablekit.KeyPart{Name: c.Name, Value: tablekit.AutoIncrement}
			continue
		}
		if t != wireKeyType(kc.Type) {
			return nil, invalidPK("Validate PK type fail. Input: %s, Meta: %s.", vtName(t), keyTypeVT(kc.Type))
		}
		if (t == plainbuffer.TypeString || t == plainbuffer.TypeBlob) && len(c.Value.Bytes) > tablekit.MaxKeyValueSize {
			return nil, paramErr("The length of primary key column: '%s' exceeded the MaxLength:%d with CurrentLength:%d.",
				c.Name, tablekit.MaxKeyValueSize, len(c.Value.Bytes))
		}
		if t == plainbuffer.TypeString && !utf8.Valid(c.Value.Bytes) {
			return nil, paramErr("The value of primary key column: '%s' is not valid UTF-8.", c.Name)
		}
		key[i] = tablekit.KeyPart{Name: c.Name, Value: toValue(c.Value)}
	}
	return key, nil
}

// encodeKey encodes a key-only row (RT_PK, next_start_primary_key).
func encodeKey(k tablekit.PrimaryKey) []byte {
	return plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: keyCells(k)})
}

func keyCells(k tablekit.PrimaryKey) []plainbuffer.Cell {
	cells := make([]plainbuffer.Cell, len(k))
	for i, p := range k {
		cells[i] = plainbuffer.Cell{Name: p.Name, Value: fromValue(p.Value)}
	}
	return cells
}

// wireRow converts a row read from tablekit to PlainBuffer's form: key,
// then every cell with its timestamp.
func wireRow(k tablekit.PrimaryKey, cols []tablekit.Column) plainbuffer.Row {
	r := plainbuffer.Row{PrimaryKey: keyCells(k), Columns: make([]plainbuffer.Cell, len(cols))}
	for i, c := range cols {
		ts := c.Version
		r.Columns[i] = plainbuffer.Cell{Name: c.Name, Value: fromValue(c.Value), Timestamp: &ts}
	}
	return r
}

func isKeyName(meta *tablekit.TableMeta, name string) bool {
	for _, kc := range meta.Key {
		if kc.Name == name {
			return true
		}
	}
	return false
}

// checkAttrValue checks an attribute value the way Tablestore reports it.
func checkAttrValue(name string, v *plainbuffer.Value) *otsError {
	switch v.Type {
	case plainbuffer.TypeInfMin:
		return paramErr("INF_MIN is an invalid type for the attribute column.")
	case plainbuffer.TypeInfMax:
		return paramErr("INF_MAX is an invalid type for the attribute column.")
	case plainbuffer.TypeAutoIncrement:
		return paramErr("AUTO_INCREMENT is an invalid type for the attribute column.")
	case plainbuffer.TypeDouble:
		if math.IsNaN(v.Float) {
			return paramErr("NaN can't be set to double value.")
		}
		if math.IsInf(v.Float, 0) {
			return paramErr("Infinity can't be set to double value.")
		}
	case plainbuffer.TypeString, plainbuffer.TypeBlob:
		if len(v.Bytes) > tablekit.MaxValueSize {
			return paramErr("The length of attribute column: '%s' exceeded the MaxLength:%d with CurrentLength:%d.",
				name, tablekit.MaxValueSize, len(v.Bytes))
		}
		if v.Type == plainbuffer.TypeString && !utf8.Valid(v.Bytes) {
			return paramErr("The value of attribute column: '%s' is not valid UTF-8.", name)
		}
	}
	return nil
}

// checkTimestamp applies the write window (SPEC §5, Tablestore's
// deviation_cell_version_in_sec and TTL) to a cell's timestamp.
func checkTimestamp(meta *tablekit.TableMeta, name string, ts, now int64) *otsError {
	if ts < 0 || ts >= math.MaxInt64/1000 || rowmodel.CheckVersion(meta.Options, ts, now) != "" {
		return paramErr("Invalid timestamp. Cell:%s", name)
	}
	return nil
}

// putColumns checks the attribute cells of a PutRow and converts them.
func putColumns(meta *tablekit.TableMeta, cells []plainbuffer.Cell, now int64) ([]tablekit.Column, *otsError) {
	if len(cells) > tablekit.MaxColumnsPerWrite {
		return nil, paramErr("The number of attribute columns exceeds the limit, limit count: %d, column count: %d.",
			tablekit.MaxColumnsPerWrite, len(cells))
	}
	cols := make([]tablekit.Column, len(cells))
	size := 0
	type id struct {
		name string
		ts   int64
	}
	seen := make(map[id]bool, len(cells))
	for i, c := range cells {
		if oe := checkColumnName(c.Name); oe != nil {
			return nil, oe
		}
		if isKeyName(meta, c.Name) {
			return nil, paramErr("Duplicated attribute column name with primary key column: '%s' while putting row.", c.Name)
		}
		if c.Op != plainbuffer.OpPut {
			return nil, paramErr("Invalid cell type %s of column: '%s' while putting row.", c.Op, c.Name)
		}
		if c.Value == nil {
			return nil, paramErr("The value of attribute column: '%s' is missing while putting row.", c.Name)
		}
		if oe := checkAttrValue(c.Name, c.Value); oe != nil {
			return nil, oe
		}
		ts := now
		if c.Timestamp != nil {
			ts = *c.Timestamp
			if oe := checkTimestamp(meta, c.Name, ts, now); oe != nil {
				return nil, oe
			}
			cols[i].Version = ts
		}
		if seen[id{c.Name, ts}] {
			return nil, paramErr("Duplicated attribute column name: '%s' while putting row.", c.Name)
		}
		seen[id{c.Name, ts}] = true
		cols[i].Name = c.Name
		cols[i].Value = toValue(c.Value)
		size += len(c.Name) + cols[i].Value.Size() + 8
	}
	if size > tablekit.MaxWriteSize {
		return nil, paramErr("The total data size of PutRow request exceeds the limit, limit size: %d, data size: %d.", tablekit.MaxWriteSize, size)
	}
	return cols, nil
}

// updateChanges checks the cells of an UpdateRow and converts them.
func updateChanges(meta *tablekit.TableMeta, cells []plainbuffer.Cell, now int64) ([]tablekit.Change, *otsError) {
	if len(cells) == 0 {
		return nil, paramErr("No column specified while updating row.")
	}
	if len(cells) > tablekit.MaxColumnsPerWrite {
		return nil, paramErr("The number of attribute columns exceeds the limit, limit count: %d, column count: %d.",
			tablekit.MaxColumnsPerWrite, len(cells))
	}
	changes := make([]tablekit.Change, len(cells))
	size := 0
	for i, c := range cells {
		if oe := checkColumnName(c.Name); oe != nil {
			return nil, oe
		}
		if isKeyName(meta, c.Name) {
			return nil, paramErr("Duplicated attribute column name with primary key column: '%s' while updating row.", c.Name)
		}
		switch c.Op {
		case plainbuffer.OpPut:
			if c.Value == nil {
				return nil, paramErr("The value of attribute column: '%s' is missing while updating row.", c.Name)
			}
			if oe := checkAttrValue(c.Name, c.Value); oe != nil {
				return nil, oe
			}
			ch := tablekit.Put(c.Name, toValue(c.Value))
			if c.Timestamp != nil {
				if oe := checkTimestamp(meta, c.Name, *c.Timestamp, now); oe != nil {
					return nil, oe
				}
				ch.Version = *c.Timestamp
			}
			changes[i] = ch
			size += len(c.Name) + ch.Value.Size() + 8
		case plainbuffer.OpDeleteAllVersions:
			if c.Value != nil || c.Timestamp != nil {
				return nil, paramErr("DELETE_ALL_VERSION of column: '%s' must carry neither value nor timestamp.", c.Name)
			}
			changes[i] = tablekit.DeleteColumn(c.Name)
		case plainbuffer.OpDeleteOneVersion:
			if c.Value != nil || c.Timestamp == nil {
				return nil, paramErr("DELETE_ONE_VERSION of column: '%s' must carry a timestamp and no value.", c.Name)
			}
			if *c.Timestamp < 0 {
				return nil, paramErr("Invalid timestamp. Cell:%s", c.Name)
			}
			changes[i] = tablekit.DeleteVersion(c.Name, *c.Timestamp)
		case plainbuffer.OpIncrement:
			if c.Value == nil || c.Value.Type != plainbuffer.TypeInteger {
				return nil, paramErr("INCREMENT of column: '%s' needs an INTEGER value.", c.Name)
			}
			if c.Timestamp != nil {
				return nil, paramErr("INCREMENT of column: '%s' must not carry a timestamp.", c.Name)
			}
			changes[i] = tablekit.Increment(c.Name, c.Value.Int)
		default:
			return nil, paramErr("Invalid cell type %s of column: '%s' while updating row.", c.Op, c.Name)
		}
	}
	if size > tablekit.MaxWriteSize {
		return nil, paramErr("The total data size of UpdateRow request exceeds the limit, limit size: %d, data size: %d.", tablekit.MaxWriteSize, size)
	}
	return changes, nil
}

// maxFilterDepth bounds filter nesting, as tablekit does.
const maxFilterDepth = 32

// decodeFilter decodes a serialized otsprotocol.Filter (a read filter or
// a column condition) into a tablekit filter.
// Filters of reads may name primary-key columns (the service evaluates
// them; see keyFilter); column conditions of writes may not.
func decodeFilter(meta *tablekit.TableMeta, b []byte, allowKey bool) (tablekit.Filter, *otsError) {
	if oe := checkFilterSize(b); oe != nil { // limits.go
		return nil, oe
	}
	var f otsprotocol.Filter
	if err := proto.Unmarshal(b, &f); err != nil {
		return nil, errParse
	}
	return filterMsg(meta, &f, 0, allowKey)
}

func filterMsg(meta *tablekit.TableMeta, f *otsprotocol.Filter, depth int, allowKey bool) (tablekit.Filter, *otsError) {
	if depth > maxFilterDepth {
		return nil, paramErr("The filter is nested more than %d levels deep.", maxFilterDepth)
	}
	switch f.GetType() {
	case otsprotocol.FilterType_FT_SINGLE_COLUMN_VALUE:
		var sf otsprotocol.SingleColumnValueFilter
		if err := proto.Unmarshal(f.GetFilter(), &sf); err != nil {
			return nil, errParse
		}
		return singleFilter(meta, &sf, allowKey)
	case otsprotocol.FilterType_FT_COMPOSITE_COLUMN_VALUE:
		var cf otsprotocol.CompositeColumnValueFilter
		if err := proto.Unmarshal(f.GetFilter(), &cf); err != nil {
			return nil, errParse
		}
		op, ok := tsproto.LogicOps.FromWire(cf.GetCombinator())
		if !ok {
			return nil, paramErr("Invalid logical operator: %d.", cf.GetCombinator())
		}
		if op == tablekit.LogicNot && len(cf.SubFilters) != 1 {
			return nil, paramErr("The NOT operator needs exactly one sub filter, got %d.", len(cf.SubFilters))
		}
		if len(cf.SubFilters) == 0 {
			return nil, paramErr("The %v operator needs at least one sub filter.", op)
		}
		out := tablekit.CompositeFilter{Op: op, Filters: make([]tablekit.Filter, len(cf.SubFilters))}
		for i, sub := range cf.SubFilters {
			sf, oe := filterMsg(meta, sub, depth+1, allowKey)
			if oe != nil {
				return nil, oe
			}
			out.Filters[i] = sf
		}
		return out, nil
	case otsprotocol.FilterType_FT_COLUMN_PAGINATION:
		return nil, unsupported("ColumnPaginationFilter")
	}
	return nil, paramErr("Invalid filter type: %d.", f.GetType())
}

func singleFilter(meta *tablekit.TableMeta, sf *otsprotocol.SingleColumnValueFilter, allowKey bool) (tablekit.Filter, *otsError) {
	if sf.ValueTransRule != nil {
		return nil, unsupported("SingleColumnValueFilter with value_trans_rule (regex)")
	}
	name := sf.GetColumnName()
	if oe := checkColumnName(name); oe != nil {
		return nil, oe
	}
	if !allowKey && isKeyName(meta, name) {
		return nil, paramErr("Column condition on primary key column: '%s' is not supported by the tablekit Tablestore emulator.", name)
	}
	op, ok := tsproto.Comparators.FromWire(sf.GetComparator())
	if !ok {
		return nil, paramErr("Invalid comparator type: %d.", sf.GetComparator())
	}
	v, err := plainbuffer.DecodeValueNoLengthPrefix(sf.GetColumnValue())
	if err != nil {
		return nil, paramErr("Invalid column value of filter on column: '%s': %s", name, err.Error())
	}
	switch v.Type {
	case plainbuffer.TypeInteger, plainbuffer.TypeDouble, plainbuffer.TypeBoolean, plainbuffer.TypeString, plainbuffer.TypeBlob:
	default:
		return nil, paramErr("%s is an invalid type for the column value of a filter.", v.Type)
	}
	if oe := checkAttrValue(name, &v); oe != nil {
		return nil, oe
	}
	return tablekit.ColumnFilter{
		Column:          name,
		Op:              op,
		Value:           toValue(&v),
		FilterIfMissing: sf.GetFilterIfMissing(),
		AllVersions:     !sf.GetLatestVersionOnly(),
	}, nil
}

// condition converts a write's otsprotocol.Condition.
func condition(meta *tablekit.TableMeta, c *otsprotocol.Condition) (tablekit.Condition, *otsError) {
	var out tablekit.Condition
	if c == nil {
		return out, nil
	}
	row, ok := tsproto.RowExistences.FromWire(c.GetRowExistence())
	if !ok {
		return out, paramErr("Invalid row existence expectation: %d.", c.GetRowExistence())
	}
	out.Row = row
	if len(c.ColumnCondition) > 0 {
		f, oe := decodeFilter(meta, c.ColumnCondition, false)
		if oe != nil {
			return out, oe
		}
		out.Column = f
	}
	return out, nil
}

// readSpec is a decoded read selection: tablekit read options plus the
// resolved ReadSpec for direct Backend calls.
type readSpec struct {
	opts []tablekit.ReadOption
	spec tablekit.ReadSpec
	// keyFilter is a filter naming primary-key columns, which tablekit
	// does not evaluate: the server reads without it and applies it to
	// each row (see finish). project is then the requested projection
	// (nil: all), as spec.Columns is widened by the filter's columns.
	keyFilter tablekit.Filter
	project   []string
	// selective: the read had columns_to_get, so a row left without
	// attribute cells is absent (see finish). A time_range alone leaves
	// an existing row found, with its key and no columns.
	selective bool
	// cols is the wide-row selection the server applies itself:
	// start_column/end_column and a ColumnPaginationFilter (nil: none).
	cols *columnPage
}

// readParams are the read fields GetRow, BatchGetRow and GetRange share.
type readParams struct {
	columns     []string
	timeRange   *otsprotocol.TimeRange
	maxVersions *int32
	filter      []byte
	startColumn *string
	endColumn   *string
	token       []byte
}

// decodeTimeRange returns a read's time range as [start, end) ms; a
// specific_time excludes max_versions (withMax) and start/end.
func decodeTimeRange(tr *otsprotocol.TimeRange, withMax bool) (start, end int64, oe *otsError) {
	switch {
	case tr.SpecificTime != nil:
		if tr.StartTime != nil || tr.EndTime != nil {
			return 0, 0, paramErr("Specific time and time range cannot be given at the same time.")
		}
		if withMax {
			return 0, 0, paramErr("Specific tiemstamp and max versions cannot be given at the same time.")
		}
		start = tr.GetSpecificTime()
		if start < 0 || start == math.MaxInt64 {
			return 0, 0, paramErr("Invalid specific time: %d.", start)
		}
		return start, start + 1, nil
	case tr.StartTime != nil && tr.EndTime != nil:
		start, end = tr.GetStartTime(), tr.GetEndTime()
		if start < 0 || end <= start {
			return 0, 0, paramErr("Invalid time range: start time %d must be at least 0 and less than end time %d.", start, end)
		}
		return start, end, nil
	}
	return 0, 0, paramErr("Time range needs both start_time and end_time, or specific_time.")
}

// projection returns the attribute columns of columns_to_get, each once
// (key columns are always returned).
func projection(meta *tablekit.TableMeta, columns []string) ([]string, *otsError) {
	if len(columns) > 128 {
		return nil, paramErr("The number of columns to get exceeds the limit: 128, count: %d.", len(columns))
	}
	seen := map[string]bool{}
	out := []string{}
	for _, c := range columns {
		if oe := checkColumnName(c); oe != nil {
			return nil, oe
		}
		if isKeyName(meta, c) || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out, nil
}

// decodeRead validates a read's selection and converts it (Tablestore's
// rules: max_versions or time_range must be given; specific_time excludes
// max_versions and start/end).
func decodeRead(meta *tablekit.TableMeta, p readParams) (readSpec, *otsError) {
	var rs readSpec
	if p.startColumn != nil || p.endColumn != nil {
		if p.startColumn != nil && p.endColumn != nil && *p.startColumn >= *p.endColumn {
			return rs, paramErr("start_column '%.64s' must be less than end_column '%.64s'.", *p.startColumn, *p.endColumn)
		}
		rs.cols = &columnPage{start: p.startColumn, end: p.endColumn}
	}
	if len(p.token) > 0 {
		return rs, unsupported("Reading a row with a token")
	}
	if p.columns != nil {
		var oe *otsError
		if rs.spec.Columns, oe = projection(meta, p.columns); oe != nil {
			return rs, oe
		}
	}
	if p.timeRange == nil && p.maxVersions == nil {
		return rs, paramErr("No version condition is specified while querying row.")
	}
	if p.maxVersions != nil {
		if *p.maxVersions <= 0 {
			return rs, paramErr("max_versions must be greater than 0, got %d.", *p.maxVersions)
		}
		rs.spec.MaxVersions = int(*p.maxVersions)
		rs.opts = append(rs.opts, tablekit.MaxVersions(int(*p.maxVersions)))
	}
	if tr := p.timeRange; tr != nil {
		start, end, oe := decodeTimeRange(tr, p.maxVersions != nil)
		if oe != nil {
			return rs, oe
		}
		rs.spec.TimeRange = &tablekit.TimeRange{Start: start, End: end}
		rs.opts = append(rs.opts, tablekit.Versions(start, end))
		if p.maxVersions == nil {
			rs.spec.MaxVersions = math.MaxInt32
		}
	}
	cols := p.columns
	page, oe := decodePagination(p.filter)
	if oe != nil {
		return rs, oe
	}
	if page != nil {
		if rs.cols == nil {
			rs.cols = &columnPage{}
		}
		rs.cols.offset, rs.cols.limit = page.offset, page.limit
	} else if len(p.filter) > 0 {
		f, oe := decodeFilter(meta, p.filter, true)
		if oe != nil {
			return rs, oe
		}
		if namesKey(meta, f) {
			rs.keyFilter = f
			rs.project = rs.spec.Columns
			if rs.spec.Columns != nil {
				rs.spec.Columns = widen(rs.spec.Columns, meta, f)
				cols = append(slices.Clone(cols), rs.spec.Columns...)
			}
		} else {
			rs.spec.Filter = f
			rs.opts = append(rs.opts, tablekit.WithFilter(f))
		}
	}
	if cols != nil {
		rs.opts = append(rs.opts, tablekit.Columns(cols...))
	}
	rs.selective = len(p.columns) > 0
	return rs, nil
}

// capacity returns a ConsumedCapacity of read and write units, where a unit
// is 4 KB rounded up (at least one unit for an operation that touched a row).
func capacity(read, write int) *otsprotocol.ConsumedCapacity {
	return &otsprotocol.ConsumedCapacity{CapacityUnit: &otsprotocol.CapacityUnit{
		Read: proto.Int32(int32(read)), Write: proto.Int32(int32(write)),
	}}
}

func units(bytes int) int {
	if bytes <= 0 {
		return 1
	}
	return (bytes + 4095) / 4096
}
