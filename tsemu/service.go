package tsemu

import (
	"errors"
	"slices"
	"strings"

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
