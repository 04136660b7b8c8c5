package tablekit

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/internal/base"
	"github.com/tablekit/tablekit/observe"
)

// WithObserver makes the client report every operation to o (nil: none).
func WithObserver(o observe.Observer) ClientOption {
	return func(cl *Client) {
		cl.telemetry().obs = o
		cl.tel.active()
	}
}

// WithLogger makes the client log retries (Info, "tablekit: retry") and
// throttled operations (Warn, "tablekit: throttled") to l; nil logs nothing.
func WithLogger(l *slog.Logger) ClientOption {
	return func(cl *Client) {
		cl.telemetry().log = l
		cl.tel.active()
	}
}

// reportRetry reports a retry to the operation that ctx belongs to, if it
// is observed (see [WithObserver] and [WithLogger]); otherwise it does
// nothing. The Client calls it for its own retries; package backend/driver
// reports every back-off it waits through internal/retryhook, so adapters
// need not report anything themselves.
func reportRetry(ctx context.Context, r observe.Retry) {
	if ctx == nil {
		return
	}
	st, _ := ctx.Value(base.RetryKey{}).(*opState)
	if st == nil {
		return
	}
	if r.ErrorType == "" && r.Reason != nil {
		r.ErrorType = errorType(r.Reason)
	}
	st.retries.Add(1)
	if st.obs != nil {
		st.obs.Retry(ctx, r)
	}
	if l := st.tel.log; l != nil {
		attrs := []slog.Attr{
			slog.String("op", st.op.Name), slog.String("table", st.op.Table),
			slog.Int("attempt", r.Attempt), slog.Duration("delay", r.Delay),
		}
		if r.Reason != nil {
			attrs = append(attrs, slog.String("error.type", r.ErrorType), slog.Any("error", r.Reason))
		}
		l.LogAttrs(ctx, slog.LevelInfo, "tablekit: retry", attrs...)
	}
}

// staleRetry is the reason type of a retry with new table metadata.
const staleRetry = "stale_metadata"

// telemetry is what a Client reports to. A Client without observer and
// logger has none (a nil *telemetry).
type telemetry struct {
	cl     *Client
	obs    observe.Observer
	log    *slog.Logger
	system string
}

func (c *Client) telemetry() *telemetry {
	if c.tel == nil {
		c.tel = &telemetry{cl: c, system: systemName(c.b)}
	}
	return c.tel
}

// active drops the telemetry when nothing is left to report to.
func (t *telemetry) active() {
	if t.obs == nil && t.log == nil {
		t.cl.tel = nil
	}
}

// opState is one observed operation. It is also the context the operation
// runs with, so that one allocation carries both.
type opState struct {
	context.Context
	tel     *telemetry
	op      observe.Operation
	obs     observe.Observation // nil when only logging
	retries atomic.Int64
}

// Value finds the operation for reportRetry and base.ReportRetry.
func (s *opState) Value(key any) any {
	if key == (base.RetryKey{}) {
		return s
	}
	return s.Context.Value(key)
}

// ReportBackoff implements base.RetryReporter for backend/driver's waits.
func (s *opState) ReportBackoff(ctx context.Context, attempt int, delay time.Duration) {
	reportRetry(ctx, observe.Retry{Attempt: attempt, Delay: delay})
}

// begin starts observing an operation. Without an observer or a logger it
// returns ctx and nil, and end on nil does nothing: that is the whole cost
// of telemetry when none is configured.
func (c *Client) begin(ctx context.Context, name, table string) (context.Context, *opState) {
	if c.tel == nil {
		return ctx, nil
	}
	return c.start(ctx, name, table)
}

// beginBatch is begin for a batch of n entries.
func (c *Client) beginBatch(ctx context.Context, name, table string, n int) (context.Context, *opState) {
	if c.tel == nil {
		return ctx, nil
	}
	return c.tel.open(ctx, observe.Operation{Name: name, Table: table, BatchSize: n})
}

// start is begin's slow path, kept out of line (so that begin inlines)
// and in one piece (so that an unobserved operation costs one call).
//
//go:noinline
func (c *Client) start(ctx context.Context, name, table string) (context.Context, *opState) {
	t := c.tel
	if t.obs == nil {
		return t.state(ctx, observe.Operation{System: t.system, Name: name, Table: table}, nil)
	}
	op := observe.Operation{System: t.system, Name: name, Table: table}
	ctx, ob := t.obs.StartOperation(ctx, op)
	if ob == nil && t.log == nil {
		return ctx, nil
	}
	return t.state(ctx, op, ob)
}

// open is start for any operation.
func (t *telemetry) open(ctx context.Context, op observe.Operation) (context.Context, *opState) {
	op.System = t.system
	var ob observe.Observation
	if t.obs != nil {
		ctx, ob = t.obs.StartOperation(ctx, op)
	}
	if ob == nil && t.log == nil {
		return ctx, nil
	}
	return t.state(ctx, op, ob)
}

// state makes the state of an observed operation.
func (t *telemetry) state(ctx context.Context, op observe.Operation, ob observe.Observation) (context.Context, *opState) {
	st := &opState{Context: ctx, tel: t, op: op, obs: ob}
	return st, st
}

// end reports the operation's outcome; s may be nil.
func (s *opState) end(o observe.Outcome) {
	if s == nil {
		return
	}
	o.Retries = int(s.retries.Load())
	if o.Err != nil {
		o.ErrorType = errorType(o.Err)
	}
	if s.obs != nil {
		s.obs.End(s, o)
	}
	if l := s.tel.log; l != nil && errors.Is(o.Err, ErrThrottled) {
		l.LogAttrs(s, slog.LevelWarn, "tablekit: throttled",
			slog.String("op", s.op.Name), slog.String("table", s.op.Table),
			slog.Int("retries", o.Retries), slog.Any("error", o.Err))
	}
}

// errorType is err's portable code as an OpenTelemetry error.type value.
func errorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	for _, c := range errorTypes {
		if errors.Is(err, c.code) {
			return c.name
		}
	}
	return "_OTHER"
}

var errorTypes = []struct {
	code error
	name string
}{
	{ErrThrottled, "throttled"},
	{ErrUnavailable, "unavailable"},
	{ErrPermissionDenied, "permission_denied"},
	{ErrInvalidArgument, "invalid_argument"},
	{ErrTableNotFound, "table_not_found"},
	{ErrAlreadyExists, "already_exists"},
	{ErrConditionFailed, "condition_failed"},
	{ErrUnimplemented, "unimplemented"},
	{ErrClosed, "closed"},
}

// systemName is the db.system.name of a backend (see [observe.Operation]):
// what the backend, or the innermost one under wrappers, names itself
// through [SystemNamer], or "tablekit." and its package's name.
func systemName(b Backend) string {
	for {
		if n, ok := b.(SystemNamer); ok {
			return n.SystemName()
		}
		u, ok := b.(Wrapper)
		if !ok {
			break
		}
		b = u.Unwrap()
	}
	t := reflect.TypeOf(b)
	if t == nil {
		return "tablekit"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pkg := t.PkgPath()
	if pkg == "" {
		return "tablekit"
	}
	return "tablekit." + pkg[strings.LastIndexByte(pkg, '/')+1:]
}

// writeBytes is the size of a write for Outcome.Bytes.
func writeBytes(key PrimaryKey, cols []Column, changes []Change) int {
	n := key.Size()
	for i := range cols {
		n += len(cols[i].Name) + cols[i].Value.Size()
	}
	for i := range changes {
		n += len(changes[i].Column) + changes[i].Value.Size()
	}
	return n
}

// endWrite ends a single-row write; s may be nil.
func (s *opState) endWrite(err error, key PrimaryKey, cols []Column, changes []Change) {
	if s != nil {
		s.endWriteSlow(err, key, cols, changes)
	}
}

func (s *opState) endWriteSlow(err error, key PrimaryKey, cols []Column, changes []Change) {
	o := observe.Outcome{Err: err}
	if err == nil {
		o.Rows, o.Bytes = 1, writeBytes(key, cols, changes)
	}
	s.end(o)
}

// endRead ends a single-row read.
func (s *opState) endRead(r *Row, err error) {
	o := observe.Outcome{Err: err}
	if r != nil && err == nil {
		o.Rows, o.Bytes = 1, r.Size()
	}
	s.end(o)
}

// endRows ends a range read or a Rows iteration; s may be nil.
func (s *opState) endRows(rows, bytes int, err error) {
	if s == nil {
		return
	}
	s.end(observe.Outcome{Rows: rows, Bytes: bytes, Err: err})
}

func (s *opState) endBatchGet(out []BatchGetResult, err error) {
	if s == nil {
		return
	}
	o := observe.Outcome{Err: err}
	for i := range out {
		switch {
		case out[i].Err != nil:
			o.Failed++
		case out[i].Found:
			o.Rows++
			o.Bytes += out[i].Row.Size()
		}
	}
	s.end(o)
}

func (s *opState) endBatchWrite(writes []BatchWrite, out []BatchWriteResult, err error) {
	if s == nil {
		return
	}
	o := observe.Outcome{Err: err}
	for i := range out {
		if out[i].Err != nil {
			o.Failed++
			continue
		}
		w := &writes[i]
		o.Rows++
		o.Bytes += writeBytes(w.Key, w.Columns, w.Changes)
	}
	s.end(o)
}

// batchTable is the table of a batch's entries, or "" when they address
// several (or the client observes nothing).
func batchTable[E any](c *Client, entries []E, table func(E) string) string {
	if len(entries) == 0 || c.tel == nil {
		return ""
	}
	t := table(entries[0])
	for _, e := range entries[1:] {
		if table(e) != t {
			return ""
		}
	}
	return t
}

// observeRows wraps a Rows iteration's yield to count what it yields;
// done ends the operation. Unobserved, yield is returned as it is.
func (s *opState) observeRows(yield func(Row, error) bool) (_ func(Row, error) bool, done func()) {
	if s == nil {
		return yield, func() {}
	}
	var n, size int
	var err error
	return func(r Row, e error) bool {
			if e != nil {
				err = e
			} else {
				n++
				size += r.Size()
			}
			return yield(r, e)
		}, func() {
			s.endRows(n, size, err)
		}
}
