package gcpbigtable

import (
	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
)

// A range read's filter (SPEC §10) is pushed into its Bigtable row filter
// as a row predicate: a filter whose output is not empty exactly when the
// row may pass (see pushFilter). The read's row filter is then
// Condition(predicate, selection, nothing), so Bigtable sends only the rows
// the predicate keeps. rowmodel still evaluates the filter on every row
// that arrives: the predicate only decides which rows are worth sending,
// never which rows pass.

// pushMode says how a read's filter reached Bigtable.
type pushMode int

const (
	// pushNone: the filter is evaluated on the client alone (or there is
	// none).
	pushNone pushMode = iota
	// pushPre: a conservative pre-filter, which keeps every row that
	// passes and may keep some that do not.
	pushPre
	// pushExact: the predicate keeps exactly the rows that pass.
	pushExact
)

// Bounds of a pushed-down filter: beyond them the filter is evaluated on
// the client alone, so that a filter never makes a request large (Bigtable
// refuses row filters of more than about 20 KB) or deeply nested.
var maxPushLeaves = 16 // column comparisons (a variable: tests set 0, and nothing is pushed)

const maxPushBytes = 4 << 10 // encoded comparison values, in all

// predicate returns the row predicate of spec.Filter for a read of a table
// with opts at now, and whether it is exact; nil when the filter is not
// pushed down (no filter, or one beyond the bounds above).
func predicate(opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) (bigtable.Filter, pushMode) {
	if spec.Filter == nil {
		return nil, pushNone
	}
	p := pusher{opts: opts, spec: spec, ts: ttlStart(opts, now)}
	f, exact := p.push(spec.Filter)
	if f == nil || p.leaves > maxPushLeaves || p.bytes > maxPushBytes {
		return nil, pushNone
	}
	if exact {
		return f, pushExact
	}
	return f, pushPre
}

// pusher translates one filter, counting what it puts in the request.
type pusher struct {
	opts   tablekit.TableOptions
	spec   *tablekit.ReadSpec
	ts     int64 // ttlStart of the read
	leaves int
	bytes  int
}

// push returns the row predicate of f and whether it is exact; nil means
// "may pass", which only an exact predicate's caller can do without.
//
//   - A column comparison: the cells it tests (the newest selected version
//     of the column, or every selected version with AllVersions) in the
//     value range of the operator (valueRange; exact for some types and
//     operators, the whole type otherwise). When a missing column passes
//     (the default), Condition(that, PassAll, "the column has no selected
//     cell"): one Condition where an Interleave of the two would copy the
//     row once more in bttest.
//   - And: Condition(p1, Condition(p2, ...), nothing): not empty iff every
//     one is. A part that cannot be pushed is left out (the rest is then a
//     pre-filter).
//   - Or: the interleave of the parts: not empty iff any is. One part that
//     cannot be pushed makes the whole Or unpushable.
//   - Not: Condition(p, nothing, PassAll), only when p is exact (the
//     negation of a superset would drop rows that pass).
func (p *pusher) push(f tablekit.Filter) (bigtable.Filter, bool) {
	switch f := f.(type) {
	case tablekit.ColumnFilter:
		return p.column(&f)
	case *tablekit.ColumnFilter:
		return p.column(f)
	case tablekit.CompositeFilter:
		return p.composite(&f)
	case *tablekit.CompositeFilter:
		return p.composite(f)
	}
	return nil, false
}

func (p *pusher) composite(f *tablekit.CompositeFilter) (bigtable.Filter, bool) {
	switch f.Op {
	case tablekit.LogicAnd:
		var parts []bigtable.Filter
		exact := true
		for _, s := range f.Filters {
			q, ex := p.push(s)
			if q == nil {
				exact = false
				continue
			}
			exact = exact && ex
			parts = append(parts, q)
		}
		if len(parts) == 0 {
			return nil, false
		}
		out := parts[len(parts)-1]
		for i := len(parts) - 2; i >= 0; i-- {
			out = bigtable.ConditionFilter(parts[i], out, nil)
		}
		return out, exact
	case tablekit.LogicOr:
		parts := make([]bigtable.Filter, 0, len(f.Filters))
		exact := true
		for _, s := range f.Filters {
			q, ex := p.push(s)
			if q == nil {
				return nil, false
			}
			exact = exact && ex
			parts = append(parts, q)
		}
		return interleave(parts...), exact
	case tablekit.LogicNot:
		if len(f.Filters) != 1 {
			return nil, false
		}
		q, ex := p.push(f.Filters[0])
		if q == nil || !ex {
			return nil, false
		}
		return not(q), true
	}
	return nil, false
}

// not is the row predicate "q is empty". A row Bigtable reads has a cell,
// so PassAll's output is never empty.
func not(q bigtable.Filter) bigtable.Filter {
	return bigtable.ConditionFilter(q, nil, bigtable.PassAllFilter())
}

func (p *pusher) column(f *tablekit.ColumnFilter) (bigtable.Filter, bool) {
	ranges, exact := valueRange(f.Op, f.Value)
	if ranges == nil {
		return nil, false
	}
	p.leaves++
	for _, r := range ranges {
		p.bytes += len(r[0]) + len(r[1])
	}
	vals := make([]bigtable.Filter, len(ranges))
	for i, r := range ranges {
		vals[i] = bigtable.ValueRangeFilter(r[0], r[1])
	}
	n := p.spec.MaxVersions // the versions the filter may test
	if !f.AllVersions {
		n = 1
	}
	match := chain(p.selected(f.Column, n), interleave(vals...))
	if f.FilterIfMissing {
		return match, exact
	}
	return bigtable.ConditionFilter(match, bigtable.PassAllFilter(), not(p.present(f.Column))), exact
}

// selected is the chain that selects, of column col, what the read selects
// (SPEC §5–6 visibility, then the read's time range and MaxVersions, as
// readFilter does), newest first, cut to the newest n.
func (p *pusher) selected(col string, n int) bigtable.Filter {
	var tsF, trF, lastF bigtable.Filter
	if p.ts != 0 {
		tsF = tsRange(p.ts, 0)
	}
	vis := p.opts.MaxVersions
	if tr := p.spec.TimeRange; tr != nil {
		start, _ := micros(tr.Start)
		end, ok := micros(tr.End)
		if !ok {
			end = 0
		}
		trF = tsRange(start, end)
		if n < vis {
			lastF = bigtable.LatestNFilter(n)
		}
	} else {
		vis = min(vis, n)
	}
	return chain(qualifierFilter(famCells, col), tsF, bigtable.LatestNFilter(vis), trF, lastF)
}

// present is the chain that passes the cells of column col the read
// selects, or a superset of them that is empty exactly when they are: with
// no time range, every visible cell (LatestN keeps at least one).
func (p *pusher) present(col string) bigtable.Filter {
	if p.spec.TimeRange != nil {
		return p.selected(col, 1)
	}
	if p.ts != 0 {
		return bigtable.ChainFilters(qualifierFilter(famCells, col), tsRange(p.ts, 0))
	}
	return qualifierFilter(famCells, col)
}

// valueRange returns the ranges [lo, hi) of cell encodings (appendValue)
// that hold the values v' of v's type with "v' op v", or a superset of
// them, and whether they are exact. The type byte comes first in every
// encoding, so a range that stays within one type byte never meets a
// value of another type, which never matches (SPEC §10).
//
// String, Binary and Boolean encodings order as their values do (bytes
// after the type byte; "false" < "true"), so every operator is exact. An
// Integer or Double has one encoding per value (decodeValue refuses any
// other), so == and != are exact for Integers and for Doubles other than
// ±0 (which are equal with two encodings); otherwise decimal text does not
// order as numbers, and the range is the whole type: a pre-filter that
// drops the cells of other types.
func valueRange(op tablekit.CompareOp, v tablekit.Value) ([][2][]byte, bool) {
	enc := appendValue(nil, v)
	if len(enc) == 0 {
		return nil, false
	}
	tag := enc[0]
	typeLo, typeHi := []byte{tag}, []byte{tag + 1}
	after := append(enc[:len(enc):len(enc)], 0) // the least encoding above enc
	ordered := false
	switch v.Type() {
	case tablekit.TypeString, tablekit.TypeBinary, tablekit.TypeBoolean:
		ordered = true
	case tablekit.TypeInteger:
	case tablekit.TypeDouble:
		if f, _ := v.Float(); f == 0 {
			return [][2][]byte{{typeLo, typeHi}}, false
		}
	default:
		return nil, false
	}
	switch op {
	case tablekit.Equal:
		return [][2][]byte{{enc, after}}, true
	case tablekit.NotEqual:
		return [][2][]byte{{typeLo, enc}, {after, typeHi}}, true
	}
	if !ordered {
		return [][2][]byte{{typeLo, typeHi}}, false
	}
	switch op {
	case tablekit.Greater:
		return [][2][]byte{{after, typeHi}}, true
	case tablekit.GreaterEqual:
		return [][2][]byte{{enc, typeHi}}, true
	case tablekit.Less:
		return [][2][]byte{{typeLo, enc}}, true
	case tablekit.LessEqual:
		return [][2][]byte{{typeLo, after}}, true
	}
	return nil, false
}
