package fileengine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// GetRange implements tablekit.Backend. It reads one page from one pebble
// iterator (a consistent snapshot), examining at most MaxScanRows rows
// and returning about MaxPageSize bytes at most (see walk), and copies
// each row out: the caller owns the page. The page is built in a few
// allocations, not several a row (see slabs).
func (e *Engine) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	sc := scratchPool.Get().(*rangeScratch)
	defer sc.release()
	page := &tablekit.GetRangeResponse{}
	next, err := e.readRange(ctx, req, sc, &slabs{rows: &page.Rows})
	if err != nil {
		return nil, err
	}
	page.Next = next
	return page, nil
}

// ScanRange implements tablekit.RangeScanner: GetRange's page, read by the
// same code (readRange) from one consistent snapshot, its rows handed to
// fn one at a time. It reads the page first, into buffers kept between
// calls (in a pool), and calls fn once the iterator is closed, so that the
// loop's body holds up neither pebble (an open iterator pins its
// memtables and files) nor Close, and may itself use the engine. A row
// costs no allocation of its own: its key parts and cells are windows of
// those buffers. The strings a row holds (key values, column names,
// String and Binary values) stay valid after the row, as
// tablekit.Table.Scan promises: they cannot view pebble's memory, which
// the iterator reuses, so their bytes are copied into chunks of
// arenaChunk bytes that are appended to and never written again (a kept
// string keeps its chunk alive), and column names are interned. Next, the
// caller's to keep, is a key of its own.
func (e *Engine) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	sc := scratchPool.Get().(*rangeScratch)
	defer sc.release()
	sl := slabs{cells: sc.page, keys: sc.keys, strs: sc.strs, ends: &sc.ends}
	next, err := e.readRange(ctx, req, sc, &sl)
	sc.page, sc.keys, sc.strs = sl.cells, sl.keys, sl.strs
	if err != nil {
		// A read that failed may have left cells viewing pebble's memory.
		clear(sc.page[:cap(sc.page)])
		return nil, err
	}
	k0, c0 := 0, 0
	for _, end := range sc.ends {
		row := tablekit.Row{Key: sc.keys[k0:end.key:end.key], Columns: sc.page[c0:end.cells:end.cells]}
		k0, c0 = end.key, end.cells
		if !fn(row) {
			return nil, nil
		}
	}
	return next, nil
}

// slabs receive the rows of a range page: their cells, key parts and the
// bytes of their strings, appended to blocks. With rows set (GetRange: the
// caller keeps the rows), a block is sized for the rows the page may
// still return (at most slabCells cells, slabKeys key parts, arenaChunk
// bytes, unless one row needs more), filled in order and never written
// again below its length, and replaced by a new one when full; each row
// is appended to *rows as windows of the blocks, capped so that an append
// to one never writes into another. Otherwise (ScanRange's buffers, kept
// between calls) cells and keys grow by append and *ends records where
// each row ends in them. The bytes of strings always go to chunks never
// written again, which a kept string keeps alive.
type slabs struct {
	cells []tablekit.Column
	keys  tablekit.PrimaryKey
	strs  []byte
	rows  *[]tablekit.Row
	ends  *[]rowEnd
}

const (
	slabCells = 2048
	slabKeys  = 512
)

// room makes sure sl.cells can take n more cells without moving: with
// rows set, a full block is replaced by a new one (left is how many rows
// the page may still return, for its size); otherwise append grows it.
func (sl *slabs) room(n, left int) {
	if sl.rows != nil && cap(sl.cells)-len(sl.cells) < n {
		sl.cells = make([]tablekit.Column, 0, max(min(slabCells, n*left), n))
	}
}

// add makes a row of the cells the read appended to sl.cells from index
// c0, whose strings view pebble's memory, and the encoded key k (without
// the table's prefix): it replaces those strings with copies (column
// names interned by nm) and adds the row with addKey. left is how many
// rows the page may still return.
func (sl *slabs) add(schema tablekit.KeySchema, k []byte, given tablekit.PrimaryKey, c0 int, nm *names, left int) error {
	sl.reserve(len(k)+stringsSize(sl.cells[c0:], false), left)
	sl.strs = copyStrings(sl.cells[c0:], sl.strs, nm)
	return sl.addKey(schema, k, given, c0, left)
}

// reserve makes sure sl.strs can take n more bytes without moving: a
// full chunk is replaced by a new one (left is how many rows the page may
// still return, for its size when the caller keeps the page).
func (sl *slabs) reserve(n, left int) {
	if cap(sl.strs)-len(sl.strs) < n {
		chunk := arenaChunk
		if sl.rows != nil {
			chunk = min(chunk, n*left)
		}
		sl.strs = newChunk(max(chunk, n))
	}
}

// newChunk returns an empty slice of at least n bytes of capacity, not
// zeroed first (strings.Builder.Grow allocates so): a chunk is written
// before any string views its bytes, and zeroing the 110 KB of a page of
// 100 YCSB rows cost about 6% of its read (BenchmarkScale profile).
func newChunk(n int) []byte {
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0)
	return unsafe.Slice(unsafe.StringData(b.String()), b.Cap())[:0]
}

// addKey decodes the encoded key k (without the table's prefix) into
// sl.keys, its strings into sl.strs (which must have room for them), and
// records the row of that key and the cells of sl.cells from c0. Given
// the key k encodes (BatchGetRow's: the request's), it takes its values
// instead, under the schema's names, as GetRow does (their strings are
// the caller's, immutable).
func (sl *slabs) addKey(schema tablekit.KeySchema, k []byte, given tablekit.PrimaryKey, c0, left int) error {
	fresh := sl.rows != nil
	if fresh && cap(sl.keys)-len(sl.keys) < len(schema) {
		sl.keys = make(tablekit.PrimaryKey, 0, max(min(slabKeys, len(schema)*left), len(schema)))
	}
	k0 := len(sl.keys)
	if given != nil {
		for i, kc := range schema {
			sl.keys = append(sl.keys, tablekit.KeyPart{Name: kc.Name, Value: given[i].Value})
		}
	} else {
		keys, strs, err := codec.AppendDecodeKey(sl.keys, sl.strs, schema, k)
		if err != nil {
			sl.cells = sl.cells[:c0]
			return err
		}
		sl.keys, sl.strs = keys, strs
	}
	if !fresh {
		*sl.ends = append(*sl.ends, rowEnd{key: len(sl.keys), cells: len(sl.cells)})
		return nil
	}
	if *sl.rows == nil {
		*sl.rows = make([]tablekit.Row, 0, min(left, 256))
	}
	*sl.rows = append(*sl.rows, tablekit.Row{Key: sl.keys[k0:len(sl.keys):len(sl.keys)], Columns: sl.cells[c0:len(sl.cells):len(sl.cells)]})
	return nil
}

// addWhole is the first step of add for a read that may return stored
// rows whole (rd.w, of its read without the projection: no time range,
// and a projection, if any, that names every column of the row:
// rowmodel.Covers), for the row stored as val, whose key takes keyLen
// bytes encoded. It copies val into sl.strs as it is (one copy of the
// bytes, read in the order pebble's block holds them, with room after it
// for the key's strings), and decodes the cells from that copy straight
// into sl.cells from c0, each cell written once: their values view the
// copy, their names are interned by rd.names. When the row's shape makes
// the read return its cells whole, found is whether the row exists and
// passes the filter; the caller then adds it with addKey. Otherwise (done
// false: expired cells, more versions than the read returns, a column the
// projection leaves out; a row of more cells than the projection can
// cover is not decoded at all) the caller evaluates it with
// rowmodel.AppendRead and add, which copy only the cells returned. Unless
// found, what it took of sl is given back. left is how many rows the page
// may still return.
func (sl *slabs) addWhole(val []byte, keyLen int, rd *storedRead, left int) (c0 int, found, done bool, err error) {
	if rd.read.Columns != nil {
		_, _, n, _, err := rowHeader(view(val))
		if err != nil {
			return 0, false, true, err
		}
		if !rowmodel.MayCover(rd.read, n) {
			return 0, false, false, nil // more cells than a projection covering the row returns
		}
	}
	sl.reserve(len(val)+keyLen, left)
	s0 := len(sl.strs)
	sl.strs = append(sl.strs, val...)
	marker, _, n, d, err := rowHeader(view(sl.strs[s0:]))
	if err != nil {
		sl.strs = sl.strs[:s0]
		return 0, false, true, err
	}
	sl.room(n, left)
	c0 = len(sl.cells)
	sl.cells, err = appendCells(sl.cells, &d, n, rd.names)
	cells := sl.cells[c0:]
	if err == nil && rd.w.Of(rowmodel.ShapeOf(cells)) && (rd.read.Columns == nil || rowmodel.Covers(rd.read.Columns, cells)) {
		filter := rd.read.Filter
		found = (marker || len(cells) > 0) && (filter == nil || rowmodel.MatchFilter(filter, cells))
		done = true
	}
	if !found {
		clear(cells)
		sl.cells, sl.strs = sl.cells[:c0], sl.strs[:s0]
	}
	return c0, found, done || err != nil, err
}

// readRange reads the page GetRange returns for req from one pebble
// iterator into sl. next is the key the next page starts at, nil when the
// range is exhausted.
func (e *Engine) readRange(ctx context.Context, req *tablekit.GetRangeRequest, sc *rangeScratch, sl *slabs) (tablekit.PrimaryKey, error) {
	t, err := e.using(ctx, req.Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	opts := t.meta.Options
	sc.schema = t.meta.Key
	plen := len(t.prefix)
	lower, upper, skip, empty := sc.bounds(t, req)
	if empty {
		t.mu.RUnlock()
		return nil, nil
	}
	it, err := e.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	t.mu.RUnlock()
	if err != nil {
		return nil, storeError(err, "table %q: range read", req.Meta.Name)
	}
	next, err := walk(ctx, it, req, opts, plen, skip, sc, sl)
	if cerr := it.Close(); err == nil && cerr != nil {
		err = storeError(cerr, "table %q: range read", req.Meta.Name)
	}
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	return next, nil
}

// walk goes through it (positioned by readRange's bounds) in the
// request's direction, evaluates each stored row under opts and passes
// those the read returns to sl, until req.Limit rows were passed, or
// maxScan examined, or the rows passed reach maxPageBytes (the row that
// reaches it included, as tablekit.Table.GetRange counts a page): the
// next row's key is then next. So a page's memory follows its bytes, not
// only its rows: a Client asks for up to tablekit.MaxPageRows rows (1000
// a page for Rows and Scan), which of 1 MiB rows would be gigabytes.
// Each row is evaluated by addRow.
func walk(ctx context.Context, it *pebble.Iterator, req *tablekit.GetRangeRequest, opts tablekit.TableOptions, plen int, skip []byte, sc *rangeScratch, sl *slabs) (tablekit.PrimaryKey, error) {
	var stored [16]tablekit.Column
	row := rowmodel.Row{Cells: stored[:0]}
	rd := newStoredRead(sc.schema, opts, &req.Read, req.Now, &row, &sc.names)
	limit := max(req.Limit, 1)
	found, scanned, size := 0, 0, 0
	var ok bool
	if req.Backward {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = step(it, req.Backward) {
		k := it.Key()
		if skip != nil && string(k) == string(skip) {
			continue
		}
		if found >= limit || scanned >= maxScan || size >= pageBytes {
			next, err := codec.DecodeKey(sc.schema, k[plen:])
			if err != nil {
				return nil, corruptKey(req, err)
			}
			return next, nil
		}
		scanned++
		if scanned%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		val, err := it.ValueAndErr()
		if err != nil {
			return nil, storeError(err, "table %q: range read", req.Meta.Name)
		}
		c0, f, badKey, err := sl.addRow(&rd, k[plen:], val, limit-found)
		switch {
		case err != nil && badKey:
			return nil, corruptKey(req, err)
		case err != nil:
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: a row", req.Meta.Name)
		case !f:
			continue
		}
		size += len(k) - plen + cellsSize(sl.cells[c0:])
		found++
	}
	if err := it.Error(); err != nil {
		return nil, storeError(err, "table %q: range read", req.Meta.Name)
	}
	return nil, nil
}

// storedRead is how a read evaluates the stored rows it finds (addRow):
// the table's key schema and options, the read, and the row a stored row
// not taken whole is decoded into.
type storedRead struct {
	schema tablekit.KeySchema
	opts   tablekit.TableOptions
	read   *tablekit.ReadSpec
	now    int64
	w      rowmodel.WholeRead
	whole  bool // no time range: rows may be taken whole (addWhole), when a projection covers them
	row    *rowmodel.Row
	names  *names
	key    tablekit.PrimaryKey // the key of the one row read, when known (BatchGetRow): see addKey
}

func newStoredRead(schema tablekit.KeySchema, opts tablekit.TableOptions, read *tablekit.ReadSpec, now int64, row *rowmodel.Row, nm *names) storedRead {
	all := *read // a projection naming every column of a row returns it whole (rowmodel.Covers)
	all.Columns = nil
	return storedRead{schema: schema, opts: opts, read: read, now: now, w: rowmodel.NewWholeRead(&opts, &all, now),
		whole: read.TimeRange == nil, row: row, names: nm}
}

// addRow evaluates the row stored as val under the encoded key k (without
// the table's prefix) for rd, and adds it to sl if the read returns it
// (found; its cells from c0): the one evaluation of a stored row of range
// reads and BatchGetRow. A read of whole rows (no time range, no
// projection, or one naming every column of the row: the usual ones)
// copies the stored row once into sl's block
// of strings and decodes its cells from that copy straight into sl's
// block of cells (addWhole), each cell written once; a row it does not
// return whole (expired cells, more versions than the read returns), and
// any row of other reads, is decoded into rd.row, evaluated by
// rowmodel.AppendRead into sl's block, and its strings copied there
// (add). An error is the row's (it does not decode), or with badKey the
// key's; sl then holds nothing of the row. left is how many rows the
// read may still return.
func (sl *slabs) addRow(rd *storedRead, k, val []byte, left int) (c0 int, found, badKey bool, err error) {
	done := false
	if rd.whole {
		if c0, found, done, err = sl.addWhole(val, len(k), rd, left); err != nil {
			return 0, false, false, err
		}
	}
	if !done {
		if err := decodeRow(rd.row, view(val)); err != nil {
			return 0, false, false, err
		}
		sl.room(len(rd.row.Cells), left)
		c0 = len(sl.cells)
		sl.cells, found = rowmodel.AppendRead(sl.cells, rd.row, rd.opts, rd.read, rd.now)
	}
	if !found {
		return c0, false, false, nil
	}
	if done { // the strings view sl.strs already
		err = sl.addKey(rd.schema, k, rd.key, c0, left)
	} else { // they view pebble's memory
		err = sl.add(rd.schema, k, rd.key, c0, rd.names, left)
	}
	if err != nil {
		return c0, false, true, err
	}
	return c0, true, false, nil
}

// maxPageBytes is about how many bytes of rows one range page returns
// (SPEC §8: a page is at most 5000 rows or 4 MiB).
const maxPageBytes = tablekit.MaxPageSize

// pageBytes is maxPageBytes, a variable only so that BenchmarkBigRows can
// show pages bounded by rows alone side by side (it is never changed
// otherwise).
var pageBytes = maxPageBytes

// cellsSize is what cells count for in a page's bytes, as
// tablekit.Row.Size counts them.
func cellsSize(cells []tablekit.Column) int {
	n := 0
	for i := range cells {
		n += len(cells[i].Name) + cells[i].Value.Size() + 8
	}
	return n
}

func step(it *pebble.Iterator, backward bool) bool {
	if backward {
		return it.Prev()
	}
	return it.Next()
}

func corruptKey(req *tablekit.GetRangeRequest, err error) error {
	return tablekit.WrapError(tablekit.ErrUnavailable, fmt.Errorf("%w: %w", ErrCorrupt, err), "table %q: row key", req.Meta.Name)
}

// rangeScratch is the working memory of one range read, kept in a pool:
// the stored row being evaluated and the cells the read returns of it, the
// iterator's bounds; and the page ScanRange collects: its rows' key parts
// and cells one after the other, where each row ends, and its strings.
type rangeScratch struct {
	schema tablekit.KeySchema
	lo, hi []byte
	keys   tablekit.PrimaryKey
	page   []tablekit.Column
	ends   []rowEnd
	strs   []byte // the current chunk: bytes below len are never written again
	names  names
}

// rowEnd is where a row of the page ends in rangeScratch.keys and .page.
type rowEnd struct{ key, cells int }

var scratchPool = sync.Pool{New: func() any { return &rangeScratch{names: names{m: map[string]string{}}} }}

// maxKept bounds the page buffers (in elements) that a rangeScratch keeps
// in the pool: one very large page does not pin its memory for good.
const maxKept = 1 << 14

// release drops sc's reference to the request and returns it to the pool.
// It keeps the page's cells and key parts, whose strings are the rows'
// own copies (never views of pebble's memory, once a read succeeded), and
// so keeps them alive until the next read overwrites them or the pool
// drops sc: clearing 1,000 cells, 2,000 pointers, with the garbage
// collector's write barrier on, cost 9% of a 100-row Table.Scan.
func (sc *rangeScratch) release() {
	sc.schema = nil
	sc.keys, sc.page, sc.ends = sc.keys[:0], sc.page[:0], sc.ends[:0]
	if cap(sc.page) > maxKept || cap(sc.keys) > maxKept {
		sc.keys, sc.page, sc.ends = nil, nil, nil
	}
	if cap(sc.strs) > arenaChunk {
		sc.strs = nil // a chunk made for one large row
	}
	scratchPool.Put(sc)
}

// arenaChunk is the size of the chunks ScanRange copies strings into (and
// GetRange, for pages of more than arenaChunk bytes). It is a small size
// class of Go's allocator: 32 KiB, what it was, is past the largest small
// object (32 KiB less a header) and took the slower large-object path.
const arenaChunk = 28 << 10

// bounds turns a range request into pebble iterator bounds over t's rows
// (lower inclusive, upper exclusive), built in sc's buffers, with skip the
// encoded key (prefix included) a backward walk must not return (its
// exclusive exact end), and empty when nothing can be in the range.
func (sc *rangeScratch) bounds(t *table, req *tablekit.GetRangeRequest) (lower, upper, skip []byte, empty bool) {
	start, startExact, startTop := codec.AppendBound(append(sc.lo[:0], t.prefix...), req.Start)
	end, endExact, endTop := codec.AppendBound(append(sc.hi[:0], t.prefix...), req.End)
	sc.lo, sc.hi = start, end
	if !req.Backward {
		// [start, end): the start bound is inclusive either way, the end exclusive.
		if startTop {
			return nil, nil, nil, true
		}
		if endTop {
			end = t.top
		}
		return start, end, nil, false
	}
	// Backward, from start down to end, end exclusive. An exact start is
	// inclusive (the upper bound is its successor, the key followed by a
	// zero byte); an infinite one is an exclusive byte bound.
	if endTop {
		return nil, nil, nil, true
	}
	switch {
	case startTop:
		start = t.top
	case startExact:
		start = append(start, 0)
		sc.lo = start
	}
	if endExact {
		skip = end
	}
	return end, start, skip, false
}

// names interns column names: rows of a table mostly repeat them, in
// the same order, so a name equal to the previous row's at its position
// is that string, without a look-up.
type names struct {
	m    map[string]string
	last []string // the previous row's names by position
}

// get returns a string of its own equal to s, the name of cell i.
func (nm *names) get(i int, s string) string {
	if i < len(nm.last) && nm.last[i] == s {
		return nm.last[i]
	}
	v, ok := nm.m[s]
	if !ok {
		if len(nm.m) >= 1024 {
			clear(nm.m)
		}
		v = strings.Clone(s)
		nm.m[v] = v
	}
	switch {
	case i < len(nm.last):
		nm.last[i] = v
	case i == len(nm.last) && i < 256:
		nm.last = append(nm.last, v)
	}
	return v
}

// own replaces the strings of cols (which view a buffer about to be
// released) with copies sharing one new allocation.
func own(cols []tablekit.Column) {
	if n := stringsSize(cols, true); n > 0 {
		copyStrings(cols, make([]byte, 0, n), nil)
	}
}

// stringsSize is the number of bytes of the String and Binary values of
// cols, and of their names if withNames.
func stringsSize(cols []tablekit.Column, withNames bool) int {
	n := 0
	for i := range cols {
		if withNames {
			n += len(cols[i].Name)
		}
		if s, ok := stringOf(cols[i].Value); ok {
			n += len(s)
		}
	}
	return n
}

// copyStrings replaces the strings of cols with copies appended to dst,
// and returns dst: column names too, unless nm is given, which interns
// them. The copies view dst's bytes, which must never be written again;
// dst should have room for them (stringsSize), so that they share one
// allocation.
func copyStrings(cols []tablekit.Column, dst []byte, nm *names) []byte {
	str := func(s string) string {
		n := len(dst)
		dst = append(dst, s...)
		return view(dst[n:])
	}
	for i := range cols {
		c := &cols[i]
		if nm != nil {
			c.Name = nm.get(i, c.Name)
		} else {
			c.Name = str(c.Name)
		}
		switch c.Value.Type() {
		case tablekit.TypeString:
			s, _ := c.Value.Str()
			c.Value = tablekit.String(str(s))
		case tablekit.TypeBinary:
			s, _ := c.Value.BytesString()
			c.Value = tablekit.BinaryString(str(s))
		}
	}
	return dst
}

func stringOf(v tablekit.Value) (string, bool) {
	if s, ok := v.Str(); ok {
		return s, true
	}
	return v.BytesString()
}
