package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"errors"
	"slices"
	"strings"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// This file holds the places where the real service answers differently
// from tablekit's SPEC, as the calls recorded against it show (see
// fidelity_test.go): the emulator answers as the service does, and the
// tablekit adapter bridges back to the SPEC.

// namesKey reports whether filter f names a primary-key column.
func namesKey(meta *tablekit.TableMeta, f tablekit.Filter) bool {
	for _, c := range rowmodel.FilterColumns(f) {
		if isKeyName(meta, c) {
			return true
		}
	}
	return false
}

// widen adds to a projection the attribute columns filter f needs.
func widen(cols []string, meta *tablekit.TableMeta, f tablekit.Filter) []string {
	out := slices.Clone(cols)
	for _, c := range rowmodel.FilterColumns(f) {
		if !isKeyName(meta, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// finish applies what the server does itself to a row tablekit read:
// a filter naming primary-key columns (evaluated on the key's values and
// the selected cells, then the projection applied), and the service's
// rule that a row left without attribute cells by a read with
// columns_to_get is absent (with only a time_range it is found, with no
// columns). keep=false drops the row.
func (rs *readSpec) finish(key tablekit.PrimaryKey, cols []tablekit.Column, single bool) ([]tablekit.Column, bool) {
	if rs.keyFilter != nil {
		cells := make([]tablekit.Column, 0, len(key)+len(cols))
		for _, p := range key {
			cells = append(cells, tablekit.Column{Name: p.Name, Value: p.Value})
		}
		cells = append(cells, cols...)
		rowmodel.SortCells(cells)
		if !rowmodel.MatchFilter(rs.keyFilter, cells) {
			return nil, false
		}
		if rs.project != nil {
			cols = rowmodel.Project(cols, rs.project)
		}
	}
	if rs.cols != nil {
		cols = rs.cols.apply(cols)
	}
	if single && rs.selective && len(cols) == 0 {
		return nil, false
	}
	return cols, true
}

// Row-existence failures carry the service's own messages; a failed
// column condition is "Condition check failed.".
var (
	errRowExists   = &otsError{status: 403, code: "OTSConditionCheckFail", msg: "Row exists which is expected nonexistent"}
	errRowNotFound = &otsError{status: 403, code: "OTSConditionCheckFail", msg: "Row does not exist which is expected existent"}
)

// condError is the service's answer to a write whose condition c failed
// with err: which part failed is the existence part when c has no column
// condition, else what tablekit's message says (rowmodel.Check names the
// row existence first).
func condError(c tablekit.Condition, err error) error {
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		return err
	}
	var te *tablekit.Error
	existence := c.Column == nil || (errors.As(err, &te) && strings.HasPrefix(te.Msg, "row existence"))
	switch {
	case existence && c.Row == tablekit.ExpectExist:
		return errRowNotFound
	case existence && c.Row == tablekit.ExpectNotExist:
		return errRowExists
	}
	return err
}

// writeCapacity is what a write consumes: a write unit per 4 KB, and one
// read unit when it has a condition or its table has secondary indexes
// (the service reads the row to check it or to maintain them).
func writeCapacity(w *write, indexed bool) (read, write int) {
	c := w.bw.Condition
	if indexed || c.Row != tablekit.Ignore || c.Column != nil {
		read = 1
	}
	return read, units(w.sizeBytes)
}

// columnPage is a wide-row selection: the columns from start (inclusive)
// to end (exclusive) by name, then limit columns after the first offset
// (limit 0: all). A column counts once whatever its versions.
type columnPage struct {
	start, end    *string
	offset, limit int
}

// decodePagination returns the ColumnPaginationFilter b holds, nil when b
// is no filter or another one. Only a read's top-level filter may be one
// (inside a composite filter it stays refused, see filterMsg).
func decodePagination(b []byte) (*columnPage, *otsError) {
	if len(b) == 0 {
		return nil, nil
	}
	if oe := checkFilterSize(b); oe != nil { // limits.go
		return nil, oe
	}
	var f otsprotocol.Filter
	if err := proto.Unmarshal(b, &f); err != nil {
		return nil, errParse
	}
	if f.GetType() != otsprotocol.FilterType_FT_COLUMN_PAGINATION {
		return nil, nil
	}
	var pf otsprotocol.ColumnPaginationFilter
	if err := proto.Unmarshal(f.GetFilter(), &pf); err != nil || pf.Offset == nil || pf.Limit == nil {
		return nil, errParse
	}
	if pf.GetOffset() < 0 {
		return nil, paramErr("ColumnPaginationFilter: offset must not be negative, got %d.", pf.GetOffset())
	}
	if pf.GetLimit() <= 0 {
		return nil, paramErr("ColumnPaginationFilter: limit must be greater than 0, got %d.", pf.GetLimit())
	}
	return &columnPage{offset: int(pf.GetOffset()), limit: int(pf.GetLimit())}, nil
}

// apply returns the cells of cols (sorted by name) that p selects.
func (p *columnPage) apply(cols []tablekit.Column) []tablekit.Column {
	out := cols[:0:0]
	n := -1 // index of the current column among those in range
	for i, c := range cols {
		if (p.start != nil && c.Name < *p.start) || (p.end != nil && c.Name >= *p.end) {
			continue
		}
		if i == 0 || c.Name != cols[i-1].Name || n < 0 {
			n++
		}
		if n >= p.offset && (p.limit == 0 || n < p.offset+p.limit) {
			out = append(out, c)
		}
	}
	return out
}
