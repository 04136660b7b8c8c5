package localengine

import (
	"context"
	"slices"
	"sync"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// maxScan bounds how many stored rows one GetRange page examines.
const maxScan = tablekit.MaxScanRows

// Engine is an in-memory tablekit.Backend.
type Engine struct {
	mu     sync.RWMutex
	tables map[string]*table
	closed bool
}

type table struct {
	mu   sync.RWMutex
	meta tablekit.TableMeta
	rows btree.Map[string, *entry]
	feed *feedLog // the change feed (feed.go); nil when never enabled
	ai   *autoInc // auto-increment counters (autoinc.go); nil without such a column
}

// entry is a stored row and its decoded key. Entries are never modified in
// place: a write stores a new entry, so a reader may keep one after
// unlocking.
type entry struct {
	key   tablekit.PrimaryKey
	row   rowmodel.Row
	shape rowmodel.Shape // of row.Cells; set by seal, before the entry is stored
}

// seal completes an entry before it is stored.
func (ent *entry) seal() { ent.shape = rowmodel.ShapeOf(ent.row.Cells) }

var (
	_ tablekit.Backend      = (*Engine)(nil)
	_ tablekit.RangeScanner = (*Engine)(nil)
)

// New returns an empty engine.
func New() *Engine { return &Engine{tables: map[string]*table{}} }

// SystemName is the store's OpenTelemetry db.system.name, "tablekit.local"
// (tablekit.SystemNamer).
func (e *Engine) SystemName() string { return "tablekit.local" }

// Close drops every table. Later calls fail with ErrUnavailable.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.tables = nil
	e.mu.Unlock()
	return nil
}

func (e *Engine) table(ctx context.Context, name string) (*table, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	e.mu.RLock()
	t, ok := e.tables[name]
	closed := e.closed
	e.mu.RUnlock()
	switch {
	case closed:
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the local engine is closed")
	case !ok:
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	return t, nil
}

// CreateTable implements tablekit.Backend.
func (e *Engine) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
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
	e.tables[meta.Name] = &table{meta: m, ai: newAutoInc(&m)}
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
	t.mu.Lock()
	defer t.mu.Unlock()
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
	delete(e.tables, name)
	return nil
}

// GetRow implements tablekit.Backend.
func (e *Engine) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	var buf [256]byte
	k := codec.AppendKey(buf[:0], req.Key)
	t.mu.RLock()
	cur, err := t.current(req.Meta)
	if err != nil {
		t.mu.RUnlock()
		return nil, err
	}
	opts := cur.Options
	// The map does not keep the lookup key, so a string view of buf will do.
	ent, ok := t.rows.Get(bytesView(k))
	t.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	cols, found := rowmodel.Read(&ent.row, opts, &req.Read, req.Now)
	if !found {
		return nil, nil
	}
	return &tablekit.Row{Key: slices.Clone(ent.key), Columns: cols}, nil
}

// GetRange implements tablekit.Backend.
//
// It works in two steps. It walks the range (see walk: a bounded number of
// map steps per hold of the table's read lock, every row's evaluation
// unlocked) and notes, in scratch space kept in a pool, the entries of the
// rows the page returns and how many cells they return
// (rowmodel.ReadLen, which copies nothing unless a filter needs the
// cells). Then it evaluates those rows again straight into exactly sized
// slices, one for the rows, one for all their key parts and one for all
// their cells, each row a capped window of them: the caller owns what it
// gets, and nothing is copied twice. Entries never change once stored, and
// the evaluation depends only on the entry and the request, so the second
// one gives what the first did.
func (e *Engine) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	sc := scratchPool.Get().(*rangeScratch)
	defer sc.release()
	next, err := t.walk(ctx, req, sc, func(ent *entry, opts *tablekit.TableOptions) (bool, bool) {
		n, found := rowmodel.ReadLen(&ent.row, *opts, &req.Read, req.Now)
		if found {
			sc.ents = append(sc.ents, ent)
			sc.cells += n
		}
		return found, true
	})
	if err != nil {
		return nil, err
	}
	return sc.page(req, sc.opts, next), nil
}

// bytesView returns b as a string without copying; b must not change while
// the string is in use.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rangeScratch is what one GetRange collects: the entries of the rows it
// returns and their number of cells; and the walk's working memory.
// ScanRange keeps the cells it copies in it too.
type rangeScratch struct {
	ents  []*entry
	cells int
	batch []*entry
	cbuf  []tablekit.Column // ScanRange's cells, when it cannot lend the stored ones
	opts  tablekit.TableOptions
	sbuf  [128]byte // the encoded bounds; the map keeps no pivot
	ebuf  [128]byte
}

var scratchPool = sync.Pool{New: func() any { return new(rangeScratch) }}

// page evaluates the collected rows again into new, exactly sized slices,
// with next's key as the page's Next.
func (sc *rangeScratch) page(req *tablekit.GetRangeRequest, opts tablekit.TableOptions, next *entry) *tablekit.GetRangeResponse {
	nk := 0
	for _, ent := range sc.ents {
		nk += len(ent.key)
	}
	if next != nil {
		nk += len(next.key)
	}
	rows := make([]tablekit.Row, 0, len(sc.ents))
	keys := make(tablekit.PrimaryKey, 0, nk)
	cells := make([]tablekit.Column, 0, sc.cells)
	for _, ent := range sc.ents {
		cn := len(cells)
		var found bool
		if cells, found = rowmodel.AppendRead(cells, &ent.row, opts, &req.Read, req.Now); !found {
			continue // cannot happen: the same evaluation found it under the lock
		}
		kn := len(keys)
		keys = append(keys, ent.key...)
		rows = append(rows, tablekit.Row{Key: keys[kn:len(keys):len(keys)], Columns: cells[cn:len(cells):len(cells)]})
	}
	p := &tablekit.GetRangeResponse{Rows: rows}
	if next != nil {
		kn := len(keys)
		keys = append(keys, next.key...)
		p.Next = keys[kn:len(keys):len(keys)]
	}
	return p
}

// release clears sc (dropping its references, for the garbage collector)
// and returns it to the pool.
func (sc *rangeScratch) release() {
	clear(sc.ents)
	clear(sc.batch)
	clear(sc.cbuf[:cap(sc.cbuf)])
	sc.ents, sc.cells, sc.batch, sc.cbuf = sc.ents[:0], 0, sc.batch[:0], sc.cbuf[:0]
	scratchPool.Put(sc)
}

// Write implements tablekit.Backend: it applies one write to its row under
// the table lock.
func (e *Engine) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() >= 0 {
		return e.writeAuto(ctx, w) // autoinc.go
	}
	t, err := e.table(ctx, w.Meta.Name)
	if err != nil {
		return nil, err
	}
	// A put or update makes its record before locking: the encoded key the
	// map will keep, and the entry with its own copy of the key. A delete
	// only looks up, with a key on the stack.
	var (
		buf     [256]byte
		k       string // the key to look up, delete or store
		stored  string // k when the write may store it: a string of its own
		ent     *entry
		scratch rowmodel.Row
		dst     = &scratch
	)
	if w.Kind != tablekit.WriteDelete {
		stored = codec.EncodeKeyString(w.Key)
		k = stored
		ent = &entry{key: slices.Clone(w.Key)}
		dst = &ent.row
	} else {
		k = bytesView(codec.AppendKey(buf[:0], w.Key)) // the map keeps no key it only looks up
	}
	// Only an update and a condition read the stored row; an unconditional
	// put or delete is decided without it, and saves a walk down the map.
	needOld := w.Kind == tablekit.WriteUpdate || !w.Condition.IsZero()
	t.mu.Lock()
	defer t.mu.Unlock()
	m, err := t.current(w.Meta)
	if err != nil {
		return nil, err
	}
	var cur *rowmodel.Row
	ok := true // unknown without a lookup: delete anyway, a no-op when absent
	if needOld {
		var old *entry
		if old, ok = t.rows.Get(k); ok {
			cur = &old.row
		}
	}
	// The engine's own options are authoritative; the request's may be a
	// cached copy.
	if w.Meta != m && (w.Meta.Options != m.Options || w.Meta.Generation != m.Generation) {
		c := *w
		c.Meta = m
		w = &c
	}
	keep, res, err := rowmodel.ApplyTo(dst, cur, w)
	if err != nil {
		return nil, err
	}
	t.record(w, res)
	if !keep {
		if ok {
			t.rows.Delete(k)
		}
		return res, nil
	}
	t.ai.saw(w.Key)
	ent.seal()
	t.rows.Set(stored, ent)
	return res, nil
}
