package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"slices"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit/internal/tsproto"
)

// AddDefinedColumn and DeleteDefinedColumn change a table's defined
// columns: declared attribute names and types that secondary indexes may
// use (tablekit's model has no column schema, so they live with the rest
// of the table state the Backend does not keep). ComputeSplitPointsBySize
// answers one split, the whole table, at one location: the emulator has
// one partition.

// splitLocation is the location ComputeSplitPointsBySize reports.
const splitLocation = "tstest"

// errNoDefinedColumn refuses an Add/DeleteDefinedColumn without columns.
var errNoDefinedColumn = paramErr("No defined column is specified.")

func (s *Server) addDefinedColumn(ctx context.Context, body []byte) (proto.Message, error) {
	req, m, err := decodeTableRequest[otsprotocol.AddDefinedColumnRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	if len(req.Columns) == 0 {
		return nil, errNoDefinedColumn
	}
	var add []definedColumn
	for _, dc := range req.Columns {
		name := dc.GetName()
		if oe := checkColumnName(name); oe != nil {
			return nil, oe
		}
		if isKeyName(m, name) {
			return nil, paramErr("Defined column: '%s' has the name of a primary key column.", name)
		}
		if dc.Type == nil {
			return nil, errParse
		}
		if _, ok := tsproto.DefinedColumnTypes.FromWire(dc.GetType()); !ok {
			return nil, paramErr("Invalid defined column type: %d.", dc.GetType())
		}
		if slices.ContainsFunc(add, func(d definedColumn) bool { return d.name == name }) {
			return nil, paramErr("Duplicated defined column: '%s'.", name)
		}
		add = append(add, definedColumn{name: name, typ: int32(dc.GetType())})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.extraLocked(m.Name)
	if ex.idx.baseOf != "" {
		return nil, paramErr("Table: '%s' is an index table.", m.Name)
	}
	for _, d := range add {
		if slices.ContainsFunc(ex.definedColumns, func(x definedColumn) bool { return x.name == d.name }) {
			return nil, paramErr("Defined column: '%s' already exists in table: '%s'.", d.name, m.Name)
		}
	}
	ex.definedColumns = append(slices.Clone(ex.definedColumns), add...)
	return &otsprotocol.AddDefinedColumnResponse{}, nil
}

func (s *Server) deleteDefinedColumn(ctx context.Context, body []byte) (proto.Message, error) {
	req, m, err := decodeTableRequest[otsprotocol.DeleteDefinedColumnRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	if len(req.Columns) == 0 {
		return nil, errNoDefinedColumn
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.extraLocked(m.Name)
	for _, name := range req.Columns {
		if !slices.ContainsFunc(ex.definedColumns, func(x definedColumn) bool { return x.name == name }) {
			return nil, paramErr("Defined column: '%s' does not exist in table: '%s'.", name, m.Name)
		}
		for _, im := range ex.idx.metas {
			if slices.Contains(im.PrimaryKey, name) || slices.Contains(im.DefinedColumn, name) {
				return nil, paramErr("Defined column: '%s' is used by index: '%s'.", name, im.GetName())
			}
		}
	}
	ex.definedColumns = slices.DeleteFunc(slices.Clone(ex.definedColumns), func(x definedColumn) bool {
		return slices.Contains(req.Columns, x.name)
	})
	return &otsprotocol.DeleteDefinedColumnResponse{}, nil
}

func (s *Server) computeSplitPointsBySize(ctx context.Context, body []byte) (proto.Message, error) {
	req, m, err := decodeTableRequest[otsprotocol.ComputeSplitPointsBySizeRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	if req.GetSplitSize() <= 0 {
		return nil, paramErr("Split size must be greater than 0, got %d.", req.GetSplitSize())
	}
	if req.SplitSizeUnitInByte != nil && req.GetSplitSizeUnitInByte() <= 0 {
		return nil, paramErr("Split size unit must be greater than 0, got %d.", req.GetSplitSizeUnitInByte())
	}
	if req.SplitPointLimit != nil && req.GetSplitPointLimit() <= 0 {
		return nil, paramErr("Split point limit must be greater than 0, got %d.", req.GetSplitPointLimit())
	}
	resp := &otsprotocol.ComputeSplitPointsBySizeResponse{
		Consumed: capacity(1, 0),
		Locations: []*otsprotocol.ComputeSplitPointsBySizeResponse_SplitLocation{
			{Location: proto.String(splitLocation), Repeat: proto.Int64(1)},
		},
	}
	for _, kc := range m.Key {
		resp.Schema = append(resp.Schema, keyColumnSchema(kc))
	}
	return resp, nil
}
