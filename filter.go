package tablekit

import (
	"fmt"
	"strings"
)

// Filter selects rows by column values (SPEC §10): a [ColumnFilter] or
// [CompositeFilter] ([SingleColumnValue], [And], [Or], [Not]); nil passes
// every row. A row lacking a filter's column passes it unless the filter is
// [ColumnFilter.Required] (Tablestore's default, not DynamoDB's).
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

// ColumnFilter compares one attribute column with a constant (another type
// never matches, != included); zero flags are SPEC §10's defaults.
type ColumnFilter struct {
	Column          string
	Op              CompareOp
	Value           Value
	FilterIfMissing bool // a row lacking the column fails (SPEC's PassIfMissing = false)
	AllVersions     bool // any selected version may match (SPEC's LatestVersionOnly = false)
}

func (ColumnFilter) isFilter() {}

// SingleColumnValue returns the filter "column op v" (a row lacking column
// passes: see [Filter]).
func SingleColumnValue(column string, op CompareOp, v Value) ColumnFilter {
	return ColumnFilter{Column: column, Op: op, Value: v}
}

// Required returns f with FilterIfMissing set: a row lacking the column (a
// missing row too) fails f (under [Not], passes).
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

// CompositeFilter combines filters: And and Or one or more, Not exactly one.
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

// Condition guards a write (SPEC §9): Row and Column (if set) are checked
// atomically; else ErrConditionFailed, nothing written.
type Condition struct {
	Row    RowExistence
	Column Filter
}

// IsZero reports whether c checks nothing.
func (c Condition) IsZero() bool { return c.Row == Ignore && c.Column == nil }

// String formats f as Go-like source: `price >= Integer(10) (if present)`.
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

// String formats c as `ExpectExist && price >= Integer(10)`; zero: `Ignore`.
func (c Condition) String() string {
	switch {
	case c.Column == nil:
		return c.Row.String()
	case c.Row == Ignore:
		return filterString(c.Column)
	}
	return c.Row.String() + " && " + filterString(c.Column)
}
