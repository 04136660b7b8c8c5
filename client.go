package tablekit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Client is the portable entry point: it validates every request once,
// fills in defaults and versions, wraps errors, and turns backend pages into
// answers and iterators. It is safe for concurrent use.
//
// A Client caches each table's schema and options (for validation and for
// the backends' visibility rules). Changes made through this Client are seen
// at once; changes made by another process are seen after the cache entry
// expires (one minute by default, see [WithMetaCacheTTL]). Until then this
// Client writes under the options it has: on backends that trim versions
// when they write a row (Bigtable's conditional path, DynamoDB), a write
// made with a MaxVersions or TTL lower than the table's new one can remove
// versions the new options would keep. Change MaxVersions and TTL upward
// through the Client that writes, or lower the cache TTL where other
// processes change them.
type Client struct {
	b        Backend
	clock    Clock
	cacheTTL time.Duration

	// meta maps a table name to its *cachedMeta. Every operation reads it,
	// so a hit takes no lock and reads no clock: a timer marks an entry
	// stale when it expires, and the next use fetches it again.
	meta sync.Map
}

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

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithClock makes the client read time from c: versions written without one,
// the version window and TTL visibility all follow it. Tests pass a
// [ManualClock].
func WithClock(c Clock) ClientOption { return func(cl *Client) { cl.clock = c } }

// WithMetaCacheTTL sets how long table metadata is cached (wall-clock time).
// Zero or less disables the expiry.
func WithMetaCacheTTL(d time.Duration) ClientOption { return func(cl *Client) { cl.cacheTTL = d } }

// NewClient returns a Client over b. Closing the client closes b.
func NewClient(b Backend, opts ...ClientOption) *Client {
	c := &Client{b: b, clock: SystemClock{}, cacheTTL: time.Minute}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Backend returns the backend the client wraps; adapters offer their native
// client through it (type-assert to the adapter's type).
func (c *Client) Backend() Backend { return c.b }

// Close closes the backend.
func (c *Client) Close() error {
	c.meta.Range(func(_, v any) bool {
		v.(*cachedMeta).stop()
		return true
	})
	return c.b.Close()
}

func (c *Client) now() int64 { return c.clock.Now().UnixMilli() }

// CreateTable creates a table. Zero options take their defaults.
func (c *Client) CreateTable(ctx context.Context, meta TableMeta) error {
	const op = "CreateTable"
	m := meta
	m.Key = slices.Clone(meta.Key)
	m.Options = resolveCreateOptions(meta.Options)
	if err := checkMeta(&m); err != nil {
		return annotate(err, op, meta.Name)
	}
	if err := c.b.CreateTable(ctx, &m); err != nil {
		return annotate(err, op, m.Name)
	}
	c.remember(&m)
	return nil
}

// UpdateTable changes a table's options; zero fields stay as they are.
func (c *Client) UpdateTable(ctx context.Context, table string, opts TableOptions) error {
	const op = "UpdateTable"
	if err := checkName("table", table); err != nil {
		return annotate(err, op, table)
	}
	cur, err := c.b.DescribeTable(ctx, table)
	if err != nil {
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
	if err := checkOptions(next); err != nil {
		return annotate(err, op, table)
	}
	if err := c.b.UpdateTable(ctx, table, next); err != nil {
		c.forget(table)
		return annotate(err, op, table)
	}
	m := *cur
	m.Options = next
	c.remember(&m)
	return nil
}

// DescribeTable returns a table's schema and options, read from the backend.
func (c *Client) DescribeTable(ctx context.Context, table string) (TableMeta, error) {
	const op = "DescribeTable"
	if err := checkName("table", table); err != nil {
		return TableMeta{}, annotate(err, op, table)
	}
	m, err := c.b.DescribeTable(ctx, table)
	if err != nil {
		c.forget(table)
		return TableMeta{}, annotate(err, op, table)
	}
	c.remember(m)
	out := *m
	out.Key = slices.Clone(m.Key)
	return out, nil
}

// ListTables returns every table's name in ascending order.
func (c *Client) ListTables(ctx context.Context) ([]string, error) {
	names, err := c.b.ListTables(ctx)
	if err != nil {
		return nil, annotate(err, "ListTables", "")
	}
	slices.Sort(names)
	return names, nil
}

// DeleteTable deletes a table and all its rows.
func (c *Client) DeleteTable(ctx context.Context, table string) error {
	const op = "DeleteTable"
	if err := checkName("table", table); err != nil {
		return annotate(err, op, table)
	}
	c.forget(table)
	return annotate(c.b.DeleteTable(ctx, table), op, table)
}

func (c *Client) remember(m *TableMeta) *TableMeta {
	cp := *m
	cp.Key = slices.Clone(m.Key)
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
	if v, ok := c.meta.Load(table); ok {
		if cm := v.(*cachedMeta); !cm.stale.Load() {
			return cm.meta, nil
		}
	}
	if err := checkName("table", table); err != nil {
		return nil, err
	}
	m, err := c.b.DescribeTable(ctx, table)
	if err != nil {
		return nil, err
	}
	return c.remember(m), nil
}

// backendErr annotates err and drops the cached meta when the table is gone.
func (c *Client) backendErr(err error, op, table string) error {
	if errors.Is(err, ErrTableNotFound) {
		c.forget(table)
	}
	return annotate(err, op, table)
}

// Table returns a handle for the rows of table. It does no I/O.
func (c *Client) Table(name string) *Table { return &Table{c: c, name: name} }

// Table reads and writes the rows of one table. It is safe for concurrent use.
type Table struct {
	c    *Client
	name string
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// PutRow replaces the row at key: every earlier column and version is gone,
// then cols are written. A column with Version 0 is written at the clock's
// now. With no columns the row exists as a key-only row.
func (t *Table) PutRow(ctx context.Context, key PrimaryKey, cols []Column, opts ...WriteOption) error {
	const op = "PutRow"
	req, err := t.c.putRequest(ctx, t.name, key, cols, writeCond(opts))
	if err != nil {
		return annotate(err, op, t.name)
	}
	return t.c.backendErr(t.c.b.PutRow(ctx, req), op, t.name)
}

// UpdateRow applies changes to the row at key in order, creating the row if
// it is absent. It returns the new value of every incremented column.
func (t *Table) UpdateRow(ctx context.Context, key PrimaryKey, changes []Change, opts ...WriteOption) (UpdateResult, error) {
	const op = "UpdateRow"
	req, err := t.c.updateRequest(ctx, t.name, key, changes, writeCond(opts))
	if err != nil {
		return UpdateResult{}, annotate(err, op, t.name)
	}
	res, err := t.c.b.UpdateRow(ctx, req)
	if err != nil {
		return UpdateResult{}, t.c.backendErr(err, op, t.name)
	}
	if res == nil {
		return UpdateResult{}, nil
	}
	return *res, nil
}

// DeleteRow removes the row at key. Deleting a missing row is not an error.
func (t *Table) DeleteRow(ctx context.Context, key PrimaryKey, opts ...WriteOption) error {
	const op = "DeleteRow"
	req, err := t.c.deleteRequest(ctx, t.name, key, writeCond(opts))
	if err != nil {
		return annotate(err, op, t.name)
	}
	return t.c.backendErr(t.c.b.DeleteRow(ctx, req), op, t.name)
}

// GetRow reads the row at key. found is false when the row does not exist
// (or fails the filter); that is not an error.
func (t *Table) GetRow(ctx context.Context, key PrimaryKey, opts ...ReadOption) (row Row, found bool, err error) {
	const op = "GetRow"
	req, err := t.c.getRequest(ctx, t.name, key, opts)
	if err != nil {
		return Row{}, false, annotate(err, op, t.name)
	}
	r, err := t.c.b.GetRow(ctx, req)
	if err != nil {
		return Row{}, false, t.c.backendErr(err, op, t.name)
	}
	if r == nil {
		return Row{}, false, nil
	}
	return *r, true, nil
}

// writeCond is writeCondition without its cost (a Condition on the heap)
// when there are no options.
func writeCond(opts []WriteOption) Condition {
	if len(opts) == 0 {
		return Condition{}
	}
	return writeCondition(opts)
}

func (c *Client) putRequest(ctx context.Context, table string, key PrimaryKey, cols []Column, cond Condition) (*PutRowRequest, error) {
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return nil, err
	}
	now := c.now()
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	if err := checkCondition(m, cond); err != nil {
		return nil, err
	}
	resolved, verr := resolvePut(m, cols, now)
	if verr != nil {
		return nil, verr
	}
	return &PutRowRequest{Meta: m, Key: key.Clone(), Columns: resolved, Condition: cond, Now: now}, nil
}

func (c *Client) updateRequest(ctx context.Context, table string, key PrimaryKey, changes []Change, cond Condition) (*UpdateRowRequest, error) {
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return nil, err
	}
	now := c.now()
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	if err := checkCondition(m, cond); err != nil {
		return nil, err
	}
	resolved, verr := resolveChanges(m, changes, now)
	if verr != nil {
		return nil, verr
	}
	return &UpdateRowRequest{Meta: m, Key: key.Clone(), Changes: resolved, Condition: cond, Now: now}, nil
}

func (c *Client) deleteRequest(ctx context.Context, table string, key PrimaryKey, cond Condition) (*DeleteRowRequest, error) {
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return nil, err
	}
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	if err := checkCondition(m, cond); err != nil {
		return nil, err
	}
	return &DeleteRowRequest{Meta: m, Key: key.Clone(), Condition: cond, Now: c.now()}, nil
}

func (c *Client) getRequest(ctx context.Context, table string, key PrimaryKey, opts []ReadOption) (*GetRowRequest, error) {
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return nil, err
	}
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	spec, verr := readSpec(m, opts)
	if verr != nil {
		return nil, verr
	}
	return &GetRowRequest{Meta: m, Key: key.Clone(), Read: spec, Now: c.now()}, nil
}

// readSpec resolves a read's options; without any, it allocates nothing.
func readSpec(m *TableMeta, opts []ReadOption) (ReadSpec, *Error) {
	if len(opts) == 0 {
		return ReadSpec{MaxVersions: 1}, nil // resolveRead of no options
	}
	o := new(readOptions) // the options see it through an interface: it lives on the heap
	for _, opt := range opts {
		if opt != nil {
			opt.applyRead(o)
		}
	}
	return resolveRead(m, o)
}

// BatchGetRow reads up to MaxBatchGet rows, across tables. It returns one
// result per read, in order, each with its own error; the error return is
// for the whole call (an empty or oversized batch, a failed backend call).
func (c *Client) BatchGetRow(ctx context.Context, gets []BatchGet) ([]BatchGetResult, error) {
	const op = "BatchGetRow"
	reqs, idx, errs, err := prepareBatch(ctx, op, MaxBatchGet, gets,
		func(g BatchGet) string { return g.Table },
		func(_ int, g BatchGet) (*GetRowRequest, error) { return c.getRequest(ctx, g.Table, g.Key, g.Options) })
	if err != nil {
		return nil, err
	}
	out := make([]BatchGetResult, len(gets))
	for i, e := range errs {
		out[i].Err = e
	}
	if len(reqs) == 0 {
		return out, nil
	}
	res, err := c.b.BatchGetRow(ctx, reqs)
	if err := checkBatch(op, err, len(res), len(reqs)); err != nil {
		return nil, err
	}
	for j, r := range res {
		i := idx[j]
		switch {
		case r.Err != nil:
			out[i].Err = c.backendErr(r.Err, op, gets[i].Table)
		case r.Row != nil:
			out[i].Row, out[i].Found = *r.Row, true
		}
	}
	return out, nil
}

// BatchWriteRow applies up to MaxBatchWrite puts, updates and deletes,
// across tables. Each write is atomic on its own row; the batch is not
// atomic. It returns one result per write, in order.
func (c *Client) BatchWriteRow(ctx context.Context, writes []BatchWrite) ([]BatchWriteResult, error) {
	const op = "BatchWriteRow"
	reqs, idx, errs, err := prepareBatch(ctx, op, MaxBatchWrite, writes,
		func(w BatchWrite) string { return w.Table },
		func(i int, w BatchWrite) (*WriteRequest, error) {
			var wr WriteRequest
			var err error
			switch w.Kind {
			case BatchPutKind:
				wr.Put, err = c.putRequest(ctx, w.Table, w.Key, w.Columns, w.Condition)
			case BatchUpdateKind:
				wr.Update, err = c.updateRequest(ctx, w.Table, w.Key, w.Changes, w.Condition)
			case BatchDeleteKind:
				wr.Delete, err = c.deleteRequest(ctx, w.Table, w.Key, w.Condition)
			default:
				err = invalid("batch write %d has unknown kind %d", i, w.Kind)
			}
			return &wr, err
		})
	if err != nil {
		return nil, err
	}
	out := make([]BatchWriteResult, len(writes))
	for i, e := range errs {
		out[i].Err = e
	}
	if len(reqs) == 0 {
		return out, nil
	}
	res, err := c.b.BatchWriteRow(ctx, reqs)
	if err := checkBatch(op, err, len(res), len(reqs)); err != nil {
		return nil, err
	}
	for j, r := range res {
		i := idx[j]
		switch {
		case r.Err != nil:
			out[i].Err = c.backendErr(r.Err, op, writes[i].Table)
		case r.Update != nil:
			out[i].Increments = r.Update.Increments
		}
	}
	return out, nil
}

// prepareBatch is the shared front of the batch calls: it checks the
// batch's size and builds each entry's request. An entry that fails
// validation gets its own error in errs (a context error fails the whole
// call); the others' requests come back in reqs, idx[j] being the entry
// of reqs[j].
func prepareBatch[In any, Req any](ctx context.Context, op string, limit int, in []In,
	table func(In) string, build func(int, In) (Req, error)) (reqs []Req, idx []int, errs []error, err error) {
	if len(in) == 0 || len(in) > limit {
		return nil, nil, nil, annotate(fmtLimit(op, len(in), limit), op, "")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	reqs = make([]Req, 0, len(in))
	idx = make([]int, 0, len(in))
	errs = make([]error, len(in))
	for i, e := range in {
		req, err := build(i, e)
		if err != nil {
			if isContextErr(err) {
				return nil, nil, nil, err
			}
			errs[i] = annotate(err, op, table(e))
			continue
		}
		reqs = append(reqs, req)
		idx = append(idx, i)
	}
	return reqs, idx, errs, nil
}

// checkBatch checks a backend's batch answer: no call error, one result per request.
func checkBatch(op string, err error, got, want int) error {
	if err != nil {
		return annotate(err, op, "")
	}
	if got != want {
		return annotate(Errorf(ErrUnavailable, "backend returned %d results for %d requests", got, want), op, "")
	}
	return nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
