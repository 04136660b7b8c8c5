package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"crypto/sha1"
	"fmt"
	"slices"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// meta returns a table's schema and options, read through the client so
// its cache is fresh for the call that follows.
func (s *Server) meta(ctx context.Context, table string) (*tablekit.TableMeta, *otsError) {
	if oe := checkTableName(table); oe != nil {
		return nil, oe
	}
	m, err := s.client.DescribeTable(ctx, table)
	if err != nil {
		return nil, toOTS(err)
	}
	return &m, nil
}

func (s *Server) extra(table string) tableExtra {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.extras[table]; ok {
		return *e
	}
	return tableExtra{}
}

// tableOptions validates the options of CreateTable (create=true: absent
// fields take defaults) or UpdateTable (absent fields stay unchanged, as
// zero fields of tablekit.TableOptions do).
func tableOptions(o *otsprotocol.TableOptions, create bool) (tablekit.TableOptions, *otsError) {
	var out tablekit.TableOptions
	if create {
		out = tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: tablekit.DefaultMaxVersions, MaxVersionOffset: tablekit.DefaultMaxVersionOffset}
	}
	if o == nil {
		return out, nil
	}
	if o.TimeToLive != nil {
		ttl := int64(o.GetTimeToLive())
		switch {
		case ttl == 0 || ttl < -1:
			return out, paramErr("TimeToLive cannot be 0 or less than -1.")
		case ttl != -1 && ttl < int64(tablekit.MinTTL/time.Second):
			return out, paramErr("TimeToLive must be -1 or at least %d seconds, got %d.", int64(tablekit.MinTTL/time.Second), ttl)
		}
		out.TTL = time.Duration(ttl) * time.Second
	}
	if o.MaxVersions != nil {
		if o.GetMaxVersions() <= 0 {
			return out, paramErr("MaxVersions must be greater than 0, got %d.", o.GetMaxVersions())
		}
		out.MaxVersions = int(o.GetMaxVersions())
	}
	if o.DeviationCellVersionInSec != nil {
		if o.GetDeviationCellVersionInSec() <= 0 {
			return out, paramErr("DeviationCellVersionInSec must be greater than 0, got %d.", o.GetDeviationCellVersionInSec())
		}
		out.MaxVersionOffset = time.Duration(o.GetDeviationCellVersionInSec()) * time.Second
	}
	return out, nil
}

// wireOptions are a table's options as DescribeTable and UpdateTable
// answer them: tablekit's, and the two only the server keeps.
func wireOptions(o tablekit.TableOptions, ex tableExtra) *otsprotocol.TableOptions {
	return &otsprotocol.TableOptions{
		TimeToLive:                proto.Int32(int32(o.TTLSeconds())),
		MaxVersions:               proto.Int32(int32(o.MaxVersions)),
		DeviationCellVersionInSec: proto.Int64(o.MaxVersionOffsetSeconds()),
		AllowUpdate:               proto.Bool(!ex.noUpdate),
		UpdateFullRow:             proto.Bool(ex.fullRow),
	}
}

// checkAllowUpdate refuses an UpdateRow (alone, in a batch or in a
// transaction) on a table created or updated with allow_update=false.
// The service's wording is not recorded: this one is the emulator's.
func (s *Server) checkAllowUpdate(table string, op otsprotocol.OperationType) *otsError {
	if op == otsprotocol.OperationType_UPDATE && s.extra(table).noUpdate {
		return paramErr("UpdateRow is not allowed on table '%s': its allow_update option is false.", table)
	}
	return nil
}

func (e tableExtra) throughput() *otsprotocol.ReservedThroughputDetails {
	return &otsprotocol.ReservedThroughputDetails{
		CapacityUnit:     &otsprotocol.CapacityUnit{Read: proto.Int32(e.readCU), Write: proto.Int32(e.writeCU)},
		LastIncreaseTime: proto.Int64(e.lastIncrease),
	}
}

// keySchema sets meta.Key from CreateTable's primary key schema.
func (s *Server) keySchema(meta *tablekit.TableMeta, pks []*otsprotocol.PrimaryKeySchema) *otsError {
	if n := len(pks); n < 1 || n > tablekit.MaxKeyColumns {
		return paramErr("The number of primary key columns must be in range: [1, %d].", tablekit.MaxKeyColumns)
	}
	for i, pk := range pks {
		if oe := checkColumnName(pk.GetName()); oe != nil {
			return oe
		}
		auto, oe := s.autoIncrementColumn(meta, i, pk) // autoinc.go
		if oe != nil {
			return oe
		}
		t, ok := tsproto.KeyTypes.FromWire(pk.GetType())
		if !ok {
			return paramErr("Invalid primary key type: %d.", pk.GetType())
		}
		for _, prev := range meta.Key {
			if prev.Name == pk.GetName() {
				return paramErr("Duplicated primary key name: '%s'.", pk.GetName())
			}
		}
		meta.Key = append(meta.Key, tablekit.KeyColumn{Name: pk.GetName(), Type: t, AutoIncrement: auto})
	}
	return nil
}

// keyColumnSchema is key column kc as DescribeTable and
// ComputeSplitPointsBySize answer it: its name and type (DescribeTable
// adds the option).
func keyColumnSchema(kc tablekit.KeyColumn) *otsprotocol.PrimaryKeySchema {
	t, ok := tsproto.KeyTypes.Wire(kc.Type)
	if !ok { // never for a stored table: its key columns have key types
		t = otsprotocol.PrimaryKeyType_BINARY
	}
	return &otsprotocol.PrimaryKeySchema{Name: proto.String(kc.Name), Type: t.Enum()}
}

// definedColumns checks CreateTable's defined columns against meta's key.
func definedColumns(meta *tablekit.TableMeta, dcs []*otsprotocol.DefinedColumnSchema) ([]definedColumn, *otsError) {
	var defined []definedColumn
	for _, dc := range dcs {
		if oe := checkColumnName(dc.GetName()); oe != nil {
			return nil, oe
		}
		if isKeyName(meta, dc.GetName()) {
			return nil, paramErr("Defined column: '%s' has the name of a primary key column.", dc.GetName())
		}
		defined = append(defined, definedColumn{name: dc.GetName(), typ: int32(dc.GetType())})
	}
	return defined, nil
}

func (s *Server) createTable(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.CreateTableRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	tm := req.GetTableMeta()
	if tm == nil {
		return nil, errParse
	}
	name := tm.GetTableName()
	if oe := checkTableName(name); oe != nil {
		return nil, oe
	}
	meta := tablekit.TableMeta{Name: name}
	if oe := s.keySchema(&meta, tm.PrimaryKey); oe != nil {
		return nil, oe
	}
	defined, oe := definedColumns(&meta, tm.DefinedColumn)
	if oe != nil {
		return nil, oe
	}
	stream, oe := s.checkStreamSpec(req.GetStreamSpec())
	if oe != nil {
		return nil, oe
	}
	switch {
	case req.GetSseSpec().GetEnable():
		return nil, unsupported("Server-side encryption")
	}
	cu := req.GetReservedThroughput().GetCapacityUnit()
	if cu == nil || cu.Read == nil || cu.Write == nil {
		return nil, paramErr("Both read and write capacity unit are required to create table.")
	}
	if cu.GetRead() < 0 || cu.GetWrite() < 0 {
		return nil, paramErr("Capacity unit must not be negative: read %d, write %d.", cu.GetRead(), cu.GetWrite())
	}
	opts, oe := tableOptions(req.TableOptions, true)
	if oe != nil {
		return nil, oe
	}
	meta.Options = opts
	var indexes []*otsprotocol.IndexMeta
	var indexTables []tablekit.TableMeta
	for _, im := range append(slices.Clone(tm.IndexMeta), req.IndexMetas...) {
		full, itm, oe := indexDef(&meta, defined, im)
		if oe != nil {
			return nil, oe
		}
		if slices.ContainsFunc(indexTables, func(t tablekit.TableMeta) bool { return t.Name == itm.Name }) || itm.Name == name {
			return nil, paramErr("Duplicated index name: '%s'.", itm.Name)
		}
		indexes, indexTables = append(indexes, full), append(indexTables, itm)
	}
	if err := s.client.CreateTable(ctx, meta); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	s.mu.Lock()
	s.extras[name] = &tableExtra{
		readCU: cu.GetRead(), writeCU: cu.GetWrite(), lastIncrease: now.Unix(),
		definedColumns: defined, created: now.UnixMicro(),
		noUpdate: req.GetTableOptions().AllowUpdate != nil && !req.GetTableOptions().GetAllowUpdate(),
		fullRow:  req.GetTableOptions().GetUpdateFullRow(),
	}
	s.mu.Unlock()
	if err := s.addIndexes(ctx, &meta, indexes, indexTables, false); err != nil {
		return nil, err
	}
	if stream != nil {
		m, oe := s.meta(ctx, name)
		if oe != nil {
			return nil, oe
		}
		if err := s.applyStream(ctx, m, stream); err != nil {
			return nil, err
		}
	}
	return &otsprotocol.CreateTableResponse{}, nil
}

func (s *Server) listTable(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.ListTableRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	names, err := s.client.ListTables(ctx)
	if err != nil {
		return nil, err
	}
	// Index tables are not listed.
	names = slices.DeleteFunc(names, func(n string) bool { return s.extra(n).idx.baseOf != "" })
	return &otsprotocol.ListTableResponse{TableNames: names}, nil
}

func (s *Server) describeTable(ctx context.Context, body []byte) (proto.Message, error) {
	_, m, err := decodeTableRequest[otsprotocol.DescribeTableRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	ex := s.extra(m.Name)
	stream, err := s.streamDetails(ctx, m)
	if err != nil {
		return nil, err
	}
	tm := &otsprotocol.TableMeta{TableName: proto.String(m.Name)}
	for _, kc := range m.Key {
		pk := keyColumnSchema(kc)
		pk.Option = keyOption(kc)
		tm.PrimaryKey = append(tm.PrimaryKey, pk)
	}
	for _, dc := range ex.definedColumns {
		tm.DefinedColumn = append(tm.DefinedColumn, &otsprotocol.DefinedColumnSchema{
			Name: proto.String(dc.name), Type: otsprotocol.DefinedColumnType(dc.typ).Enum(),
		})
	}
	tm.TableId = proto.String(tableID(m.Name, ex.created))
	var indexMetas []*otsprotocol.IndexMeta
	for _, im := range ex.idx.metas {
		indexMetas = append(indexMetas, proto.Clone(im).(*otsprotocol.IndexMeta))
	}
	resp := &otsprotocol.DescribeTableResponse{
		TableMeta:                 tm,
		ReservedThroughputDetails: ex.throughput(),
		TableOptions:              wireOptions(m.Options, ex),
		TableStatus:               otsprotocol.TableStatus_ACTIVE.Enum(),
		StreamDetails:             stream,
		SseDetails:                &otsprotocol.SSEDetails{Enable: proto.Bool(false)},
		IndexMetas:                indexMetas,
	}
	// creation_time (9) is in the SDK's .proto but not in the descriptor
	// its generated code registers, so it is appended as raw bytes, with
	// the two fields the service sends that no published .proto names:
	// inner_info (12) holding a zero varint 1, and a zero varint 13.
	raw := protowire.AppendTag(nil, 9, protowire.VarintType)
	raw = protowire.AppendVarint(raw, uint64(ex.created))
	raw = protowire.AppendTag(raw, 12, protowire.BytesType)
	raw = protowire.AppendBytes(raw, []byte{1 << 3, 0})
	raw = protowire.AppendTag(raw, 13, protowire.VarintType)
	raw = protowire.AppendVarint(raw, 0)
	resp.XXX_unrecognized = raw
	return resp, nil
}

// tableID is the table's id, as the service reports it: a UUID, here
// derived from the name and creation time (stable across calls, new for a
// re-created table).
func tableID(name string, created int64) string {
	h := sha1.Sum([]byte(fmt.Sprintf("%s\x00%d", name, created)))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func (s *Server) updateTable(ctx context.Context, body []byte) (proto.Message, error) {
	req, m, err := decodeTableRequest[otsprotocol.UpdateTableRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	stream, oe := s.checkStreamSpec(req.GetStreamSpec())
	if oe != nil {
		return nil, oe
	}
	var cu *otsprotocol.CapacityUnit
	if req.ReservedThroughput != nil {
		cu = req.ReservedThroughput.GetCapacityUnit()
		if cu == nil || (cu.Read == nil && cu.Write == nil) {
			return nil, paramErr("Neither read nor writes capacity unit is set.")
		}
		if cu.GetRead() < 0 || cu.GetWrite() < 0 {
			return nil, paramErr("Capacity unit must not be negative: read %d, write %d.", cu.GetRead(), cu.GetWrite())
		}
	}
	if req.TableOptions != nil && req.TableOptions.UpdateFullRow != nil {
		// The service refuses the field in UpdateTable whatever its value
		// (the Go SDK's TestUpdateAndDescribeTable asserts the words).
		return nil, paramErr("UpdateTable request must not contain updateFullRow.")
	}
	opts, oe := tableOptions(req.TableOptions, false)
	if oe != nil {
		return nil, oe
	}
	if opts != (tablekit.TableOptions{}) {
		if err := s.client.UpdateTable(ctx, m.Name, opts); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	ex, ok := s.extras[m.Name]
	if !ok {
		ex = &tableExtra{}
		s.extras[m.Name] = ex
	}
	if o := req.TableOptions; o != nil && o.AllowUpdate != nil {
		ex.noUpdate = !o.GetAllowUpdate()
	}
	if cu != nil {
		if cu.Read != nil {
			if cu.GetRead() > ex.readCU {
				ex.lastIncrease = s.clock.Now().Unix()
			}
			ex.readCU = cu.GetRead()
		}
		if cu.Write != nil {
			if cu.GetWrite() > ex.writeCU {
				ex.lastIncrease = s.clock.Now().Unix()
			}
			ex.writeCU = cu.GetWrite()
		}
	}
	cur := *ex
	s.mu.Unlock()
	after, oe := s.meta(ctx, m.Name)
	if oe != nil {
		return nil, oe
	}
	if err := s.applyStream(ctx, after, stream); err != nil {
		return nil, err
	}
	details, err := s.streamDetails(ctx, after)
	if err != nil {
		return nil, err
	}
	return &otsprotocol.UpdateTableResponse{
		ReservedThroughputDetails: cur.throughput(),
		TableOptions:              wireOptions(after.Options, cur),
		StreamDetails:             details,
	}, nil
}

func (s *Server) deleteTable(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.DeleteTableRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	if oe := checkTableName(req.GetTableName()); oe != nil {
		return nil, oe
	}
	ex := s.extra(req.GetTableName())
	if ex.idx.baseOf != "" {
		return nil, paramErr("Table: '%s' is an index of table: '%s': delete it with DropIndex.", req.GetTableName(), ex.idx.baseOf)
	}
	if err := s.client.DeleteTable(ctx, req.GetTableName()); err != nil {
		return nil, err
	}
	s.endTableTxns(req.GetTableName())
	for _, im := range ex.idx.metas {
		if err := s.dropIndex(ctx, req.GetTableName(), im.GetName()); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	delete(s.extras, req.GetTableName())
	s.mu.Unlock()
	// DeleteTable's response body is empty: the Go SDK passes no message.
	return nil, nil
}
