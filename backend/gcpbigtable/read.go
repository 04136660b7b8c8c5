package gcpbigtable

import (
	"context"
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
		return s.floored()
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
	return s.floored()
}

// floored returns s starting at rowFloor when its lower end is unbounded:
// below it lie only the auto-increment counter rows (autoinc.go), which no
// read returns. Every other lower end is at least rowFloor already.
func (s span) floored() span {
	if s.lo == "" {
		s.lo, s.loOpen = rowFloor, false
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
