package localengine

import (
	"context"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/internal/feedwake"
	"github.com/tablekit/tablekit/rowmodel"
)

// maxScan bounds how many stored rows one GetRange page examines.
const maxScan = tablekit.MaxScanRows

// Engine is an in-memory tablekit.Backend.
type Engine struct {
	// mu orders the changes of the set of tables (CreateTable, DeleteTable,
	// Close). tables is replaced, never changed in place, and published in
	// catalog, which an operation loads to find its table without taking
	// a lock: concurrent operations write no shared word to find theirs.
	mu       sync.RWMutex
	tables   map[string]*table
	closed   bool
	catalog  atomic.Pointer[map[string]*table] // tables; nil once closed
	spanRows int                               // entries above which a new table's span splits; 0: spanRows (a test hook)
	general  bool                              // a new table never updates in place (update.go; a test hook: the baseline of its benchmarks)
}

type table struct {
	// The table's lock guards meta, the span list and feed. It is mu and
	// the writer slots: readers share mu, and a single-row writer shares
	// one slot, picked at random (so writers of different slots write no
	// common word); UpdateTable, atomic writes' stores, splits and merges
	// of spans, and the feed's settings take mu and every slot alone
	// (lock; see Write, span.go); the feed's reads share mu and take
	// feedMu (feed.go).
	mu       sync.RWMutex
	slots    [writerSlots]slot
	meta     tablekit.TableMeta
	lows     []string // lows[i] is the least key span i may hold; lows[0] is ""
	spans    []*span  // the rows, by key range (span.go)
	spanRows int      // entries above which a span splits
	general  bool     // every update takes rowmodel's Update (Engine.general)
	feed     *feedLog // the change feed (feed.go); nil when never enabled
	// feedMu orders the appends of writers that share mu (feed.go).
	feedMu sync.Mutex
	ai     *autoInc        // auto-increment counters (autoinc.go); nil without such a column
	wake   feedwake.Signal // closes for followers at each change record (feed.go)
	// A writer holds its row's stripe from reading the stored row to
	// storing the new one (alone; shared when it reads no row: see
	// stripe), so that a write that reads its row stores over the row it
	// read, and writes to rows of different stripes build their rows
	// together.
	stripes [stripes]stripe
}

// newRows returns an empty map of rows. Its items are the entries
// themselves, ordered by their keys (less): the map holds one pointer per
// row (rec, which holds the key), and takes no lock of its own.
func newRows() *btree.BTreeG[entry] {
	return btree.NewBTreeGOptions(less, btree.Options{NoLocks: true})
}

// writerSlots is the number of writer slots of a table's lock.
const writerSlots = 16

type slot struct {
	sync.RWMutex
	_ [40]byte // one cache line each
}

// lock takes the table's lock alone: mu, then every writer slot.
func (t *table) lock() {
	t.mu.Lock()
	for i := range t.slots {
		t.slots[i].Lock()
	}
}

// unlock releases what lock took.
func (t *table) unlock() {
	for i := range t.slots {
		t.slots[i].Unlock()
	}
	t.mu.Unlock()
}

// stripes is the number of row locks per table.
const stripes = 64

// A stripe is taken alone by a write that reads the stored row (an update,
// a write with a condition, a write of an assigned auto-increment key) or
// several rows (an atomic write), and shared by an unconditional put or
// delete, which reads no row: writers of one stripe that read nothing do not
// wait for each other (their stores, under the span's lock, order them),
// and a writer that reads a row still has it to itself until it stores.
type stripe struct {
	sync.RWMutex
	_ [40]byte // one cache line each: writers of different stripes share none
}

// stripeOf returns the index of the stripe of the row with encoded key k:
// a hash whose every bit depends on every byte of k (FNV-1a's low six
// bits left half the stripes unused by an index's entry keys, whose bytes
// repeat a pattern). It is the runtime's maphash, seeded once a process
// (stripes are the process's alone): a few nanoseconds for a key that
// FNV-1a, a multiplication a byte, took tens for (an indexed put hashes
// two keys).
func stripeOf(k []byte) int { return int(maphash.Bytes(stripeSeed, k) % stripes) }

// stripeSeed seeds stripeOf's hash.
var stripeSeed = maphash.MakeSeed()

// New returns an empty engine.
func New() *Engine {
	e := &Engine{}
	e.publish(map[string]*table{})
	return e
}

// publish makes m the set of tables (the caller holds e.mu, or is New).
func (e *Engine) publish(m map[string]*table) {
	e.tables = m
	e.catalog.Store(&m)
}

// Close drops every table. Later calls fail with ErrUnavailable.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.tables = nil
	e.catalog.Store(nil)
	e.mu.Unlock()
	return nil
}

func (e *Engine) table(ctx context.Context, name string) (*table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tables := e.catalog.Load()
	if tables == nil {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the local engine is closed")
	}
	t, ok := (*tables)[name]
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	return t, nil
}

// CreateTable implements tablekit.Backend.
func (e *Engine) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	return e.createTable(ctx, meta, nil)
}

// createTable creates the table, its change feed on if feed is set (in the
// same step: no write can come before the feed).
func (e *Engine) createTable(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return tablekit.Errorf(tablekit.ErrUnavailable, "the local engine is closed")
	}
	if _, ok := e.tables[meta.Name]; ok {
		return tablekit.Errorf(tablekit.ErrAlreadyExists, "table %q already exists", meta.Name)
	}
	m := *meta
	m.Key = slices.Clone(meta.Key)
	n := e.spanRows
	if n <= 0 {
		n = spanRows
	}
	tables := maps.Clone(e.tables)
	t := &table{meta: m, lows: []string{""}, spans: []*span{newSpan(newRows(), "")}, spanRows: n, general: e.general, ai: newAutoInc(&m)}
	if feed != nil {
		t.feed = &feedLog{}
		t.feed.enable(m.Incarnation, feed.Retention)
	}
	tables[meta.Name] = t
	e.publish(tables)
	return nil
}

// DescribeTable implements tablekit.Backend.
func (e *Engine) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	t, err := e.table(ctx, name)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	m := t.meta
	t.mu.RUnlock()
	m.Key = slices.Clone(m.Key)
	return &m, nil
}

// ListTables implements tablekit.Backend.
func (e *Engine) ListTables(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the local engine is closed")
	}
	names := make([]string, 0, len(e.tables))
	for n := range e.tables {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// UpdateTable implements tablekit.Backend.
func (e *Engine) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	t.lock()
	defer t.unlock()
	switch {
	case t.meta.Incarnation != req.Meta.Incarnation:
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q was deleted and created again", req.Meta.Name)
	case t.meta.Generation != req.Meta.Generation:
		return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "table %q: options changed (generation %d, expected %d)", req.Meta.Name, t.meta.Generation, req.Meta.Generation)
	}
	t.meta.Options = req.Options
	t.meta.Generation++
	m := t.meta
	m.Key = slices.Clone(m.Key)
	return &m, nil
}

// current returns the table's meta if req (built from meta m) addresses the
// table as it is, or the stale error.
func (t *table) current(m *tablekit.TableMeta) (*tablekit.TableMeta, error) {
	if m.Incarnation != t.meta.Incarnation {
		return nil, driver.Stale("table %q was deleted and created again since the request's metadata was read", m.Name)
	}
	return &t.meta, nil
}

// DeleteTable implements tablekit.Backend.
func (e *Engine) DeleteTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return tablekit.Errorf(tablekit.ErrUnavailable, "the local engine is closed")
	}
	if _, ok := e.tables[name]; !ok {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	tables := maps.Clone(e.tables)
	delete(tables, name)
	e.publish(tables)
	return nil
}

// GetRow implements tablekit.Backend.
func (e *Engine) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	k := codec.EncodeKey(req.Key) // exactly sized: see Write
	t.mu.RLock()
	cur, err := t.current(req.Meta)
	if err != nil {
		t.mu.RUnlock()
		return nil, err
	}
	opts, schema := cur.Options, cur.Key
	// The map does not keep the lookup key, so a string view of k will do.
	ent, ok := t.get(bytesView(k))
	t.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	cols, found := getCells(&ent, opts, &req.Read, req.Now)
	if !found {
		return nil, nil
	}
	// The row's key is the key asked for (their encodings are equal), under
	// the schema's names: there is nothing to decode.
	r := newRow(len(schema))
	for i, kc := range schema {
		r.Key[i].Name, r.Key[i].Value = kc.Name, req.Key[i].Value
	}
	r.Columns = cols
	return r, nil
}

// getCells is what GetRow returns of the stored row ent: its cells, in a
// new slice, exactly sized for the stored cells, and whether the row is
// returned (appendGetCells).
func getCells(ent *entry, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool) {
	cols, found := appendGetCells(make([]tablekit.Column, 0, ent.cells), nil, ent, opts, spec, now)
	return cols[:len(cols):len(cols)], found
}

// appendGetCells appends the cells a read returns of the stored row ent
// to dst, and reports whether the row is returned (on false, dst comes
// back unchanged): every read's evaluation of a stored row, GetRow's,
// BatchGetRow's and the range reads' but for the rows GetRange takes whole
// (engine.go). A read that returns the cells as they are stored
// (rowmodel.WholeRead of the entry's shape), or would but for a projection
// naming every column the row has (rowmodel.Covers: YCSB's reads name
// every field, an index's reads its index and included columns, and
// entries' reads their stamp), decodes them straight into dst; any other
// evaluates them (rowmodel.AppendRead), decoding the row into *scratch
// (which it may grow), or into an array of its own when scratch is nil.
func appendGetCells(dst []tablekit.Column, scratch *[]tablekit.Column, ent *entry, opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool) {
	if rowmodel.NewWholeRead(&opts, spec, now).Of(ent.shape()) {
		return ent.appendRead(dst, nil, true, opts, spec, now)
	}
	if spec.Columns != nil && spec.TimeRange == nil && rowmodel.MayCover(spec, int(ent.cells)) {
		all := *spec
		all.Columns = nil
		if rowmodel.NewWholeRead(&opts, &all, now).Of(ent.shape()) {
			at := len(dst)
			cols, found := ent.appendRead(dst, nil, true, opts, &all, now)
			if !found || rowmodel.Covers(spec.Columns, cols[at:]) {
				return cols, found
			}
			clear(cols[at:])
			dst = cols[:at]
		}
	}
	if scratch != nil {
		return ent.appendRead(dst, scratch, false, opts, spec, now)
	}
	var sbuf [16]tablekit.Column // GetRow's: a pointer to it would move it to the heap
	r := ent.row(sbuf[:0])
	return rowmodel.AppendRead(dst, &r, opts, spec, now)
}

// newRow returns a Row whose Key has n parts, both in one allocation for
// keys of up to 4 columns.
func newRow(n int) *tablekit.Row {
	switch n {
	case 1:
		rk := new(struct {
			r tablekit.Row
			k [1]tablekit.KeyPart
		})
		rk.r.Key = rk.k[:]
		return &rk.r
	case 2, 3, 4:
		rk := new(struct {
			r tablekit.Row
			k [4]tablekit.KeyPart
		})
		rk.r.Key = rk.k[:n:n]
		return &rk.r
	}
	return &tablekit.Row{Key: make(tablekit.PrimaryKey, n)}
}

// GetRange implements tablekit.Backend.
//
// It works in two steps. It walks the range (see walk: a bounded number of
// map steps per hold of the table's read lock, every row's evaluation
// unlocked) and notes, in scratch space kept in a pool, the rows the page
// returns: an entry whose cells the read returns whole (its shape says so,
// and there is no filter) is noted as it is; any other is evaluated into
// a scratch buffer of cells. Then it builds the page in exactly sized
// slices, one for the rows, one for all their key parts and one for all
// their cells, each row a capped window of them, decoding the whole rows
// straight into it: the caller owns what it gets (its strings view the
// immutable stored rows), and no cell is decoded twice.
func (e *Engine) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	sc := scratchPool.Get().(*rangeScratch)
	defer sc.release()
	var whole rowmodel.WholeRead
	ready := false
	next, err := t.walk(ctx, req, sc, func(ent *entry, opts *tablekit.TableOptions) (bool, bool) {
		if !ready { // the table's options are known once the walk began
			whole, ready = rowmodel.NewWholeRead(opts, &req.Read, req.Now), true
		}
		if whole.Of(ent.shape()) && req.Read.Filter == nil {
			if !ent.exists() {
				return false, true // cannot happen: an entry has cells or a marker
			}
			sc.found = append(sc.found, foundRow{ent: *ent, from: -1})
			sc.cells += int(ent.cells)
			return true, true
		}
		from := len(sc.cbuf)
		var found bool
		if sc.cbuf, found = appendGetCells(sc.cbuf, &sc.dbuf, ent, *opts, &req.Read, req.Now); found {
			sc.found = append(sc.found, foundRow{ent: *ent, from: from, to: len(sc.cbuf)})
			sc.cells += len(sc.cbuf) - from
		}
		return found, true
	})
	if err != nil {
		return nil, err
	}
	return sc.page(next), nil
}

// bytesView returns b as a string without copying; b must not change while
// the string is in use.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rangeScratch is what one GetRange collects: the rows it returns and
// their number of cells; and the walk's working memory. ScanRange keeps
// the cells and key it lends in it too.
type rangeScratch struct {
	found  []foundRow
	cells  int
	batch  []entry
	cbuf   []tablekit.Column // evaluated cells (GetRange), or the cells lent (ScanRange)
	dbuf   []tablekit.Column // a stored row's cells, decoded to be evaluated
	kbuf   tablekit.PrimaryKey
	opts   tablekit.TableOptions
	schema tablekit.KeySchema
	sbuf   [128]byte // the encoded bounds; the map keeps no pivot
	ebuf   [128]byte
}

// foundRow is a row a GetRange page returns: its entry, and where its cells
// are in cbuf (from < 0: the entry's cells, whole).
type foundRow struct {
	ent      entry
	from, to int
}

var scratchPool = sync.Pool{New: func() any { return new(rangeScratch) }}

// page builds the page of the collected rows, in new, exactly sized
// slices, with next's key as the page's Next.
func (sc *rangeScratch) page(next *entry) *tablekit.GetRangeResponse {
	nk := len(sc.found) * len(sc.schema)
	if next != nil {
		nk += len(sc.schema)
	}
	rows := make([]tablekit.Row, len(sc.found))
	keys := make(tablekit.PrimaryKey, 0, nk)
	cells := make([]tablekit.Column, 0, sc.cells)
	for i := range sc.found {
		f := &sc.found[i]
		cn := len(cells)
		if f.from < 0 {
			cells = f.ent.appendCells(cells)
		} else {
			cells = append(cells, sc.cbuf[f.from:f.to]...)
		}
		kn := len(keys)
		keys = f.ent.appendKey(keys, sc.schema)
		r := &rows[i] // field by field, as appendCells writes cells
		r.Key, r.Columns = keys[kn:len(keys):len(keys)], cells[cn:len(cells):len(cells)]
	}
	p := &tablekit.GetRangeResponse{Rows: rows}
	if next != nil {
		kn := len(keys)
		keys = next.appendKey(keys, sc.schema)
		p.Next = keys[kn:len(keys):len(keys)]
	}
	return p
}

// release clears sc (dropping its references, for the garbage collector)
// and returns it to the pool.
func (sc *rangeScratch) release() {
	clear(sc.found)
	clear(sc.batch)
	clear(sc.cbuf[:cap(sc.cbuf)])
	clear(sc.dbuf[:cap(sc.dbuf)])
	clear(sc.kbuf)
	sc.found, sc.cells, sc.batch, sc.cbuf, sc.dbuf, sc.kbuf = sc.found[:0], 0, sc.batch[:0], sc.cbuf[:0], sc.dbuf[:0], sc.kbuf[:0]
	sc.schema = nil
	scratchPool.Put(sc)
}

// Write implements tablekit.Backend. It holds the row's stripe throughout,
// and the table's lock shared: it reads the table's options (and the
// stored row, when the write depends on it), applies the write (rowmodel)
// and packs the new row, and stores it and appends its change record in
// one hold of the lock of the row's span (span.go). Another writer of the
// row waits for the stripe, so the row it reads is the row this write
// stores it over (unconditional puts and deletes, which read no row, share
// it: their stores order them); writers of other rows build and store theirs in
// parallel, and the table's options cannot change meanwhile (UpdateTable
// takes the table's lock alone). A write takes effect, for readers and the
// change feed alike, when it is stored. A put or update whose key holds
// tablekit.AutoIncrement gets its key first (autoinc.go).
func (e *Engine) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	t, err := e.table(ctx, w.Meta.Name)
	if err != nil {
		return nil, err
	}
	if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
		return t.writeAuto(w, nil) // autoinc.go
	}
	return t.write(w)
}

// write is Write's work on table t, for a write whose key is complete: it
// takes the row's stripe and applies the write (writeRow).
func (t *table) write(w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	// On the heap: the map's lookups call its comparator indirectly, so
	// the compiler cannot see that they keep no key, and a buffer on the
	// stack would be moved there, all of it. A put's row is packed after
	// the key, in the same allocation (putRoom).
	k := putRoom(w)
	st := &t.stripes[stripeOf(k)]
	if w.Kind != tablekit.WriteUpdate && w.Condition.IsZero() {
		st.RLock() // an unconditional put or delete: see stripe
		defer st.RUnlock()
	} else {
		st.Lock()
		defer st.Unlock()
	}
	res, _, err := t.writeRow(w, k, false)
	return res, err
}

// writeRow applies w to the row of encoded key k, whose stripe the caller
// holds, as Write describes. With fresh (w's key was just assigned:
// autoinc.go) the row must be absent: when it is there, writeRow writes
// nothing and reports it taken. A span the write leaves too large or too
// small is split or merged once the table's lock is released.
func (t *table) writeRow(w *tablekit.WriteRequest, k []byte, fresh bool) (*tablekit.UpdateResult, bool, error) {
	sl := &t.slots[rand.N(writerSlots)] // the table's lock, shared
	sl.RLock()
	res, taken, reshape, err := t.writeShared(w, k, fresh)
	sl.RUnlock()
	if reshape {
		t.reshape(bytesView(k)) // span.go
	}
	return res, taken, err
}

// writeShared is writeRow's work under the table's lock, held shared; ek
// is the encoded key, whose spare capacity the packed row may take
// (packAfter).
func (t *table) writeShared(w *tablekit.WriteRequest, ek []byte, fresh bool) (res *tablekit.UpdateResult, taken, reshape bool, err error) {
	k := bytesView(ek)
	// The table's meta, not a copy: it cannot change while the lock is held.
	m, err := t.current(w.Meta)
	if err != nil {
		return nil, false, false, err
	}
	// Only an update and a condition read the stored row; an unconditional
	// put or delete is decided without it, and saves a walk down the map.
	// The store follows the read's path (hint): one walk per write.
	var (
		old  entry
		ok   bool
		hint btree.PathHint
	)
	if fresh || w.Kind == tablekit.WriteUpdate || !w.Condition.IsZero() {
		old, ok = t.getHint(k, &hint)
	}
	if fresh && ok {
		return nil, true, false, nil
	}
	if ok && w.Kind == tablekit.WriteUpdate && !t.general {
		if ent, done := inPlace(w, m, &old); done { // update.go
			res := &tablekit.UpdateResult{}
			t.ai.saw(w.Key)
			return res, false, t.store(k, ent, true, w, res, &hint), nil
		}
	}
	var scratch [16]tablekit.Column
	ww, ent, keep, res, err := applyAfter(w, ek, m, old, ok, scratch[:0])
	if err != nil {
		return nil, false, false, err
	}
	if keep && !fresh { // an assigned key is the counter's already
		t.ai.saw(ww.Key) // before the row is stored (autoinc.go)
	}
	return res, false, t.store(k, ent, keep, ww, res, &hint), nil
}

// apply applies w to the stored row old (when ok) under the table's meta m
// (the engine's own options are authoritative; the request's may be a
// cached copy), and returns the request as applied, the new row's entry,
// whether to keep it, and the write's result; buf is scratch space for
// old's cells. The new row's cells are built on the stack
// (rowmodel.ApplyInto): they live only until pack copies them into the
// entry. The engine's writes, which hold the encoded key already, call
// applyAfter.
func apply(w *tablekit.WriteRequest, m *tablekit.TableMeta, old entry, ok bool, buf []tablekit.Column) (*tablekit.WriteRequest, entry, bool, *tablekit.UpdateResult, error) {
	return applyAfter(w, codec.EncodeKey(w.Key), m, old, ok, buf)
}

// applyAfter is apply of a write whose encoded key ek holds already: the
// new row is packed after it (packAfter).
func applyAfter(w *tablekit.WriteRequest, ek []byte, m *tablekit.TableMeta, old entry, ok bool, buf []tablekit.Column) (*tablekit.WriteRequest, entry, bool, *tablekit.UpdateResult, error) {
	if w.Meta.Options != m.Options || w.Meta.Generation != m.Generation {
		c, meta := *w, *m // copies: the caller's m stays off the heap
		c.Meta = &meta
		w = &c
	}
	var cur *rowmodel.Row
	if ok {
		r := old.row(buf)
		cur = &r
	}
	var cells [16]tablekit.Column
	next, keep, res, err := rowmodel.ApplyInto(cells[:0], cur, w)
	if err != nil || !keep {
		return w, entry{}, false, res, err
	}
	return w, packAfter(ek, w.Key, &next), true, res, nil
}
