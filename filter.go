package tablekit

import (
	"fmt"
	"strings"
)

// Filter selects rows by their column values (SPEC §10). The implementations
// are [ColumnFilter] and [CompositeFilter]; build them with
// [SingleColumnValue], [And], [Or] and [Not]. A nil Filter passes every row.
//
// A row that lacks a filter's column passes it unless the filter is
// [ColumnFilter.Required] (Tablestore's default, the opposite of DynamoDB's):
// where the intent is "only rows that have this value", write
// SingleColumnValue(...).Required().
type Filter interface {
	isFilter()
}

// CompareOp is the comparison of a [ColumnFilter].
type CompareOp uint8

// The comparisons of SPEC §10.
const (
	Equal CompareOp = iota + 1
	NotEqual
	Greater
	GreaterEqual
	Less
	LessEqual
)

// String returns the operator's symbol.
func (op CompareOp) String() string {
	switch op {
	case Equal:
		return "=="
	case NotEqual:
		return "!="
	case Greater:
		return ">"
	case GreaterEqual:
		return ">="
	case Less:
		return "<"
	case LessEqual:
		return "<="
	}
	return "CompareOp(?)"
}

// ColumnFilter compares one attribute column with a constant.
//
// The zero values of the two flags are SPEC's defaults: a row that lacks the
// column passes (PassIfMissing = true), and only the newest selected version
// is tested (LatestVersionOnly = true). A cell whose type differs from
// Value's never matches, for every operator, != included.
type ColumnFilter struct {
	Column string
	Op     CompareOp
	Value  Value
	// FilterIfMissing makes a row that lacks the column fail
	// (SPEC's PassIfMissing = false; Tablestore's filter_if_missing).
	FilterIfMissing bool
	// AllVersions lets any selected visible version match
	// (SPEC's LatestVersionOnly = false).
	AllVersions bool
}

func (ColumnFilter) isFilter() {}

// SingleColumnValue returns the filter "column op v", which a row that lacks
// the column passes (SPEC's default, Tablestore's): as a filter it keeps
// such rows, and as a write condition ([IfMatch]) it lets the write go
// ahead, creating the row if it is absent. Where the intent is "only if it
// has this value", add [ColumnFilter.Required]:
//
//	tablekit.IfMatch(tablekit.SingleColumnValue("status", tablekit.Equal, tablekit.String("pending")).Required())
//
// Only the newest selected version is tested (see [ColumnFilter]).
func SingleColumnValue(column string, op CompareOp, v Value) ColumnFilter {
	return ColumnFilter{Column: column, Op: op, Value: v}
}

// Required returns f with FilterIfMissing set: a row that lacks the
// column fails f, so a filter drops it and a condition refuses the write
// with ErrConditionFailed (a missing row lacks every column). Under [Not],
// a row that lacks the column fails the inner filter and so passes.
func (f ColumnFilter) Required() ColumnFilter {
	f.FilterIfMissing = true
	return f
}

// LogicOp combines filters.
type LogicOp uint8

// The combinators of SPEC §10.
const (
	LogicAnd LogicOp = iota + 1
	LogicOr
	LogicNot
)

// String returns "AND", "OR" or "NOT".
func (op LogicOp) String() string {
	switch op {
	case LogicAnd:
		return "AND"
	case LogicOr:
		return "OR"
	case LogicNot:
		return "NOT"
	}
	return "LogicOp(?)"
}

// CompositeFilter combines filters: And and Or take one or more, Not exactly one.
type CompositeFilter struct {
	Op      LogicOp
	Filters []Filter
}

func (CompositeFilter) isFilter() {}

// And passes a row that passes every filter.
func And(filters ...Filter) CompositeFilter { return CompositeFilter{Op: LogicAnd, Filters: filters} }

// Or passes a row that passes any filter.
func Or(filters ...Filter) CompositeFilter { return CompositeFilter{Op: LogicOr, Filters: filters} }

// Not passes a row that f does not pass.
func Not(f Filter) CompositeFilter { return CompositeFilter{Op: LogicNot, Filters: []Filter{f}} }

// RowExistence is the row part of a write condition (SPEC §9).
type RowExistence uint8

// The row-existence expectations.
const (
	Ignore RowExistence = iota
	ExpectExist
	ExpectNotExist
)

// String returns the expectation's name.
func (r RowExistence) String() string {
	switch r {
	case Ignore:
		return "Ignore"
	case ExpectExist:
		return "ExpectExist"
	case ExpectNotExist:
		return "ExpectNotExist"
	}
	return "RowExistence(?)"
}

// Condition guards a write: the row must meet Row and, when Column is set,
// its visible data must pass Column. Both are checked atomically with the
// write; a failed check returns ErrConditionFailed and writes nothing.
type Condition struct {
	Row    RowExistence
	Column Filter
}

// IsZero reports whether c checks nothing.
func (c Condition) IsZero() bool { return c.Row == Ignore && c.Column == nil }

// String formats f as Go-like source, for messages and test failures:
// `price >= Integer(10)`, with `(if present)` when a missing column passes
// and `(any version)` when every selected version may match.
func (f ColumnFilter) String() string {
	s := f.Column + " " + f.Op.String() + " " + f.Value.GoString()
	if f.AllVersions {
		s += " (any version)"
	}
	if f.FilterIfMissing {
		s += " (column required)"
	}
	return s
}

// String formats f as `AND(a, b)`, `OR(a, b)` or `NOT(a)`.
func (f CompositeFilter) String() string {
	var b strings.Builder
	b.WriteString(f.Op.String())
	b.WriteByte('(')
	for i, s := range f.Filters {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(filterString(s))
	}
	b.WriteByte(')')
	return b.String()
}

func filterString(f Filter) string {
	if s, ok := f.(fmt.Stringer); ok && f != nil {
		return s.String()
	}
	return fmt.Sprint(f)
}

// String formats c as `ExpectExist && price >= Integer(10)`; the zero
// Condition is `Ignore`.
func (c Condition) String() string {
	switch {
	case c.Column == nil:
		return c.Row.String()
	case c.Row == Ignore:
		return filterString(c.Column)
	}
	return c.Row.String() + " && " + filterString(c.Column)
}
