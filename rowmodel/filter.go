package rowmodel

import "github.com/tablekit/tablekit"

// MatchFilter evaluates f over a row's selected cells: cols sorted by
// ascending name and, within a name, newest version first (the order reads
// return). It is the one evaluator engines share (SPEC §10); adapters that
// translate filters into native predicates must agree with it. A nil
// filter passes every row.
func MatchFilter(f tablekit.Filter, cols []tablekit.Column) bool {
	switch f := f.(type) {
	case nil:
		return true
	case tablekit.ColumnFilter:
		return matchColumn(&f, cols)
	case *tablekit.ColumnFilter:
		return matchColumn(f, cols)
	case tablekit.CompositeFilter:
		return matchComposite(&f, cols)
	case *tablekit.CompositeFilter:
		return matchComposite(f, cols)
	}
	return false
}

func matchColumn(f *tablekit.ColumnFilter, cols []tablekit.Column) bool {
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
		if c.Value.Type() == f.Value.Type() && Holds(f.Op, tablekit.Compare(c.Value, f.Value)) {
			return true
		}
	}
	if !found {
		return !f.FilterIfMissing
	}
	return false
}

// Holds reports whether op holds for a comparison's result c (SPEC §10:
// tablekit.Compare of the cell's value and the filter's, of one type).
func Holds(op tablekit.CompareOp, c int) bool {
	switch op {
	case tablekit.Equal:
		return c == 0
	case tablekit.NotEqual:
		return c != 0
	case tablekit.Greater:
		return c > 0
	case tablekit.GreaterEqual:
		return c >= 0
	case tablekit.Less:
		return c < 0
	case tablekit.LessEqual:
		return c <= 0
	}
	return false
}

func matchComposite(f *tablekit.CompositeFilter, cols []tablekit.Column) bool {
	switch f.Op {
	case tablekit.LogicAnd:
		for _, s := range f.Filters {
			if !MatchFilter(s, cols) {
				return false
			}
		}
		return true
	case tablekit.LogicOr:
		for _, s := range f.Filters {
			if MatchFilter(s, cols) {
				return true
			}
		}
		return false
	case tablekit.LogicNot:
		return len(f.Filters) == 1 && !MatchFilter(f.Filters[0], cols)
	}
	return false
}

// FilterColumns returns the names of the columns f reads, each once, in
// the order f first mentions them.
func FilterColumns(f tablekit.Filter) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(tablekit.Filter)
	walk = func(f tablekit.Filter) {
		switch f := f.(type) {
		case tablekit.ColumnFilter:
			if !seen[f.Column] {
				seen[f.Column] = true
				out = append(out, f.Column)
			}
		case *tablekit.ColumnFilter:
			walk(*f)
		case tablekit.CompositeFilter:
			for _, s := range f.Filters {
				walk(s)
			}
		case *tablekit.CompositeFilter:
			walk(*f)
		}
	}
	walk(f)
	return out
}
