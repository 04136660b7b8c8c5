package tablekit

// Filter selects rows by their column values (SPEC §10). The implementations
// are [ColumnFilter] and [CompositeFilter]; build them with
// [SingleColumnValue], [And], [Or] and [Not]. A nil Filter passes every row.
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

// SingleColumnValue returns the filter "column op v" with SPEC's defaults.
func SingleColumnValue(column string, op CompareOp, v Value) ColumnFilter {
	return ColumnFilter{Column: column, Op: op, Value: v}
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

// MatchFilter evaluates f over a row's selected cells: cols sorted by
// ascending name and, within a name, newest version first (the order reads
// return). It is the one evaluator engines share; adapters that translate
// filters into native predicates must agree with it.
func MatchFilter(f Filter, cols []Column) bool {
	switch f := f.(type) {
	case nil:
		return true
	case ColumnFilter:
		return f.match(cols)
	case *ColumnFilter:
		return f.match(cols)
	case CompositeFilter:
		return f.match(cols)
	case *CompositeFilter:
		return f.match(cols)
	}
	return false
}

func (f *ColumnFilter) match(cols []Column) bool {
	found := false
	for i := range cols {
		c := &cols[i]
		if c.Name != f.Column {
			if found {
				break
			}
			continue
		}
		if found && !f.AllVersions {
			break
		}
		found = true
		if c.Value.typ == f.Value.typ && f.Op.holds(Compare(c.Value, f.Value)) {
			return true
		}
	}
	if !found {
		return !f.FilterIfMissing
	}
	return false
}

func (op CompareOp) holds(c int) bool {
	switch op {
	case Equal:
		return c == 0
	case NotEqual:
		return c != 0
	case Greater:
		return c > 0
	case GreaterEqual:
		return c >= 0
	case Less:
		return c < 0
	case LessEqual:
		return c <= 0
	}
	return false
}

func (f *CompositeFilter) match(cols []Column) bool {
	switch f.Op {
	case LogicAnd:
		for _, s := range f.Filters {
			if !MatchFilter(s, cols) {
				return false
			}
		}
		return true
	case LogicOr:
		for _, s := range f.Filters {
			if MatchFilter(s, cols) {
				return true
			}
		}
		return false
	case LogicNot:
		return len(f.Filters) == 1 && !MatchFilter(f.Filters[0], cols)
	}
	return false
}

// FilterColumns returns the names of the columns f reads, each once.
func FilterColumns(f Filter) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(Filter)
	walk = func(f Filter) {
		switch f := f.(type) {
		case ColumnFilter:
			if !seen[f.Column] {
				seen[f.Column] = true
				out = append(out, f.Column)
			}
		case *ColumnFilter:
			walk(*f)
		case CompositeFilter:
			for _, s := range f.Filters {
				walk(s)
			}
		case *CompositeFilter:
			walk(*f)
		}
	}
	walk(f)
	return out
}

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
