package tablekit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/observe"
)

// Client is what programs call, safe for concurrent use; it validates
// requests and caches table metadata ([WithMetaCacheTTL], SPEC §3).
type Client struct {
	b        Backend
	caps     Capabilities // CapabilitiesOf(b), once: a backend's do not change
	clock    Clock
	cacheTTL time.Duration
	closed   atomic.Bool
	tel      *telemetry // observer and logger (observe.go); nil when none

	indexGrace time.Duration             // WithIndexGrace; 0: the default
	noSweep    bool                      // WithIndexSweep(false)
	catalog    atomic.Pointer[TableMeta] // the index catalog's meta (index.go); nil: not read yet

	// meta maps a table name to its *cachedMeta. Every operation reads it,
	// so a hit takes no lock and reads no clock: a timer marks an entry
	// stale when it expires, and the next use fetches it again.
	meta sync.Map
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithClock makes versions, the version window and TTL follow c.
func WithClock(c Clock) ClientOption { return func(cl *Client) { cl.clock = c } }

// WithMetaCacheTTL caches table metadata for d, wall-clock (≤ 0: no expiry).
func WithMetaCacheTTL(d time.Duration) ClientOption { return func(cl *Client) { cl.cacheTTL = d } }

// NewClient returns a Client over b. Closing the client closes b.
func NewClient(b Backend, opts ...ClientOption) *Client {
	c := &Client{b: b, caps: CapabilitiesOf(b), clock: SystemClock{}, cacheTTL: time.Minute}
	for _, o := range opts {
		o(c)
	}
	return c
}

// As sets *target to a native client of its type (see the adapter), unchecked.
func (c *Client) As(target any) bool {
	if a, ok := c.b.(NativeAccessor); ok {
		return a.As(target)
	}
	return false
}

// Capabilities reports what the backend supports beyond SPEC's required calls.
func (c *Client) Capabilities() Capabilities { return c.caps }

// Close closes the client and its backend; later calls fail with
// [ErrClosed], calls in flight may fail. Closing twice is not an error.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.meta.Range(func(_, v any) bool {
		v.(*cachedMeta).stop()
		return true
	})
	return c.b.Close()
}

// checkOpen refuses calls after Close.
func (c *Client) checkOpen(op, table string) error {
	if c.closed.Load() {
		return &Error{Op: op, Table: table, Code: ErrClosed}
	}
	return nil
}

func (c *Client) now() int64 { return c.clock.Now().UnixMilli() }

// CreateTable creates a table; zero options take their defaults.
// [WithChangeFeed] creates it with its change feed on.
func (c *Client) CreateTable(ctx context.Context, meta TableMeta, opts ...CreateOption) (err error) {
	const op = "CreateTable"
	ctx, st := c.begin(ctx, op, meta.Name)
	defer func() { st.end(observe.Outcome{Err: err}) }()
	if err := c.checkOpen(op, meta.Name); err != nil {
		return err
	}
	m := meta
	m.Key = slices.Clone(meta.Key)
	m.Options = resolveCreateOptions(meta.Options)
	m.Incarnation, m.Generation = newIncarnation(), 1
	m.Indexes = slices.Clone(meta.Indexes)
	if err := checkMeta(&m); err != nil {
		return annotate(err, op, meta.Name)
	}
	if err := checkIndexes(&m); err != nil {
		return annotate(err, op, m.Name)
	}
	if hasAutoIncrement(&m) && !c.caps.AutoIncrement {
		return refuse(op, m.Name, "the backend has no auto-increment key columns (SPEC §14; Capabilities.AutoIncrement is false)")
	}
	if err := c.checkAutoIndexed(&m); err != nil {
		return annotate(err, op, m.Name)
	}
	var o createOptions
	for _, opt := range opts {
		opt(&o)
	}
	// create makes the table itself: with its feed when asked; indexes
	// wrap it (their storage first, index.go).
	create := func(ctx context.Context, m *TableMeta) error { return c.b.CreateTable(ctx, m) }
	if o.feed {
		create = func(ctx context.Context, m *TableMeta) error { return c.createWithFeed(ctx, op, m, o) }
	}
	if len(m.Indexes) > 0 {
		err = c.createIndexed(ctx, &m, create)
	} else {
		err = create(ctx, &m)
	}
	if err != nil {
		return annotate(err, op, m.Name)
	}
	c.remember(&m)
	return nil
}

// newIncarnation returns a new random table incarnation: 16 hex digits.
func newIncarnation() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// maxUpdateAttempts bounds UpdateTable's read-merge-write loop when other
// clients keep changing the table's options at the same time.
const maxUpdateAttempts = 8

// UpdateTable changes a table's options (zero fields stay), atomically
// across clients; a table deleted for good is ErrTableNotFound. On an
// indexed table, raising the TTL or MaxVersions fills the entries of the
// values it may reveal (SPEC §16) before returning, reading every row.
func (c *Client) UpdateTable(ctx context.Context, table string, opts TableOptions) (err error) {
	const op = "UpdateTable"
	ctx, st := c.begin(ctx, op, table)
	defer func() { st.end(observe.Outcome{Err: err}) }()
	if err := c.checkOpen(op, table); err != nil {
		return err
	}
	if err := checkName("table", table); err != nil {
		return annotate(err, op, table)
	}
	for attempt := range maxUpdateAttempts {
		if attempt > 0 {
			reportRetry(ctx, observe.Retry{Attempt: attempt, Reason: err})
		}
		var cur, m *TableMeta
		if cur, err = c.describe(ctx, table); err != nil {
			c.forget(table)
			return annotate(err, op, table)
		}
		next := cur.Options
		if opts.TTL != 0 {
			next.TTL = opts.TTL
		}
		if opts.MaxVersions != 0 {
			next.MaxVersions = opts.MaxVersions
		}
		if opts.MaxVersionOffset != 0 {
			next.MaxVersionOffset = opts.MaxVersionOffset
		}
		if verr := checkOptions(next); verr != nil {
			return annotate(verr, op, table)
		}
		m, err = c.b.UpdateTable(ctx, &UpdateTableRequest{Meta: cur, Options: next})
		switch {
		case err == nil:
			if m == nil { // a backend that reports nothing: what it was asked to do
				cp := *cur
				cp.Options = next
				m = &cp
			}
			if m.Indexes == nil {
				cp := *m
				cp.Indexes = cur.Indexes
				m = &cp
			}
			c.remember(m)
			if len(m.Indexes) > 0 && optionsReveal(cur.Options, next) {
				return annotate(c.backfillRevealed(ctx, m), op, table)
			}
			return nil
		case errors.Is(err, ErrConditionFailed): // another client changed the options first
			continue
		case errors.Is(err, ErrTableNotFound) && ctx.Err() == nil:
			// The table was deleted, or deleted and created again, since
			// DescribeTable read it: read it again, which tells the two
			// apart (a new table gets the options, as if this call came
			// after it was created).
			c.forget(table)
			continue
		}
		c.forget(table)
		return annotate(err, op, table)
	}
	return annotate(WrapError(ErrUnavailable, err, "the options kept changing under %d attempts", maxUpdateAttempts), op, table)
}

// DescribeTable returns a table's schema and options, read from the backend.
func (c *Client) DescribeTable(ctx context.Context, table string) (_ TableMeta, err error) {
	const op = "DescribeTable"
	ctx, st := c.begin(ctx, op, table)
	defer func() { st.end(observe.Outcome{Err: err}) }()
	if err := c.checkOpen(op, table); err != nil {
		return TableMeta{}, err
	}
	if err := checkName("table", table); err != nil {
		return TableMeta{}, annotate(err, op, table)
	}
	m, err := c.describe(ctx, table)
	if err != nil {
		c.forget(table)
		return TableMeta{}, annotate(err, op, table)
	}
	c.remember(m)
	out := *m
	out.Key = slices.Clone(m.Key)
	out.Indexes = slices.Clone(m.Indexes)
	return out, nil
}

// ListTables returns every table's name in ascending order.
func (c *Client) ListTables(ctx context.Context) (_ []string, err error) {
	ctx, st := c.begin(ctx, "ListTables", "")
	defer func() { st.end(observe.Outcome{Err: err}) }()
	if err := c.checkOpen("ListTables", ""); err != nil {
		return nil, err
	}
	names, err := c.b.ListTables(ctx)
	if err != nil {
		return nil, annotate(err, "ListTables", "")
	}
	names = slices.DeleteFunc(names, IsReservedName)
	slices.Sort(names)
	return names, nil
}

// DeleteTable deletes a table and all its rows.
func (c *Client) DeleteTable(ctx context.Context, table string) (err error) {
	const op = "DeleteTable"
	ctx, st := c.begin(ctx, op, table)
	defer func() { st.end(observe.Outcome{Err: err}) }()
	if err := c.checkOpen(op, table); err != nil {
		return err
	}
	if err := checkName("table", table); err != nil {
		return annotate(err, op, table)
	}
	c.forget(table)
	if err := c.b.DeleteTable(ctx, table); err != nil {
		return annotate(err, op, table)
	}
	return annotate(c.dropIndexed(ctx, table), op, table)
}
