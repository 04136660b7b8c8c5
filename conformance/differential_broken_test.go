package conformance_test

// Deliberately broken backends, each a wrapper around the local engine with
// one realistic bug, used to prove that the checkers fail when they should.
// The engine has no batch calls, so neither have the wrappers: batches go
// through the Client's fallback, one Write or GetRow per row, and so
// through the bugs.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// localHarness gives every caller a fresh local engine; a second backend
// on the same store is the same engine.
var localHarness = newLocalStore(nil)

// brokenHarness wraps each fresh local engine with wrap.
func brokenHarness(wrap func(tablekit.Backend) tablekit.Backend) conformance.Harness {
	return newLocalStore(wrap)
}

// localStore is a Harness of local engines, each wrapped by wrap (when not
// nil). It implements conformance.SharedStore: a shared backend is the
// same engine, wrapped again, behind a Close that leaves the engine open.
type localStore struct {
	wrap    func(tablekit.Backend) tablekit.Backend
	engines sync.Map // a backend it returned -> its *localengine.Engine
}

func newLocalStore(wrap func(tablekit.Backend) tablekit.Backend) *localStore {
	return &localStore{wrap: wrap}
}

func (s *localStore) backend(e *localengine.Engine, b tablekit.Backend) tablekit.Backend {
	if s.wrap != nil {
		b = s.wrap(b)
	}
	s.engines.Store(b, e)
	return b
}

// NewBackend implements conformance.Harness.
func (s *localStore) NewBackend(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
	e := localengine.New()
	return s.backend(e, e), nil
}

// ShareBackend implements conformance.SharedStore.
func (s *localStore) ShareBackend(_ context.Context, _ testing.TB, _ tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	e, ok := s.engines.Load(b)
	if !ok {
		return nil, fmt.Errorf("ShareBackend: %T is not a backend of this harness", b)
	}
	return s.backend(e.(*localengine.Engine), keepOpen{e.(*localengine.Engine)}), nil
}

// keepOpen is a shared engine: closing it leaves the engine open for the
// backend that owns it. The engine has no batch calls, so neither has
// keepOpen: the Client's fallback is what runs.
type keepOpen struct{ *localengine.Engine }

// Close does nothing: the engine belongs to another backend.
func (keepOpen) Close() error { return nil }

// rangeOutOfOrder returns the first two rows of every range page swapped.
type rangeOutOfOrder struct{ tablekit.Backend }

func (b rangeOutOfOrder) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	p, err := b.Backend.GetRange(ctx, req)
	if err == nil && len(p.Rows) >= 2 {
		p.Rows[0], p.Rows[1] = p.Rows[1], p.Rows[0]
	}
	return p, err
}

// dropIncrements acknowledges every nth update that increments without
// writing anything: it answers with the sum it would have written (the
// lost update of a read-modify-write without a guard).
type dropIncrements struct {
	tablekit.Backend
	every int64
	n     atomic.Int64
}

func (b *dropIncrements) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	var incs []tablekit.Change
	for _, ch := range req.Changes {
		if ch.Kind == tablekit.ChangeIncrement {
			incs = append(incs, ch)
		}
	}
	if len(incs) == 0 || b.n.Add(1)%b.every != 0 {
		return b.Backend.Write(ctx, req)
	}
	row, err := b.Backend.GetRow(ctx, &tablekit.GetRowRequest{
		Meta: req.Meta, Key: req.Key, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: req.Now,
	})
	if err != nil {
		return nil, err
	}
	res := &tablekit.UpdateResult{}
	for _, ch := range incs {
		var base int64
		if row != nil {
			if v, ok := row.Get(ch.Column); ok {
				base, _ = v.Int()
			}
		}
		res.Increments = append(res.Increments, tablekit.Column{Name: ch.Column, Value: tablekit.Integer(base + ch.Delta), Version: req.Now})
	}
	return res, nil
}

// staleReads answers every 5th GetRow of a row with the first answer it
// ever gave for that row (a read served from a stale replica).
type staleReads struct {
	tablekit.Backend
	mu    sync.Mutex
	first map[string]*tablekit.Row
	calls map[string]int
}

func newStaleReads(b tablekit.Backend) tablekit.Backend {
	return &staleReads{Backend: b, first: map[string]*tablekit.Row{}, calls: map[string]int{}}
}

func (b *staleReads) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	row, err := b.Backend.GetRow(ctx, req)
	if err != nil {
		return row, err
	}
	k := req.Meta.Name + req.Key.String()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls[k]++
	first, seen := b.first[k]
	if !seen {
		b.first[k] = row
		return row, nil
	}
	if b.calls[k]%5 == 0 {
		return first, nil
	}
	return row, nil
}

// racyIncrements implements Increment as read, then write: a read-modify-write
// without a guard, which loses updates when clients race.
type racyIncrements struct{ tablekit.Backend }

func (b racyIncrements) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if !slices.ContainsFunc(req.Changes, func(c tablekit.Change) bool { return c.Kind == tablekit.ChangeIncrement }) {
		return b.Backend.Write(ctx, req)
	}
	row, err := b.Backend.GetRow(ctx, &tablekit.GetRowRequest{
		Meta: req.Meta, Key: req.Key, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: req.Now,
	})
	if err != nil {
		return nil, err
	}
	runtime.Gosched()
	w := *req
	w.Changes = slices.Clone(req.Changes)
	res := &tablekit.UpdateResult{}
	for i, ch := range w.Changes {
		if ch.Kind != tablekit.ChangeIncrement {
			continue
		}
		var base int64
		if row != nil {
			if v, ok := row.Get(ch.Column); ok {
				base, _ = v.Int()
			}
		}
		sum := tablekit.Column{Name: ch.Column, Value: tablekit.Integer(base + ch.Delta), Version: req.Now}
		w.Changes[i] = tablekit.PutAt(ch.Column, sum.Value, sum.Version)
		res.Increments = append(res.Increments, sum)
	}
	if _, err := b.Backend.Write(ctx, &w); err != nil {
		return nil, err
	}
	return res, nil
}

// ignoresIncarnation takes every request for one of the current table's,
// whatever Incarnation its cached Meta has: a client that cached a table
// since deleted and created again writes into the new table with the old
// key schema (the bug SPEC §3's first bullet rules out).
type ignoresIncarnation struct{ tablekit.Backend }

func (b ignoresIncarnation) current(ctx context.Context, m *tablekit.TableMeta) *tablekit.TableMeta {
	cur, err := b.Backend.DescribeTable(ctx, m.Name)
	if err != nil {
		return m
	}
	c := *m
	c.Incarnation = cur.Incarnation
	return &c
}

func (b ignoresIncarnation) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	c := *req
	c.Meta = b.current(ctx, req.Meta)
	return b.Backend.Write(ctx, &c)
}

// aiRepeats claims auto-increment keys but hands out 1, 2, 3, 1, 2, 3, ...
// (a counter that forgets): values repeat and go down.
type aiRepeats struct {
	tablekit.Backend
	n atomic.Int64
}

func (b *aiRepeats) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

func (b *aiRepeats) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if req.Key.AutoIncrementIndex() < 0 {
		return b.Backend.Write(ctx, req)
	}
	c := *req
	c.Key = req.Key.WithAutoIncrement(1 + b.n.Add(1)%3)
	res, err := b.Backend.Write(ctx, &c)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &tablekit.UpdateResult{}
	}
	res.Key = c.Key
	return res, nil
}
