package gcpbigtable

import (
	"context"
	"math"
	"slices"
	"strings"
	"unsafe"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// maxScan bounds how many stored rows one GetRange page examines.
const maxScan = tablekit.MaxScanRows

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

// stored is a Bigtable row decoded: its attribute cells (stored order),
// whether the row exists, its revision and its generation stamp.
type stored struct {
	cells  []tablekit.Column
	exists bool // a visible cell (possibly value-stripped) or the marker
	marker bool
	rev    []byte
	gen    int64 // the newest m:gen timestamp, in ms: a generation (0 when none)
}

// decodeRow decodes a row read with one of the filters above, appending
// its attribute cells to dst (s.cells is the appended part, in stored
// order) and returning dst grown. Cells with an empty value are existence
// proofs (StripValueFilter); every stored value has a type byte, so none is
// empty.
func decodeRow(dst []tablekit.Column, r bigtable.Row) (s stored, grown []tablekit.Column, err error) {
	items := r[famCells]
	if len(items) > 0 {
		s.exists = true
		dst = slices.Grow(dst, len(items))
	}
	start := len(dst)
	sorted := true
	for _, it := range items {
		if len(it.Value) == 0 {
			continue
		}
		var v tablekit.Value
		switch it.Value[0] {
		case tagString:
			v = tablekit.String(bytesView(it.Value[1:]))
		case tagBinary:
			v = tablekit.BinaryString(bytesView(it.Value[1:]))
		default:
			if v, err = decodeValue(it.Value); err != nil {
				return s, dst[:start], tablekit.WrapError(tablekit.ErrUnavailable, err, "row %v column %q: not a tablekit cell", quoteBytes(it.Row), it.Column)
			}
		}
		name := strings.TrimPrefix(it.Column, famCells+":")
		c := tablekit.Column{Name: name, Value: v, Version: int64(it.Timestamp) / 1000}
		if n := len(dst); n > start {
			p := &dst[n-1]
			if p.Name == c.Name && p.Version == c.Version {
				continue // the same cell from two branches of an interleave
			}
			if p.Name > c.Name || (p.Name == c.Name && p.Version < c.Version) {
				sorted = false
			}
		}
		dst = append(dst, c)
	}
	s.cells = dst[start:len(dst):len(dst)]
	if !sorted {
		rowmodel.SortCells(s.cells)
	}
	for _, it := range r[famMeta] {
		switch it.Column {
		case famMeta + ":" + qualMarker:
			s.marker, s.exists = true, true
		case famMeta + ":" + qualRev:
			s.rev = it.Value
		case famMeta + ":" + qualGen:
			s.gen = max(s.gen, int64(it.Timestamp)/1000)
		}
	}
	return s, dst, nil
}

// bytesView returns b as a string without copying it. decodeRow uses it on
// the values of a row the Bigtable client handed over: ReadItem.Value is
// memory the client allocated for that row (protobuf copies every bytes
// field out of gRPC's receive buffer, which gRPC recycles, and the chunk
// reader builds split cells in a new slice) and drops once ReadRows has
// called back, so after decodeRow nothing but these strings refers to it,
// and nothing writes to it. That saves copying every String and Binary
// value a read returns: about 5% of a 100-row range read's CPU time on
// bttest. TestReadValuesStayPut checks the premise.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// rowReader turns rows into answers: it decodes each row and applies the
// read's selection, filter and projection, handing out the cells of every
// row it returns from one shared buffer (each row's slice is capped, so no
// row can overwrite another's).
type rowReader struct {
	rows    int               // how many rows the read expects, to size buf
	buf     []tablekit.Column // cells handed out
	scratch []tablekit.Column // one decoded row, when rowmodel selects from it
}

// exact reports whether the cells readFilter selects for spec are already
// the answer: no filter or time range, so the server's selection
// (visibility, then MaxVersions, with predicates that translate SPEC's
// rules exactly, then the projection's columns exactly: a range and the
// regex of the names) leaves rowmodel nothing to do. The cell that proves
// a row exists is value-stripped, and decodeRow drops it.
func exact(spec *tablekit.ReadSpec) bool {
	return spec.Filter == nil && spec.TimeRange == nil
}

// read returns the columns r's row answers a read with, and whether the row
// is returned at all (it exists and passes the filter).
func (rr *rowReader) read(r bigtable.Row, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool, error) {
	if exact(spec) {
		rr.buf = reserve(rr.buf, len(r[famCells]), rr.rows)
		start := len(rr.buf)
		s, buf, err := decodeRow(rr.buf, r)
		if err != nil || !s.exists {
			clear(buf[start:])
			rr.buf = buf[:start]
			return nil, false, err
		}
		rr.buf = buf
		if s.cells == nil {
			s.cells = []tablekit.Column{} // a key-only row: no columns, not nil
		}
		return s.cells, true, nil
	}
	s, scratch, err := decodeRow(rr.scratch[:0], r)
	rr.scratch = scratch
	if err != nil || !s.exists {
		return nil, false, err
	}
	// The server already selected visible cells; rowmodel re-applies the
	// rules (idempotent on them) and evaluates the filter and projection.
	rr.buf = reserve(rr.buf, len(s.cells), rr.rows)
	start := len(rr.buf)
	buf, found := rowmodel.AppendRead(rr.buf, &rowmodel.Row{Cells: s.cells, Marker: true}, opts, spec, now)
	rr.buf = buf
	if !found {
		return nil, false, nil
	}
	if len(buf) == start {
		return []tablekit.Column{}, true, nil
	}
	return buf[start:len(buf):len(buf)], true, nil
}

// reserve returns buf with room for n more cells. When it has none, it
// returns a fresh array sized for about rows rows of n cells (at most 4096
// cells, so a page whose rows a filter mostly rejects holds no big unused
// array); the cells already handed out keep the old one, so nothing is
// copied.
func reserve(buf []tablekit.Column, n, rows int) []tablekit.Column {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	return make([]tablekit.Column, 0, max(n, min(n*max(rows, 1), 1<<12)))
}

// rowKey returns the Bigtable row key of k (codec.EncodeKey), or
// ErrInvalidArgument when it exceeds Bigtable's 4 KiB limit.
func rowKey(k tablekit.PrimaryKey) (string, error) {
	n, err := rowKeySize(k)
	if err != nil {
		return "", err
	}
	var buf [96]byte // most keys fit: one allocation, the string
	if n > len(buf) {
		return string(codec.EncodeKey(k)), nil
	}
	return string(codec.AppendKey(buf[:0], k)), nil
}

// rowKeySize returns the length of k's row key, or ErrInvalidArgument when
// it exceeds Bigtable's 4 KiB limit.
func rowKeySize(k tablekit.PrimaryKey) (int, error) {
	n := codec.KeySize(k)
	if n > maxRowKeyLen {
		return 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "key %v encodes to a %d-byte row key; Bigtable's limit is %d bytes", k, n, maxRowKeyLen)
	}
	return n, nil
}

// GetRow implements tablekit.Backend: one ReadRow whose filter selects the
// visible cells of the read.
func (b *Backend) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	key, err := rowKey(req.Key)
	if err != nil {
		return nil, err
	}
	opts := req.Meta.Options
	r, err := b.table(req.Meta.Name, req.Meta.Incarnation).ReadRow(ctx, key, readOption(opts, &req.Read, req.Now))
	if err != nil {
		return nil, wrap(ctx, err, "reading key %v", req.Key)
	}
	if r == nil {
		return nil, nil
	}
	rr := rowReader{rows: 1}
	cols, found, err := rr.read(r, opts, &req.Read, req.Now)
	if err != nil || !found {
		return nil, err
	}
	return &tablekit.Row{Key: req.Key, Columns: cols}, nil
}

// BatchGetRow implements tablekit.BatchReader: the reads are grouped by
// table and read selection, each group is one ReadRows over a RowList, and
// the groups run in parallel (at most Config.Concurrency at once).
func (b *Backend) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	out := make([]tablekit.GetRowResponse, len(reqs))
	type group struct {
		table  *bigtable.Table
		filter bigtable.Filter
		idx    []int
		keys   []string
	}
	var groups []*group
	byID := map[string]*group{}
	for i, req := range reqs {
		key, err := rowKey(req.Key)
		if err != nil {
			out[i].Err = err
			continue
		}
		f := readFilter(req.Meta.Options, &req.Read, req.Now)
		id := TableID(req.Meta.Name, req.Meta.Incarnation) + "\x00" + f.String()
		g := byID[id]
		if g == nil {
			g = &group{table: b.table(req.Meta.Name, req.Meta.Incarnation), filter: f}
			byID[id] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
		g.keys = append(g.keys, key)
	}
	run := func(ctx context.Context, g *group) error {
		rows := make(map[string]bigtable.Row, len(g.keys))
		err := g.table.ReadRows(ctx, bigtable.RowList(g.keys), func(r bigtable.Row) bool {
			rows[r.Key()] = r
			return true
		}, bigtable.RowFilter(g.filter))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			werr := wrap(ctx, err, "reading %d rows", len(g.keys))
			for _, i := range g.idx {
				out[i].Err = werr
			}
			return nil
		}
		rr := rowReader{rows: len(g.keys)}
		for j, i := range g.idx {
			r := rows[g.keys[j]]
			if r == nil {
				continue
			}
			req := reqs[i]
			cols, found, err := rr.read(r, req.Meta.Options, &req.Read, req.Now)
			if err != nil {
				out[i].Err = err
				continue
			}
			if found {
				out[i].Row = &tablekit.Row{Key: req.Key, Columns: cols}
			}
		}
		return nil
	}
	err := driver.Parallel(ctx, len(groups), b.cfg.Concurrency, func(ctx context.Context, i int) error {
		return run(ctx, groups[i])
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// span is a row range in bytes: lo and hi are "" when unbounded.
type span struct {
	lo, hi         string
	loOpen, hiOpen bool
	empty          bool
}

func (s span) rowRange() bigtable.RowRange {
	switch {
	case !s.loOpen && s.hiOpen:
		return bigtable.NewRange(s.lo, s.hi)
	case s.loOpen && s.hiOpen:
		return bigtable.NewOpenRange(s.lo, s.hi)
	case s.loOpen && !s.hiOpen:
		return bigtable.NewOpenClosedRange(s.lo, s.hi)
	}
	return bigtable.NewClosedRange(s.lo, s.hi)
}

// rangeSpan maps a GetRange request onto row-key bytes with codec.Bound:
// forward [start, end); backward from start (inclusive when it is a real
// key) down to end (exclusive when it is a real key). An infinite bound's
// bytes are the place where the keys it separates divide.
func rangeSpan(req *tablekit.GetRangeRequest) span {
	startB, startExact := codec.Bound(req.Start)
	endB, endExact := codec.Bound(req.End)
	var s span
	if !req.Backward {
		// lo = start, closed; hi = end, open.
		if startB == nil || (endB != nil && len(endB) == 0) {
			return span{empty: true}
		}
		s = span{lo: string(startB), hi: string(endB), hiOpen: true}
		if endB != nil && s.lo >= s.hi {
			return span{empty: true}
		}
		return s
	}
	// Backward: hi = start (closed if exact, open if infinite), lo = end
	// (open if exact, closed if infinite).
	if (!startExact && startB != nil && len(startB) == 0) || (!endExact && endB == nil) {
		return span{empty: true}
	}
	s = span{lo: string(endB), loOpen: endExact, hi: string(startB), hiOpen: !startExact}
	if startB != nil && s.lo != "" && (s.lo > s.hi || (s.lo == s.hi && (s.loOpen || s.hiOpen))) {
		return span{empty: true}
	}
	return s
}

// GetRange implements tablekit.Backend. It streams the range with ReadRows
// (ReverseScan when backward); the first row past the page, never
// returned, is the Next key. Each ReadRows call is sized by what the page
// may have to examine, not by the rows it still wants (see streamLimit),
// so a page whose rows a filter mostly rejects is one call that examines
// up to maxScan rows, not one call per row returned.
func (b *Backend) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	sp := rangeSpan(req)
	page := &tablekit.GetRangeResponse{}
	if sp.empty {
		return page, nil
	}
	tbl := b.table(req.Meta.Name, req.Meta.Incarnation)
	opts := req.Meta.Options
	filter, push := rangeOption(opts, &req.Read, req.Now)
	limit := max(req.Limit, 1)
	page.Rows = make([]tablekit.Row, 0, min(limit, 1024))
	rr := rowReader{rows: limit}
	scanned := 0
	var decodeErr error
	want := 0
	for {
		want = streamLimit(req.Read.Filter != nil && push != pushExact, limit-len(page.Rows), maxScan-scanned, want)
		seen, stop := 0, false
		last := ""
		ropts := []bigtable.ReadOption{filter, bigtable.LimitRows(int64(want))}
		if req.Backward {
			ropts = append(ropts, bigtable.ReverseScan())
		}
		err := tbl.ReadRows(ctx, sp.rowRange(), func(r bigtable.Row) bool {
			seen++
			last = r.Key()
			k, err := codec.DecodeKey(req.Meta.Key, []byte(last))
			if err != nil {
				decodeErr = tablekit.WrapError(tablekit.ErrUnavailable, err, "row key %v is not a key of table %q", quoteBytes(last), req.Meta.Name)
				return false
			}
			if len(page.Rows) >= limit || scanned >= maxScan {
				page.Next = k
				stop = true
				return false
			}
			scanned++
			cols, found, err := rr.read(r, opts, &req.Read, req.Now)
			if err != nil {
				decodeErr = err
				return false
			}
			if found {
				page.Rows = append(page.Rows, tablekit.Row{Key: k, Columns: cols})
			}
			return true
		}, ropts...)
		if decodeErr != nil {
			return nil, decodeErr
		}
		if err != nil {
			return nil, wrap(ctx, err, "reading a range")
		}
		if stop || seen < want {
			return page, nil
		}
		// The stream ended at its limit, every row consumed: go on after last.
		if req.Backward {
			sp.hi, sp.hiOpen = last, true
		} else {
			sp.lo, sp.loOpen = last, true
		}
	}
}

// minStream is the least LimitRows of a ReadRows call that continues a
// page after rows were dropped.
const minStream = 64

// streamLimit returns the LimitRows of a range page's next ReadRows call:
// filtered tells whether the read has a filter, need how many rows the
// page still wants, budget how many more stored rows it may examine, prev
// the previous call's limit (0 for the first).
//
// A read without a filter drops only rows with nothing visible (or nothing
// in its time range), so it asks for need+1 rows (the extra one is Next)
// and, when rows were dropped after all, continues with at least twice the
// previous call. A read with a client-side filter may have to examine its
// whole budget to fill even one row, so it asks for the budget (+1) at
// once: one call per page whatever the filter keeps. The stream is cut as
// soon as the page is full, so the rows asked for but never consumed cost
// only what is already in flight; bttest, like Bigtable, reads a range
// in one pass per call whatever the limit, so many small calls over a long
// range cost far more than one cut short.
func streamLimit(filtered bool, need, budget, prev int) int {
	n := need + 1
	if filtered {
		n = budget + 1
	} else if prev > 0 {
		n = max(n, 2*prev, minStream)
	}
	return min(n, budget+1)
}
