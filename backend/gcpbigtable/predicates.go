package gcpbigtable

import (
	"math"
	"slices"
	"strings"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// SPEC's rules as Bigtable predicates: the row filters of reads and the
// predicates of the conditional writes (CheckAndMutateRow), and the one
// conversion from versions (ms) to Bigtable timestamps (µs).

// ttlStart returns the smallest visible timestamp (µs) at now, or 0 when
// nothing is hidden by the TTL.
func ttlStart(opts tablekit.TableOptions, now int64) int64 {
	if opts.TTL == tablekit.NoExpiry {
		return 0
	}
	v := rowmodel.OldestVisible(opts, now)
	if v <= 0 {
		return 0
	}
	if v > math.MaxInt64/1000 {
		return math.MaxInt64 / 1000 * 1000
	}
	return v * 1000
}

// micros converts a version bound (ms) into a timestamp bound (µs); ok is
// false when it lies beyond every representable timestamp.
func micros(ms int64) (int64, bool) {
	if ms <= 0 {
		return 0, true
	}
	if ms > math.MaxInt64/1000 {
		return 0, false
	}
	return ms * 1000, true
}

// cellTime is the timestamp (µs) of the cell of a version (ms), or of the
// generation stamp of a generation: the one place a version becomes a
// timestamp. It needs no check: every version a Client sends lies in the
// write window around now (SPEC §5), where the product is exact, and
// generations are small. micros is for read bounds, which may lie anywhere.
func cellTime(ms int64) bigtable.Timestamp { return bigtable.Timestamp(ms * 1000) }

// tsRange returns a TimestampRangeFilter [start, end) in µs; end 0 means no
// upper bound.
func tsRange(start, end int64) bigtable.Filter {
	return bigtable.TimestampRangeFilterMicros(bigtable.Timestamp(start), bigtable.Timestamp(end))
}

// chain builds a chain, or the single filter, or nil.
func chain(fs ...bigtable.Filter) bigtable.Filter {
	out := fs[:0]
	for _, f := range fs {
		if f != nil {
			out = append(out, f)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return bigtable.ChainFilters(out...)
}

func interleave(fs ...bigtable.Filter) bigtable.Filter {
	out := fs[:0]
	for _, f := range fs {
		if f != nil {
			out = append(out, f)
		}
	}
	switch len(out) {
	case 0:
		return bigtable.BlockAllFilter()
	case 1:
		return out[0]
	}
	return bigtable.InterleaveFilters(out...)
}

// familyFilter passes the cells of family fam. It is a column range, not
// bigtable.FamilyFilter: that is a regex, which bttest compiles again for
// every cell it tests (a projected read spent more server time compiling
// "c" and "m" than reading), while a range is a string comparison there
// and costs Bigtable nothing more than a family regex.
func familyFilter(fam string) bigtable.Filter { return bigtable.ColumnRangeFilter(fam, "", "") }

// qualifierFilter passes the cells of column qual of family fam, also as
// a range ([qual, qual+"\x00") holds qual alone), never a regex.
func qualifierFilter(fam, qual string) bigtable.Filter {
	return bigtable.ColumnRangeFilter(fam, qual, qual+"\x00")
}

// markerFilter passes a row's key-only marker.
func markerFilter() bigtable.Filter { return qualifierFilter(famMeta, qualMarker) }

// maxRangeColumns is the most columns a projection selects by column
// ranges; a projection of more uses one qualifier regex.
var maxRangeColumns = 16

// projectionFilter passes the c cells of the columns cols (not empty, in
// any order, repeats allowed). Up to maxRangeColumns names, it is each
// name's column range (an interleave when there are several): string
// comparisons, where a qualifier regex costs bttest a compilation per cell
// (it compiles a filter's regex again for every cell it tests) and costs
// Bigtable more than a range. Beyond that, the range from the least name
// to the greatest chained with the qualifier regex of the names (the
// filter a raw user writes), so the regex is tried only on cells in range.
func projectionFilter(cols []string) bigtable.Filter {
	if len(cols) == 1 {
		return qualifierFilter(famCells, cols[0])
	}
	if len(cols) <= maxRangeColumns {
		fs := make([]bigtable.Filter, 0, len(cols))
		for i, c := range cols {
			if !slices.Contains(cols[:i], c) {
				fs = append(fs, qualifierFilter(famCells, c))
			}
		}
		if len(fs) == 1 {
			return fs[0]
		}
		return bigtable.InterleaveFilters(fs...)
	}
	lo, hi := slices.Min(cols), slices.Max(cols)
	r := bigtable.ColumnRangeFilter(famCells, lo, hi+"\x00")
	if lo == hi {
		return r
	}
	return bigtable.ChainFilters(r, bigtable.ColumnFilter(columnsRegex(cols)))
}

// columnsRegex matches exactly the given column names. Names are
// [A-Za-z_][A-Za-z0-9_]* (SPEC §1), so none needs escaping.
func columnsRegex(names []string) string {
	return "^(?:" + strings.Join(names, "|") + ")$"
}

// visibleFilter passes exactly the cells SPEC §5–6 make visible at now (the
// newest MaxVersions of each column among those the TTL has not expired)
// and the m family (marker and revision), which the conditional write path
// needs. Cells of m are stamped 0, so with a TTL they take their own branch.
func visibleFilter(opts tablekit.TableOptions, now int64) bigtable.Filter {
	lim := bigtable.LatestNFilter(opts.MaxVersions)
	ts := ttlStart(opts, now)
	if ts == 0 {
		return lim
	}
	return bigtable.InterleaveFilters(
		bigtable.ChainFilters(familyFilter(famCells), tsRange(ts, 0), lim),
		familyFilter(famMeta),
	)
}

// existsFilter passes a cell iff the row exists at now (SPEC §7): a visible
// attribute cell or the key-only marker. It is the predicate of conditions
// on row existence alone.
func existsFilter(opts tablekit.TableOptions, now int64) bigtable.Filter {
	cells := familyFilter(famCells)
	if ts := ttlStart(opts, now); ts != 0 {
		cells = bigtable.ChainFilters(cells, tsRange(ts, 0))
	}
	return bigtable.InterleaveFilters(cells, markerFilter())
}

// revFilter passes the row's m:rev iff it holds rev: the predicate of an
// optimistic write on a row whose revision was read.
func revFilter(rev []byte) bigtable.Filter {
	return bigtable.ChainFilters(qualifierFilter(famMeta, qualRev), valueIs(rev))
}

// occupiedFilter passes a cell iff the row exists at now or has an m:rev:
// the predicate (false branch) of an optimistic write on a row read without
// a revision or anything visible.
func occupiedFilter(opts tablekit.TableOptions, now int64) bigtable.Filter {
	cells := familyFilter(famCells)
	if ts := ttlStart(opts, now); ts != 0 {
		cells = bigtable.ChainFilters(cells, tsRange(ts, 0))
	}
	// Of family m, the marker and m:rev: not m:gen, which a put leaves
	// without a revision on a row whose cells may all expire. The range
	// [keyonly, rev] holds those two of m's three qualifiers.
	book := bigtable.ColumnRangeFilter(famMeta, qualMarker, qualRev+"\x00")
	return bigtable.InterleaveFilters(cells, book)
}

// dataFilter passes a cell iff the row holds data: any c cell (visible
// or not) or m:keyonly. A row without either is bookkeeping alone, which
// no write leaves behind: the predicate of the optimistic path's stamp, so
// a stamp never lands on such a row.
func dataFilter() bigtable.Filter {
	return bigtable.InterleaveFilters(familyFilter(famCells), markerFilter())
}

// keptFilter passes a cell iff the row holds a c cell in a column other
// than cols (sorted, no repeats, names never empty), or m:keyonly: the
// row keeps data after an update that deletes exactly cols. The columns
// outside cols are the len(cols)+1 ranges between them (name+"\x00" is
// the least name after name).
func keptFilter(cols []string) bigtable.Filter {
	fs := make([]bigtable.Filter, 0, len(cols)+2)
	start := ""
	for _, c := range cols {
		fs = append(fs, bigtable.ColumnRangeFilter(famCells, start, c))
		start = c + "\x00"
	}
	fs = append(fs, bigtable.ColumnRangeFilter(famCells, start, ""), markerFilter())
	return bigtable.InterleaveFilters(fs...)
}

// latestN holds RowFilter(LatestNFilter(n)) for small n: the whole filter
// of the commonest reads (no TTL, no projection or time range), built once
// instead of per call.
var latestN = func() (o [9]bigtable.ReadOption) {
	for n := 1; n < len(o); n++ {
		o[n] = bigtable.RowFilter(bigtable.LatestNFilter(n))
	}
	return o
}()

// readOption is the RowFilter option of a read (see readFilter).
func readOption(opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) bigtable.ReadOption {
	if opts.TTL == tablekit.NoExpiry && spec.Columns == nil && spec.TimeRange == nil {
		if n := min(opts.MaxVersions, spec.MaxVersions); n >= 1 && n < len(latestN) {
			return latestN[n]
		}
	}
	return bigtable.RowFilter(readFilter(opts, spec, now))
}

// rangeOption is the RowFilter option of a range read: readOption's, behind
// the filter's row predicate when it is pushed down (see pushdown.go).
func rangeOption(opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) (bigtable.ReadOption, pushMode) {
	pred, mode := predicate(opts, spec, now)
	if pred == nil {
		return readOption(opts, spec, now), pushNone
	}
	return bigtable.RowFilter(bigtable.ConditionFilter(pred, readFilter(opts, spec, now), nil)), mode
}

// readFilter is the row filter of a read: the cells the read selects
// (visibility, then the projection together with the filter's columns, the
// time range and MaxVersions), the marker, and, when the selection can
// come back empty for a row that exists, one value-stripped visible cell
// that proves existence.
func readFilter(opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) bigtable.Filter {
	ts := ttlStart(opts, now)
	var cols []string
	if spec.Columns != nil {
		// Never nil: an empty projection (Columns()) selects no column.
		cols = append(make([]string, 0, len(spec.Columns)), spec.Columns...)
		for _, c := range rowmodel.FilterColumns(spec.Filter) {
			if !containsStr(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	tr := spec.TimeRange
	if cols == nil && tr == nil {
		// The common case: visible cells, fewer versions if asked.
		n := min(opts.MaxVersions, spec.MaxVersions)
		if ts == 0 {
			// One filter for both families: m cells have one version each.
			return bigtable.LatestNFilter(n)
		}
		return bigtable.InterleaveFilters(
			bigtable.ChainFilters(familyFilter(famCells), tsRange(ts, 0), bigtable.LatestNFilter(n)),
			markerFilter(),
		)
	}
	var sel bigtable.Filter
	if cols == nil || len(cols) > 0 {
		colF := familyFilter(famCells)
		if len(cols) > 0 {
			colF = projectionFilter(cols)
		}
		var tsF, trF, lastF bigtable.Filter
		if ts != 0 {
			tsF = tsRange(ts, 0)
		}
		n := opts.MaxVersions
		if tr != nil {
			start, _ := micros(tr.Start)
			end, ok := micros(tr.End)
			if !ok {
				end = 0
			}
			trF = tsRange(start, end)
			if spec.MaxVersions < n {
				lastF = bigtable.LatestNFilter(spec.MaxVersions)
			}
		} else {
			n = min(n, spec.MaxVersions)
		}
		sel = chain(colF, tsF, bigtable.LatestNFilter(n), trF, lastF)
	}
	var exists bigtable.Filter
	if ts != 0 {
		exists = bigtable.ChainFilters(familyFilter(famCells), tsRange(ts, 0), bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())
	} else {
		exists = bigtable.ChainFilters(familyFilter(famCells), bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())
	}
	return interleave(sel, exists, markerFilter())
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
