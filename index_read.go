package tablekit

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
)

// Index returns a read-only handle on the table's index of that name
// (SPEC §16). It does no I/O.
func (t *Table) Index(name string) *IndexTable { return &IndexTable{t: t, name: name} }

// IndexTable reads a table's index: rows in index-key order, each with
// the index key (the index columns, then the table's other key columns) and
// the newest visible value of each included column. Every read is
// consistent with the table per row (SPEC §16). It has no writes.
type IndexTable struct {
	t    *Table
	name string
}

// Name returns the index's name.
func (x *IndexTable) Name() string { return x.name }

// indexRead is a resolved index and read.
type indexRead struct {
	c       *Client
	m       *TableMeta
	ix      *IndexSpec
	ks      KeySchema
	sm      *TableMeta
	attrs   []KeyColumn
	read    ReadSpec // of the table's rows
	include []string // returned columns
	// rkAt is where the table's key is in an index key, its tail, when no
	// index column is a key column (the usual index); -1 otherwise.
	rkAt int
	// attrAt[i] is where attrs[i] is in an index key.
	attrAt []int
}

func (x *IndexTable) resolve(ctx context.Context, o *readOptions) (*indexRead, error) {
	m, err := x.t.c.tableMeta(ctx, x.t.name)
	if err != nil {
		return nil, err
	}
	ix, verr := indexOf(m, x.name)
	if verr != nil {
		return nil, verr
	}
	if ix.State != IndexReady {
		return nil, Errorf(ErrUnavailable, "table %q index %q is being filled (state %s); read it once AddIndex has returned", m.Name, ix.Name, ix.State)
	}
	r := &indexRead{c: x.t.c, m: m, ix: ix, ks: indexKeySchema(m, ix), sm: storageMeta(ix.Storage), attrs: attrColumns(m, ix), rkAt: -1}
	if len(r.ks) == len(ix.Columns)+len(m.Key) { // indexKeySchema: the index columns, then every key column
		r.rkAt = len(ix.Columns)
	}
	for _, a := range r.attrs {
		r.attrAt = append(r.attrAt, slices.IndexFunc(r.ks, func(k KeyColumn) bool { return k.Name == a.Name }))
	}
	if o.maxVersions > 1 || o.timeRange != nil {
		return nil, invalid("table %q index %q: an index row has the newest value of each column; MaxVersions and Versions do not apply", m.Name, ix.Name)
	}
	allowed := slices.Clone(ix.Include)
	for _, a := range r.attrs {
		allowed = append(allowed, a.Name)
	}
	if o.filter != nil {
		for _, name := range filterColumns(o.filter) {
			if !slices.Contains(allowed, name) {
				return nil, invalid("table %q index %q: the filter's column %q is neither an index column nor included", m.Name, ix.Name, name)
			}
		}
		if err := checkFilter(m, o.filter, 0); err != nil {
			return nil, err
		}
	}
	r.include = ix.Include
	if o.columns != nil {
		r.include = nil
		for _, name := range o.columns {
			if slices.Contains(ix.Include, name) {
				r.include = append(r.include, name)
			} else if !slices.ContainsFunc(r.ks, func(k KeyColumn) bool { return k.Name == name }) {
				return nil, invalid("table %q index %q: column %q is not included in the index", m.Name, ix.Name, name)
			}
		}
	}
	cols := slices.Clone(allowed)
	slices.Sort(cols)
	cols = slices.Compact(cols)
	if len(cols) == 0 {
		cols = []string{} // no attribute column: the row's existence only
	}
	r.read = ReadSpec{Columns: cols, MaxVersions: 1, Filter: o.filter}
	return r, nil
}

// filterColumns lists the columns f tests.
func filterColumns(f Filter) []string {
	switch f := f.(type) {
	case ColumnFilter:
		return []string{f.Column}
	case *ColumnFilter:
		return []string{f.Column}
	case CompositeFilter:
		return compositeColumns(f.Filters)
	case *CompositeFilter:
		return compositeColumns(f.Filters)
	}
	return nil
}

func compositeColumns(fs []Filter) []string {
	var out []string
	for _, g := range fs {
		out = append(out, filterColumns(g)...)
	}
	return out
}

// pageEntry is what a read takes of an entry: its encoded index key
// (entryBytes; a string of the read's own) and its stamp (ok: it has one;
// see entrySweeper).
type pageEntry struct {
	b   string
	st  stamp
	ok  bool
	end int // entryPage's: where b ends in the page's bytes
}

// entryOf returns what a read takes of entry e (read with entryStamps), its
// key's bytes b.
func entryOf(e Row, b string) pageEntry {
	pe := pageEntry{b: b}
	var t, n *Value
	for i := range e.Columns { // Row.Get of each, in one pass
		switch c := &e.Columns[i]; {
		case c.Name == "t" && t == nil:
			t = &c.Value
		case c.Name == "n" && n == nil:
			n = &c.Value
		}
	}
	if t != nil {
		pe.st.t, pe.ok = t.Int()
	}
	if n != nil && pe.ok {
		pe.st.n, pe.ok = n.Int()
	}
	return pe
}

// verifyScratch is what verify's row reads are made of: the requests,
// which the backend keeps no longer than its call (Backend), so they are
// reused, through a pool.
type verifyScratch struct {
	gets []GetRowRequest
	reqs []*GetRowRequest
}

var verifyPool = sync.Pool{New: func() any { return new(verifyScratch) }}

// verify reads the rows of entries and returns the index rows of those
// whose current values match, and the encoded key of the last one's entry.
func (r *indexRead) verify(ctx context.Context, entries []pageEntry) (rows []Row, last string, err error) {
	iks := make([]PrimaryKey, 0, len(entries))
	ekeys := make([]string, 0, len(entries))
	sw := r.sweeper()
	vs := verifyPool.Get().(*verifyScratch)
	defer func() {
		clear(vs.gets)
		clear(vs.reqs)
		vs.gets, vs.reqs = vs.gets[:0], vs.reqs[:0]
		verifyPool.Put(vs)
	}()
	if cap(vs.gets) < len(entries) {
		vs.gets = make([]GetRowRequest, 0, len(entries))
		vs.reqs = make([]*GetRowRequest, 0, len(entries))
	}
	// The index keys in one allocation, and the row keys too unless they
	// are the index keys' tails.
	ikParts := make([]KeyPart, len(entries)*len(r.ks))
	var parts []KeyPart
	if r.rkAt < 0 {
		parts = make([]KeyPart, len(entries)*len(r.m.Key))
	}
	now := r.c.now()
	for _, e := range entries {
		ik := PrimaryKey(ikParts[:len(r.ks):len(r.ks)])
		if !decodeIndexKeyInto(ik, r.ks, e.b) {
			continue // not an entry of this schema: never written by the Client
		}
		ikParts = ikParts[len(r.ks):]
		var rk PrimaryKey
		if r.rkAt >= 0 {
			rk = ik[r.rkAt:]
		} else {
			rk = PrimaryKey(parts[:len(r.m.Key):len(r.m.Key)])
			parts = parts[len(r.m.Key):]
			for i, kc := range r.m.Key {
				v, _ := ik.Get(kc.Name)
				rk[i] = KeyPart{Name: kc.Name, Value: v}
			}
		}
		iks = append(iks, ik)
		ekeys = append(ekeys, e.b)
		sw.consider(e)
		vs.gets = append(vs.gets, GetRowRequest{Meta: r.m, Key: rk, Read: r.read, Now: now})
	}
	for i := range vs.gets {
		vs.reqs = append(vs.reqs, &vs.gets[i])
	}
	reqs := vs.reqs
	rows = make([]Row, 0, len(iks))
	for len(reqs) > 0 {
		n := min(len(reqs), MaxBatchGet)
		res, err := r.c.verifyGet(ctx, reqs[:n])
		if err != nil {
			return nil, "", err
		}
		if len(res) != n {
			return nil, "", Errorf(ErrUnavailable, "backend returned %d results for %d reads", len(res), n)
		}
		for i, g := range res {
			if g.Err != nil {
				return nil, "", g.Err
			}
			if out, ok := r.match(g.Row, iks[i]); ok {
				rows = append(rows, out)
				last = ekeys[i]
				sw.keep(ekeys[i])
			}
		}
		reqs, iks, ekeys = reqs[n:], iks[n:], ekeys[n:]
	}
	sw.sweep(ctx)
	return rows, last, nil
}

// entrySweeper removes, as a read goes, the stale entries it found (SPEC
// §16: extra entries are never read and may be removed): an entry whose
// row no longer needs it, with a stamp older than the grace period,
// deleted on the condition that its stamp is unchanged, as Reindex's
// removeEntry does (the index notes say why that is safe). Without it an
// index of a column that rows leave (a status a job passes through, a row
// deleted) collects an entry per row that ever had the value, and every
// read of the value verifies them all. A read sweeps only what it can
// judge from its own row reads: with no filter (a filtered-out row reads
// as no row) and in a table keeping one version (whose one visible value
// is the newest, the value the read compares; with more, older visible
// values still need their entries, and Reindex decides). Sweeping is
// best effort: its errors are dropped, the next read or Reindex finds
// the entry again. A Client made WithIndexSweep(false) does not sweep.
type entrySweeper struct {
	r      *indexRead
	cutoff int64
	old    map[string]stamp // candidates: entries older than the grace, by entryBytes
}

func (r *indexRead) sweeper() entrySweeper {
	if r.c.noSweep || r.read.Filter != nil || r.m.Options.MaxVersions != 1 {
		return entrySweeper{}
	}
	return entrySweeper{r: r, cutoff: r.c.now() - r.c.grace().Milliseconds()}
}

// consider notes entry e if it is old enough to go.
func (sw *entrySweeper) consider(e pageEntry) {
	if sw.r == nil || !e.ok || e.st.t > sw.cutoff {
		return
	}
	if sw.old == nil {
		sw.old = map[string]stamp{}
	}
	sw.old[e.b] = e.st
}

// keep drops an entry whose row matched from the candidates.
func (sw *entrySweeper) keep(b string) {
	if len(sw.old) > 0 {
		delete(sw.old, b)
	}
}

// sweep deletes the remaining candidates, each on its stamp.
func (sw *entrySweeper) sweep(ctx context.Context) {
	if len(sw.old) == 0 || ctx.Err() != nil {
		return
	}
	now := sw.r.c.now()
	dels := make([]*WriteRequest, 0, len(sw.old))
	for b, st := range sw.old {
		dels = append(dels, entryDelete(sw.r.sm, b, st, now))
	}
	for len(dels) > 0 {
		n := min(len(dels), MaxBatchWrite)
		if _, err := sw.r.c.batchWrite(ctx, dels[:n]); err != nil {
			return
		}
		dels = dels[n:]
	}
}

// match returns the index row of row if its newest values are ik's. Its
// cells are row's own, the included ones moved to the front of
// row.Columns (the row is the read's: a backend keeps none it returns).
func (r *indexRead) match(row *Row, ik PrimaryKey) (Row, bool) {
	if row == nil {
		return Row{}, false
	}
	for i, a := range r.attrs {
		v, ok := row.Get(a.Name)
		if !ok || v != ik[r.attrAt[i]].Value {
			return Row{}, false
		}
	}
	out := Row{Key: ik}
	cols := row.Columns[:0]
	for _, cell := range row.Columns {
		if slices.Contains(r.include, cell.Name) {
			cols = append(cols, cell)
		}
	}
	if len(cols) > 0 {
		out.Columns = cols[:len(cols):len(cols)]
	}
	return out, true
}

// entryStamps reads what a read needs of an entry: its key, and its stamp
// (cells n and t, small), which the sweep's conditional delete compares.
var entryStamps = ReadSpec{Columns: []string{"n", "t"}, MaxVersions: 1}

// indexCursor walks an index range through entry-table pages.
type indexCursor struct {
	r          *indexRead
	start, end PrimaryKey // entry-table bounds
	backward   bool
	skip       PrimaryKey
	done       bool
}

func (x *IndexTable) cursor(ctx context.Context, start, end PrimaryKey, opts []RangeOption) (*indexCursor, *readOptions, error) {
	o := new(readOptions)
	for _, opt := range opts {
		if opt != nil {
			opt.applyRange(o)
		}
	}
	r, err := x.resolve(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	if err := checkIndexKey(r.ks, start, true); err != nil {
		return nil, nil, err
	}
	if err := checkIndexKey(r.ks, end, true); err != nil {
		return nil, nil, err
	}
	c := CompareKeys(start, end)
	if !o.backward && c >= 0 {
		return nil, nil, invalid("forward range needs start %v below end %v", start, end)
	}
	if o.backward && c <= 0 {
		return nil, nil, invalid("backward range needs start %v above end %v", start, end)
	}
	if o.limit < 0 {
		return nil, nil, invalid("Limit %d must be at least 1", o.limit)
	}
	if o.pageSize < 0 || o.pageSize > MaxPageRows {
		return nil, nil, invalid("PageSize %d must be 1-%d", o.pageSize, MaxPageRows)
	}
	// An encoded bound holds the entries SPEC orders inside it, both ways
	// (a bound ending in InfMax is its prefix's successor, which no entry
	// equals: an entry is longer).
	cur := &indexCursor{r: r, start: indexBound(start), end: indexBound(end), backward: o.backward}
	if o.token != nil {
		tk, err := decodeCanonicalToken(o.token)
		if err != nil {
			return nil, nil, err
		}
		if tk.table != r.sm.Name || tk.backward != o.backward || checkKey(r.sm, tk.key, false) != nil {
			return nil, nil, invalid("resume token belongs to another index, direction or range")
		}
		cur.start, cur.skip = tk.key, tk.key
	}
	return cur, o, nil
}

// next returns the verified rows of the next page of at most want
// entries, and the encoded key of the last one's entry.
func (cur *indexCursor) next(ctx context.Context, want int) ([]Row, string, error) {
	if cur.done {
		return nil, "", nil
	}
	limit := want
	if cur.skip != nil {
		limit++
	}
	entries, next, err := cur.r.c.entryPage(ctx, &GetRangeRequest{Meta: cur.r.sm, Start: cur.start, End: cur.end, Backward: cur.backward,
		Limit: min(limit, MaxPageRows+1), Read: entryStamps, Now: cur.r.c.now()})
	if err != nil {
		return nil, "", err
	}
	if cur.skip != nil && len(entries) > 0 && entries[0].b == entryBytes(cur.skip) {
		entries = entries[1:]
	}
	cur.skip = nil
	if next == nil {
		cur.done = true
	} else {
		cur.start = next
	}
	return cur.r.verify(ctx, entries)
}

// entryPage reads a page of entries (req, of an entry table). A backend
// with [Capabilities.LendingScan] lends them (RangeScanner): the read
// copies what it takes of them, their keys' bytes, into one string of its
// own, and no page is built; another returns a GetRange page.
func (c *Client) entryPage(ctx context.Context, req *GetRangeRequest) ([]pageEntry, PrimaryKey, error) {
	if s, ok := optional[RangeScanner](c, c.caps.LendingScan); ok {
		entries := make([]pageEntry, 0, min(req.Limit, 128))
		buf := make([]byte, 0, 32*cap(entries)) // the keys' bytes, one after the other
		next, err := s.ScanRange(ctx, req, func(e Row) bool {
			buf = appendEntryBytes(buf, e.Key)
			pe := entryOf(e, "")
			pe.end = len(buf)
			entries = append(entries, pe)
			return true
		})
		if !errors.Is(err, ErrSkip) {
			if err != nil {
				return nil, nil, err
			}
			all, from := string(buf), 0
			for i := range entries {
				e := &entries[i]
				e.b, from = all[from:e.end], e.end
			}
			return entries, next, nil
		}
	}
	resp, err := c.b.GetRange(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	entries := make([]pageEntry, len(resp.Rows))
	for i, e := range resp.Rows {
		entries[i] = entryOf(e, entryBytes(e.Key))
	}
	return entries, resp.Next, nil
}

// GetRange reads the index from start toward end (exclusive), bounds over
// the index key, until Limit rows passed the filter or the range ends.
func (x *IndexTable) GetRange(ctx context.Context, start, end PrimaryKey, opts ...RangeOption) (RangeResult, error) {
	const op = "GetRange"
	cur, o, err := x.cursor(ctx, start, end, opts)
	if err != nil {
		return RangeResult{}, annotate(err, op, x.t.name)
	}
	want := MaxPageRows
	if o.limit > 0 {
		want = min(o.limit, MaxPageRows)
	}
	var res RangeResult
	var last string
	for !cur.done && len(res.Rows) < want {
		rows, key, err := cur.next(ctx, want-len(res.Rows))
		if err != nil {
			return RangeResult{}, annotate(err, op, x.t.name)
		}
		switch {
		case len(rows) == 0:
		case res.Rows == nil:
			res.Rows, last = rows, key // the first page's rows: most reads have one
		default:
			res.Rows, last = append(res.Rows, rows...), key
		}
	}
	if len(res.Rows) >= want {
		res.Next = encodeToken(token{table: cur.r.sm.Name, backward: o.backward, exclusive: true, key: entryChunks([]byte(last))})
	}
	return res, nil
}

// Rows streams the index range (up to [Limit] rows), consistent per row.
func (x *IndexTable) Rows(ctx context.Context, start, end PrimaryKey, opts ...RangeOption) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		cur, o, err := x.cursor(ctx, start, end, opts)
		if err != nil {
			yield(Row{}, annotate(err, "GetRange", x.t.name))
			return
		}
		page, remaining := o.streamSizes()
		next := func(ctx context.Context, n int) ([]Row, error) {
			rows, _, err := cur.next(ctx, n)
			return rows, annotate(err, "GetRange", x.t.name)
		}
		yieldPages(ctx, page, remaining, func() bool { return cur.done }, next, yield)
	}
}

// Scan is [IndexTable.Rows] (the rows are the caller's to keep).
func (x *IndexTable) Scan(ctx context.Context, start, end PrimaryKey, opts ...RangeOption) iter.Seq2[Row, error] {
	return x.Rows(ctx, start, end, opts...)
}

// GetRow reads the index row of an index key; found is false if no row of
// the table has that index key now (or it fails the filter).
func (x *IndexTable) GetRow(ctx context.Context, key PrimaryKey, opts ...ReadOption) (Row, bool, error) {
	const op = "GetRow"
	o := new(readOptions)
	for _, opt := range opts {
		if opt != nil {
			opt.applyRead(o)
		}
	}
	r, err := x.resolve(ctx, o)
	if err != nil {
		return Row{}, false, annotate(err, op, x.t.name)
	}
	if err := checkIndexKey(r.ks, key, false); err != nil {
		return Row{}, false, annotate(err, op, x.t.name)
	}
	e, err := r.c.b.GetRow(ctx, &GetRowRequest{Meta: r.sm, Key: indexBound(key), Read: entryStamps, Now: r.c.now()})
	if err != nil || e == nil {
		return Row{}, false, annotate(err, op, x.t.name)
	}
	rows, _, err := r.verify(ctx, []pageEntry{entryOf(*e, entryBytes(e.Key))})
	if err != nil || len(rows) == 0 {
		return Row{}, false, annotate(err, op, x.t.name)
	}
	return rows[0], true, nil
}

// TableKey returns the table's primary key of an index row's key.
func (x *IndexTable) TableKey(ctx context.Context, indexKey PrimaryKey) (PrimaryKey, error) {
	m, err := x.t.c.tableMeta(ctx, x.t.name)
	if err != nil {
		return nil, err
	}
	k := make(PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		v, ok := indexKey.Get(kc.Name)
		if !ok {
			return nil, invalid("index key %v lacks the table's key column %q", indexKey, kc.Name)
		}
		k[i] = KeyPart{Name: kc.Name, Value: v}
	}
	return k, nil
}

// verifyGet reads the rows of a page of entries: in one call where the
// backend batches reads, else one GetRow after another (the engines without
// batch reads are in-process, where a goroutine per row costs more than
// the read).
func (c *Client) verifyGet(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error) {
	if c.caps.BatchRead {
		return c.batchGet(ctx, reqs)
	}
	out := make([]GetRowResponse, len(reqs))
	for i, q := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i].Row, out[i].Err = c.b.GetRow(ctx, q)
	}
	return out, nil
}
