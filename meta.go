package tablekit

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/internal/base"
	"github.com/tablekit/tablekit/observe"
)

type cachedMeta struct {
	meta  *TableMeta
	stale atomic.Bool
	timer *time.Timer // nil when entries do not expire
}

func (cm *cachedMeta) stop() {
	if cm.timer != nil {
		cm.timer.Stop()
	}
}

func (c *Client) remember(m *TableMeta) *TableMeta {
	cp := *m
	cp.Key = slices.Clone(m.Key)
	cp.Indexes = slices.Clone(m.Indexes)
	cm := &cachedMeta{meta: &cp}
	if c.cacheTTL > 0 {
		cm.timer = time.AfterFunc(c.cacheTTL, func() { cm.stale.Store(true) })
	}
	if prev, ok := c.meta.Swap(m.Name, cm); ok {
		prev.(*cachedMeta).stop()
	}
	return &cp
}

func (c *Client) forget(table string) {
	if prev, ok := c.meta.LoadAndDelete(table); ok {
		prev.(*cachedMeta).stop()
	}
}

// tableMeta returns the cached meta of table, fetching it when needed.
func (c *Client) tableMeta(ctx context.Context, table string) (*TableMeta, error) {
	if c.closed.Load() {
		return nil, &Error{Code: ErrClosed}
	}
	if v, ok := c.meta.Load(table); ok {
		if cm := v.(*cachedMeta); !cm.stale.Load() {
			return cm.meta, nil
		}
	}
	if err := checkName("table", table); err != nil {
		return nil, err
	}
	m, err := c.describe(ctx, table)
	if err != nil {
		return nil, err
	}
	return c.remember(m), nil
}

// maxStaleRetries is how many times one call is repeated with new table
// metadata after a backend said the metadata was stale.
const maxStaleRetries = 2

// isStale reports whether a backend's error may come from stale metadata:
// the backend said so, or the table was not found (it may have been
// deleted and created again).
func isStale(err error) bool {
	return errors.Is(err, base.ErrStaleMeta) || errors.Is(err, ErrTableNotFound)
}

// refresh reads table's meta again after a request built from old failed
// as stale. It returns the new meta when the table changed (another
// incarnation, generation or key schema), so the call is worth repeating,
// and nil otherwise. When another call has already read the table again
// (the cache holds a newer meta than old), it uses that one: the stale rows
// of a batch cost one DescribeTable, not one each.
func (c *Client) refresh(ctx context.Context, table string, old *TableMeta) *TableMeta {
	if v, ok := c.meta.Load(table); ok {
		if cm := v.(*cachedMeta); !cm.stale.Load() && cm.meta != old && changed(cm.meta, old) {
			return cm.meta
		}
	}
	c.forget(table)
	m, err := c.describe(ctx, table)
	if err != nil {
		return nil
	}
	if fresh := c.remember(m); changed(fresh, old) {
		return fresh
	}
	return nil
}

// changed reports whether fresh is another table, or the same one under
// other options, than old.
func changed(fresh, old *TableMeta) bool {
	return fresh.Incarnation != old.Incarnation || fresh.Generation != old.Generation || !slices.Equal(fresh.Key, old.Key)
}

// retryStale is SPEC §3's stale-metadata retry, and the only one: every
// call the Client builds from cached metadata goes through it (single-row
// calls through run, each stale row of BatchGetRow and BatchWriteRow, the
// pages of GetRange, Rows and Scan). err is what call answered with m.
// While the backend says the metadata was stale, retryStale reads the
// table again and, if the table changed and again accepts the new meta
// (nil accepts any), reports the retry to the operation's telemetry and
// calls call with the new meta; call builds (and so validates) its request
// from the meta it is given. It returns the last answer.
func (c *Client) retryStale(ctx context.Context, table string, m *TableMeta, err error,
	again func(fresh *TableMeta) bool, call func(m *TableMeta) error) error {
	for attempt := 1; attempt <= maxStaleRetries && err != nil && isStale(err) && ctx.Err() == nil; attempt++ {
		fresh := c.refresh(ctx, table, m)
		if fresh == nil || again != nil && !again(fresh) {
			break
		}
		m = fresh
		reportRetry(ctx, observe.Retry{Attempt: attempt, Reason: err, ErrorType: staleRetry})
		err = call(m)
	}
	return err
}

// run calls call with table's cached meta, through [Client.retryStale].
func (c *Client) run(ctx context.Context, table string, call func(m *TableMeta) error) error {
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return err
	}
	return c.retryStale(ctx, table, m, call(m), nil, call)
}

// backendErr annotates err and drops the cached meta when the table is gone.
func (c *Client) backendErr(err error, op, table string) error {
	if errors.Is(err, ErrTableNotFound) {
		c.forget(table)
	}
	return annotate(err, op, table)
}
