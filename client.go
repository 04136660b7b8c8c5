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

	"github.com/tablekit/tablekit/internal/base"
)

// Client is the portable entry point: it validates every request once,
// fills in defaults and versions, wraps errors, and turns backend pages into
// answers and iterators. It is safe for concurrent use.
//
// A Client caches each table's schema and options (for validation and for
// the backends' visibility rules). Changes made through this Client are seen
// at once; changes made by another process are seen when the cache entry
// expires (one minute by default, see [WithMetaCacheTTL]) or as soon as a
// backend reports that a request was built from stale metadata. Either way
// SPEC §3 holds across processes: a table deleted and created again is a
// new table (a Client holding the old one gets ErrTableNotFound, or its
// call is validated again and applied to the new table), and a write made
// with cached options never removes a version written under newer ones.
// Until its cache catches up, a Client reads with the options it has.
type Client struct {
	b        Backend
	clock    Clock
	cacheTTL time.Duration
	closed   atomic.Bool
	tel      *telemetry // observer and logger (observe.go); nil when none

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

// As reaches the backend's native client or its parts: it sets *target
// and returns true when the backend offers a value of target's type (each
// adapter documents what it offers, for example a *dynamodb.Client). It is
// the escape hatch for what tablekit does not cover; calls made through it
// bypass the Client's validation.
func (c *Client) As(target any) bool {
	if a, ok := c.b.(interface{ As(any) bool }); ok {
		return a.As(target)
	}
	return false
}

// Close closes the client and its backend. Calls made after Close fail
// with an error matching [ErrClosed]; calls in flight may fail. Closing
// twice is not an error.
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

// CreateTable creates a table. Zero options take their defaults.
// Incarnation and Generation are set by the call.
func (c *Client) CreateTable(ctx context.Context, meta TableMeta) (err error) {
	const op = "CreateTable"
	ctx, st := c.begin(ctx, op, meta.Name)
	defer func() { st.end(Outcome{Err: err}) }()
	if err := c.checkOpen(op, meta.Name); err != nil {
		return err
	}
	m := meta
	m.Key = slices.Clone(meta.Key)
	m.Options = resolveCreateOptions(meta.Options)
	m.Incarnation, m.Generation = newIncarnation(), 1
	if err := checkMeta(&m); err != nil {
		return annotate(err, op, meta.Name)
	}
	if err := c.b.CreateTable(ctx, &m); err != nil {
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

// UpdateTable changes a table's options; zero fields stay as they are. It
// is atomic across clients: each change applies to the options it read.
// A table deleted and created again while it runs gets the options (the
// call then comes after the creation); one deleted for good is
// ErrTableNotFound.
func (c *Client) UpdateTable(ctx context.Context, table string, opts TableOptions) (err error) {
	const op = "UpdateTable"
	ctx, st := c.begin(ctx, op, table)
	defer func() { st.end(Outcome{Err: err}) }()
	if err := c.checkOpen(op, table); err != nil {
		return err
	}
	if err := checkName("table", table); err != nil {
		return annotate(err, op, table)
	}
	for attempt := range maxUpdateAttempts {
		if attempt > 0 {
			reportRetry(ctx, Retry{Attempt: attempt, Reason: err})
		}
		var cur, m *TableMeta
		if cur, err = c.b.DescribeTable(ctx, table); err != nil {
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
			c.remember(m)
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
	defer func() { st.end(Outcome{Err: err}) }()
	if err := c.checkOpen(op, table); err != nil {
		return TableMeta{}, err
	}
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
func (c *Client) ListTables(ctx context.Context) (_ []string, err error) {
	ctx, st := c.begin(ctx, "ListTables", "")
	defer func() { st.end(Outcome{Err: err}) }()
	if err := c.checkOpen("ListTables", ""); err != nil {
		return nil, err
	}
	names, err := c.b.ListTables(ctx)
	if err != nil {
		return nil, annotate(err, "ListTables", "")
	}
	slices.Sort(names)
	return names, nil
}

// DeleteTable deletes a table and all its rows.
func (c *Client) DeleteTable(ctx context.Context, table string) (err error) {
	const op = "DeleteTable"
	ctx, st := c.begin(ctx, op, table)
	defer func() { st.end(Outcome{Err: err}) }()
	if err := c.checkOpen(op, table); err != nil {
		return err
	}
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
	m, err := c.b.DescribeTable(ctx, table)
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
// and nil otherwise.
func (c *Client) refresh(ctx context.Context, table string, old *TableMeta) *TableMeta {
	c.forget(table)
	m, err := c.b.DescribeTable(ctx, table)
	if err != nil {
		return nil
	}
	fresh := c.remember(m)
	if fresh.Incarnation == old.Incarnation && fresh.Generation == old.Generation && slices.Equal(fresh.Key, old.Key) {
		return nil
	}
	return fresh
}

// run calls call with table's meta. When the backend says the meta was
// stale, it reads the table again and, if the table changed, calls again
// with the new meta: call builds (and so validates) its request from the
// meta it is given. This is the one place SPEC §3's cross-process rules
// meet the cache.
func (c *Client) run(ctx context.Context, table string, call func(m *TableMeta) error) error {
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err = call(m)
		if err == nil || attempt >= maxStaleRetries || !isStale(err) || ctx.Err() != nil {
			return err
		}
		if m = c.refresh(ctx, table, m); m == nil {
			return err
		}
		reportRetry(ctx, Retry{Attempt: attempt + 1, Reason: err, ErrorType: staleRetry})
	}
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
	ctx, st := t.c.begin(ctx, "PutRow", t.name)
	_, err := t.c.write(ctx, "PutRow", t.name, WritePut, key, cols, nil, writeCond(opts))
	st.endWrite(err, key, cols, nil)
	return err
}

// UpdateRow applies changes to the row at key in order, creating the row if
// it is absent. It returns the new value of every incremented column.
func (t *Table) UpdateRow(ctx context.Context, key PrimaryKey, changes []Change, opts ...WriteOption) (UpdateResult, error) {
	ctx, st := t.c.begin(ctx, "UpdateRow", t.name)
	res, err := t.c.write(ctx, "UpdateRow", t.name, WriteUpdate, key, nil, changes, writeCond(opts))
	st.endWrite(err, key, nil, changes)
	if err != nil || res == nil {
		return UpdateResult{}, err
	}
	return *res, nil
}

// DeleteRow removes the row at key. Deleting a missing row is not an error.
func (t *Table) DeleteRow(ctx context.Context, key PrimaryKey, opts ...WriteOption) error {
	ctx, st := t.c.begin(ctx, "DeleteRow", t.name)
	_, err := t.c.write(ctx, "DeleteRow", t.name, WriteDelete, key, nil, nil, writeCond(opts))
	st.endWrite(err, key, nil, nil)
	return err
}

// GetRow reads the row at key. found is false when the row does not exist
// (or fails the filter); that is not an error.
func (t *Table) GetRow(ctx context.Context, key PrimaryKey, opts ...ReadOption) (row Row, found bool, err error) {
	ctx, st := t.c.begin(ctx, "GetRow", t.name)
	r, err := t.c.getRow(ctx, t.name, key, opts)
	if st != nil {
		st.endRead(r, err)
	}
	if err != nil {
		return Row{}, false, annotate(err, "GetRow", t.name)
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

// write validates and applies one write.
func (c *Client) write(ctx context.Context, op, table string, kind WriteKind, key PrimaryKey, cols []Column, changes []Change, cond Condition) (*UpdateResult, error) {
	var res *UpdateResult
	err := c.run(ctx, table, func(m *TableMeta) error {
		req, err := c.writeRequest(m, kind, key, cols, changes, cond)
		if err != nil {
			return err
		}
		res, err = c.b.Write(ctx, req)
		return err
	})
	if err != nil {
		return nil, c.backendErr(err, op, table)
	}
	return res, nil
}

// writeRequest validates a write against m and builds its request. The
// request shares key with the caller (the backend only reads it); columns
// and changes are new slices with their versions set.
func (c *Client) writeRequest(m *TableMeta, kind WriteKind, key PrimaryKey, cols []Column, changes []Change, cond Condition) (*WriteRequest, error) {
	now := c.now()
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	if err := checkCondition(m, cond); err != nil {
		return nil, err
	}
	req := &WriteRequest{Meta: m, Kind: kind, Key: key, Condition: cond, Now: now}
	var verr *Error
	switch kind {
	case WritePut:
		req.Columns, verr = resolvePut(m, cols, now)
	case WriteUpdate:
		req.Changes, verr = resolveChanges(m, changes, now)
	case WriteDelete:
	default:
		verr = invalid("write of unknown kind %d", kind)
	}
	if verr != nil {
		return nil, verr
	}
	return req, nil
}

// getRow validates and runs one read.
func (c *Client) getRow(ctx context.Context, table string, key PrimaryKey, opts []ReadOption) (*Row, error) {
	var r *Row
	err := c.run(ctx, table, func(m *TableMeta) error {
		req, err := c.getRequest(m, key, opts)
		if err != nil {
			return err
		}
		r, err = c.b.GetRow(ctx, req)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrTableNotFound) {
			c.forget(table)
		}
		return nil, err
	}
	return r, nil
}

func (c *Client) getRequest(m *TableMeta, key PrimaryKey, opts []ReadOption) (*GetRowRequest, error) {
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	spec, verr := readSpec(m, opts)
	if verr != nil {
		return nil, verr
	}
	return &GetRowRequest{Meta: m, Key: key, Read: spec, Now: c.now()}, nil
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

// batchParallelism is how many single-row calls the Client makes at once
// for a batch whose backend has no batch call.
const batchParallelism = 8

// BatchGetRow reads up to MaxBatchGet rows, across tables. It returns one
// result per read, in order, each with its own error; the error return is
// for the whole call (an empty or oversized batch, a failed backend call).
func (c *Client) BatchGetRow(ctx context.Context, gets []BatchGet) (out []BatchGetResult, err error) {
	const op = "BatchGetRow"
	ctx, st := c.beginBatch(ctx, op, batchTable(c, gets, func(g BatchGet) string { return g.Table }), len(gets))
	defer func() { st.endBatchGet(out, err) }()
	reqs, idx, errs, err := prepareBatch(ctx, c, op, MaxBatchGet, gets,
		func(g BatchGet) string { return g.Table },
		func(m *TableMeta, g BatchGet) (*GetRowRequest, error) { return c.getRequest(m, g.Key, g.Options) })
	if err != nil {
		return nil, err
	}
	out = make([]BatchGetResult, len(gets))
	for i, e := range errs {
		out[i].Err = e
	}
	if len(reqs) == 0 {
		return out, nil
	}
	res, err := c.batchGet(ctx, reqs)
	if err := checkBatch(op, err, len(res), len(reqs)); err != nil {
		return nil, err
	}
	for j, r := range res {
		i := idx[j]
		row, rerr := r.Row, r.Err
		if rerr != nil && isStale(rerr) { // read again on its own, with new metadata
			reportRetry(ctx, Retry{Attempt: 1, Reason: rerr, ErrorType: staleRetry})
			row, rerr = c.getRow(ctx, gets[i].Table, gets[i].Key, gets[i].Options)
		}
		switch {
		case rerr != nil:
			out[i].Err = c.backendErr(rerr, op, gets[i].Table)
		case row != nil:
			out[i].Row, out[i].Found = *row, true
		}
	}
	return out, nil
}

// batchGet is the backend's BatchGetRow, or GetRow a few at a time.
func (c *Client) batchGet(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error) {
	if br, ok := c.b.(BatchReader); ok {
		return br.BatchGetRow(ctx, reqs)
	}
	out := make([]GetRowResponse, len(reqs))
	err := base.Parallel(ctx, len(reqs), batchParallelism, func(ctx context.Context, i int) error {
		out[i].Row, out[i].Err = c.b.GetRow(ctx, reqs[i])
		if isContextErr(out[i].Err) {
			return out[i].Err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BatchWriteRow applies up to MaxBatchWrite puts, updates and deletes,
// across tables. Each write is atomic on its own row; the batch is not
// atomic. Writes to the same row are applied in the order given. It returns
// one result per write, in order.
func (c *Client) BatchWriteRow(ctx context.Context, writes []BatchWrite) (out []BatchWriteResult, err error) {
	const op = "BatchWriteRow"
	ctx, st := c.beginBatch(ctx, op, batchTable(c, writes, func(w BatchWrite) string { return w.Table }), len(writes))
	defer func() { st.endBatchWrite(writes, out, err) }()
	reqs, idx, errs, err := prepareBatch(ctx, c, op, MaxBatchWrite, writes,
		func(w BatchWrite) string { return w.Table },
		func(m *TableMeta, w BatchWrite) (*WriteRequest, error) {
			return c.writeRequest(m, w.Kind, w.Key, w.Columns, w.Changes, w.Condition)
		})
	if err != nil {
		return nil, err
	}
	out = make([]BatchWriteResult, len(writes))
	for i, e := range errs {
		out[i].Err = e
	}
	// Writes to one row go in successive backend calls, in batch order: a
	// backend may apply the writes of one call in any order.
	for _, wave := range sameRowWaves(reqs) {
		sub := reqs
		if wave != nil {
			sub = make([]*WriteRequest, len(wave))
			for k, j := range wave {
				sub[k] = reqs[j]
			}
		}
		res, err := c.batchWrite(ctx, sub)
		if err := checkBatch(op, err, len(res), len(sub)); err != nil {
			return nil, err
		}
		for k, r := range res {
			j := k
			if wave != nil {
				j = wave[k]
			}
			i := idx[j]
			upd, werr := r.Update, r.Err
			if werr != nil && isStale(werr) { // write again on its own, with new metadata
				reportRetry(ctx, Retry{Attempt: 1, Reason: werr, ErrorType: staleRetry})
				w := writes[i]
				upd, werr = c.write(ctx, op, w.Table, w.Kind, w.Key, w.Columns, w.Changes, w.Condition)
			}
			switch {
			case werr != nil:
				out[i].Err = c.backendErr(werr, op, writes[i].Table)
			case upd != nil:
				out[i].Increments = upd.Increments
			}
		}
	}
	return out, nil
}

// sameRowWaves splits a batch so that no two writes of one wave address the
// same row: wave n holds the n-th write of each row, in batch order. It
// returns [nil] (one wave: the whole batch) when no row is written twice.
func sameRowWaves(reqs []*WriteRequest) [][]int {
	if len(reqs) < 2 {
		return [][]int{nil}
	}
	seen := make(map[string]int, len(reqs))
	waveOf := make([]int, len(reqs))
	n := 1
	for j, r := range reqs {
		id := string(encodeToken(token{table: r.Meta.Name, key: r.Key}))
		waveOf[j] = seen[id]
		seen[id]++
		n = max(n, seen[id])
	}
	if n == 1 {
		return [][]int{nil}
	}
	waves := make([][]int, n)
	for j, w := range waveOf {
		waves[w] = append(waves[w], j)
	}
	return waves
}

// batchWrite is the backend's BatchWriteRow, or Write a few at a time.
func (c *Client) batchWrite(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error) {
	if bw, ok := c.b.(BatchWriter); ok {
		return bw.BatchWriteRow(ctx, reqs)
	}
	out := make([]WriteResponse, len(reqs))
	err := base.Parallel(ctx, len(reqs), batchParallelism, func(ctx context.Context, i int) error {
		out[i].Update, out[i].Err = c.b.Write(ctx, reqs[i])
		if isContextErr(out[i].Err) {
			return out[i].Err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// prepareBatch is the shared front of the batch calls: it checks the
// batch's size and builds each entry's request from its table's meta. An
// entry that fails validation gets its own error in errs (a context error
// or a closed client fails the whole call); the others' requests come back
// in reqs, idx[j] being the entry of reqs[j].
func prepareBatch[In any, Req any](ctx context.Context, c *Client, op string, limit int, in []In,
	table func(In) string, build func(*TableMeta, In) (Req, error)) (reqs []Req, idx []int, errs []error, err error) {
	if err := c.checkOpen(op, ""); err != nil {
		return nil, nil, nil, err
	}
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
		m, err := c.tableMeta(ctx, table(e))
		var req Req
		if err == nil {
			req, err = build(m, e)
		}
		if err != nil {
			if isContextErr(err) || errors.Is(err, ErrClosed) {
				return nil, nil, nil, annotate(err, op, "")
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
