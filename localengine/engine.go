// Package localengine is tablekit's reference engine: every table in memory,
// rows in one ordered map per table keyed by the order-preserving key
// encoding, each row's semantics from package rowmodel. It is what unit tests
// use instead of a cloud, what the conformance suite compares other backends
// against, and the store behind the Tablestore test server.
//
// It is safe for concurrent use; each single-row operation is atomic and
// linearizable (a table's rows are guarded by one RWMutex: reads share it,
// writes take it alone). It starts no goroutines, reads no clock (time comes
// with each request, from the client's Clock), and holds nothing after Close.
//
//	db := tablekit.NewClient(localengine.New())
//	defer db.Close()
package localengine

import (
	"context"
	"slices"
	"sync"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/keycodec"
	"github.com/tablekit/tablekit/rowmodel"
)

// maxScan bounds how many stored rows one GetRange page examines, so a range
// whose rows mostly fail a filter does not hold a table's lock for long.
const maxScan = 10000

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
}

// entry is a stored row and its decoded key. Entries are never modified in
// place: a write stores a new entry, so a reader may keep one after
// unlocking.
type entry struct {
	key tablekit.PrimaryKey
	row rowmodel.Row
}

var _ tablekit.Backend = (*Engine)(nil)

// New returns an empty engine.
func New() *Engine { return &Engine{tables: map[string]*table{}} }

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
	e.tables[meta.Name] = &table{meta: m}
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
func (e *Engine) UpdateTable(ctx context.Context, name string, opts tablekit.TableOptions) error {
	t, err := e.table(ctx, name)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.meta.Options = opts
	t.mu.Unlock()
	return nil
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
	k := keycodec.Append(buf[:0], req.Key)
	t.mu.RLock()
	// The map does not keep the lookup key, so a string view of buf will do.
	ent, ok := t.rows.Get(unsafe.String(unsafe.SliceData(k), len(k)))
	opts := t.meta.Options
	t.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	cols, found := rowmodel.Read(&ent.row, opts, &req.Read, req.Now)
	if !found {
		return nil, nil
	}
	return &tablekit.Row{Key: req.Key, Columns: cols}, nil
}

// BatchGetRow implements tablekit.Backend.
func (e *Engine) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResult, error) {
	out := make([]tablekit.GetRowResult, len(reqs))
	for i, r := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i].Row, out[i].Err = e.GetRow(ctx, r)
	}
	return out, nil
}

// GetRange implements tablekit.Backend.
func (e *Engine) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.RangePage, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	startB, startExact := keycodec.Bound(req.Start)
	endB, endExact := keycodec.Bound(req.End)
	limit := max(req.Limit, 1)
	page := &tablekit.RangePage{Rows: make([]tablekit.Row, 0, min(limit, 256))}
	scanned := 0
	t.mu.RLock()
	defer t.mu.RUnlock()
	opts := t.meta.Options
	// One buffer of cells and one of key parts serve the whole page; each
	// row gets a capped window of them, so callers own what they get.
	cells := make([]tablekit.Column, 0, min(limit, 256)*2)
	keys := make(tablekit.PrimaryKey, 0, min(limit, 256)*len(req.Meta.Key))
	visit := func(k string, ent *entry) bool {
		if len(page.Rows) >= limit || scanned >= maxScan {
			page.Next = ent.key.Clone()
			return false
		}
		scanned++
		n := len(cells)
		var found bool
		if cells, found = rowmodel.AppendRead(cells, &ent.row, opts, &req.Read, req.Now); found {
			kn := len(keys)
			keys = append(keys, ent.key...)
			page.Rows = append(page.Rows, tablekit.Row{Key: keys[kn:len(keys):len(keys)], Columns: cells[n:len(cells):len(cells)]})
		}
		return true
	}
	if !req.Backward {
		// [start, end): start bound inclusive either way; end exclusive either way.
		if startB == nil { // InfMax in the first column: nothing is above it
			return page, nil
		}
		t.rows.Ascend(string(startB), func(k string, ent *entry) bool {
			if endB != nil && k >= string(endB) {
				return false
			}
			return visit(k, ent)
		})
		return page, nil
	}
	// Backward: from start down to end, exclusive of end. An exact start is
	// inclusive; an infinite one is an exclusive byte bound.
	iter := func(k string, ent *entry) bool {
		if !startExact && startB != nil && k >= string(startB) {
			return true
		}
		switch {
		case endExact && k <= string(endB): // exclusive end key
			return false
		case !endExact && (endB == nil || k < string(endB)): // below an infinite end
			return false
		}
		return visit(k, ent)
	}
	if startB == nil {
		t.rows.Reverse(iter)
	} else {
		t.rows.Descend(string(startB), iter)
	}
	return page, nil
}

// write applies one write to its row under the table lock.
func (e *Engine) write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	m := w.Meta()
	t, err := e.table(ctx, m.Name)
	if err != nil {
		return nil, err
	}
	key := w.Key()
	k := string(keycodec.Encode(key))
	t.mu.Lock()
	defer t.mu.Unlock()
	var cur *rowmodel.Row
	old, ok := t.rows.Get(k)
	if ok {
		cur = &old.row
	}
	// The engine's own options are authoritative; the request's may be a
	// cached copy.
	if m.Options != t.meta.Options {
		w = withOptions(w, t.meta)
	}
	next, res, err := rowmodel.Apply(cur, w)
	if err != nil {
		return nil, err
	}
	if next == nil {
		if ok {
			t.rows.Delete(k)
		}
		return res, nil
	}
	t.rows.Set(k, &entry{key: key, row: *next})
	return res, nil
}

// withOptions returns a copy of w whose Meta is meta.
func withOptions(w *tablekit.WriteRequest, meta tablekit.TableMeta) *tablekit.WriteRequest {
	m := meta
	c := *w
	switch {
	case c.Put != nil:
		r := *c.Put
		r.Meta = &m
		c.Put = &r
	case c.Update != nil:
		r := *c.Update
		r.Meta = &m
		c.Update = &r
	case c.Delete != nil:
		r := *c.Delete
		r.Meta = &m
		c.Delete = &r
	}
	return &c
}

// PutRow implements tablekit.Backend.
func (e *Engine) PutRow(ctx context.Context, req *tablekit.PutRowRequest) error {
	_, err := e.write(ctx, &tablekit.WriteRequest{Put: req})
	return err
}

// UpdateRow implements tablekit.Backend.
func (e *Engine) UpdateRow(ctx context.Context, req *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	return e.write(ctx, &tablekit.WriteRequest{Update: req})
}

// DeleteRow implements tablekit.Backend.
func (e *Engine) DeleteRow(ctx context.Context, req *tablekit.DeleteRowRequest) error {
	_, err := e.write(ctx, &tablekit.WriteRequest{Delete: req})
	return err
}

// BatchWriteRow implements tablekit.Backend.
func (e *Engine) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResult, error) {
	out := make([]tablekit.WriteResult, len(reqs))
	for i, w := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i].Update, out[i].Err = e.write(ctx, w)
	}
	return out, nil
}
