package conformance_test

// Deliberately broken backends, each a wrapper around the local engine with
// one realistic bug, used to prove that the checkers fail when they should.

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// localHarness gives every caller a fresh local engine.
var localHarness = conformance.HarnessFunc(func(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
	return localengine.New(), nil
})

// brokenHarness wraps each fresh local engine with wrap.
func brokenHarness(wrap func(tablekit.Backend) tablekit.Backend) conformance.Harness {
	return conformance.HarnessFunc(func(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
		return wrap(localengine.New()), nil
	})
}

// rangeOutOfOrder returns the first two rows of every range page swapped.
type rangeOutOfOrder struct{ tablekit.Backend }

func (b rangeOutOfOrder) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.RangePage, error) {
	p, err := b.Backend.GetRange(ctx, req)
	if err == nil && len(p.Rows) >= 2 {
		p.Rows[0], p.Rows[1] = p.Rows[1], p.Rows[0]
	}
	return p, err
}

// dropIncrements acknowledges every nth UpdateRow that increments without
// writing anything: it answers with the sum it would have written (the
// lost update of a read-modify-write without a guard).
type dropIncrements struct {
	tablekit.Backend
	every int64
	n     atomic.Int64
}

func (b *dropIncrements) UpdateRow(ctx context.Context, req *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	var incs []tablekit.Change
	for _, ch := range req.Changes {
		if ch.Kind == tablekit.ChangeIncrement {
			incs = append(incs, ch)
		}
	}
	if len(incs) == 0 || b.n.Add(1)%b.every != 0 {
		return b.Backend.UpdateRow(ctx, req)
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

func (b racyIncrements) UpdateRow(ctx context.Context, req *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	if !slices.ContainsFunc(req.Changes, func(c tablekit.Change) bool { return c.Kind == tablekit.ChangeIncrement }) {
		return b.Backend.UpdateRow(ctx, req)
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
	if _, err := b.Backend.UpdateRow(ctx, &w); err != nil {
		return nil, err
	}
	return res, nil
}
