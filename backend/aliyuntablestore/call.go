package aliyuntablestore

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// This file is how the adapter gives a context to an SDK that takes none.
//
// Every row and table call of the SDK v1.9.3 except ListTable carries an
// ExtraRequestInfo whose trace ID the SDK sends as the x-ots-sdk-traceid
// header. The adapter gives each call that needs it a unique trace ID and
// records the caller's context under it; the transport the adapter installs
// in the SDK (ContextTransport) finds the context by that header and sends
// the HTTP request with it, so net/http aborts the request the moment the
// context ends. Errors the transport returns for an ended context carry no
// Temporary() and none of the strings the SDK's retry loop looks for, so
// the SDK gives up at once instead of retrying them.
//
// The SDK sleeps between its own retries (time.Sleep, up to
// MaxRetryInterval) and cannot be woken. So for the clients it builds (New,
// Open) the adapter sets the SDK's RetryTimes to 0 and runs the
// same retry policy itself (retryPolicy: the SDK's exported
// ShouldRetryViaErrorAndAction, its transport-error rules and its back-off
// formula, within the configured RetryTimes and MaxRetryTime), sleeping
// with a timer that the context interrupts. Calls then run on the caller's
// goroutine and return ctx.Err() at once, leaving nothing behind.
//
// A client given to New keeps its own retries; there, and for
// ListTable (whose request carries no trace ID), a call whose context can
// end runs on a goroutine of its own and the adapter returns ctx.Err() as
// soon as the context is done; that goroutine ends when the SDK returns,
// at the latest when it wakes from its current back-off, its next attempt
// failing at once in the transport.

// traceHeader is the header in which the SDK sends ExtraRequestInfo's
// trace ID, in the canonical form Header.Set stores it under, so that the
// transport reads it without canonicalizing the name on every request.
var traceHeader = http.CanonicalHeaderKey("x-ots-sdk-traceid")

var (
	calls      sync.Map // trace ID -> *callState
	callSeq    atomic.Uint64
	callPrefix = func() string {
		var b [6]byte
		_, _ = crand.Read(b[:])
		return "tablekit-" + hex.EncodeToString(b[:]) + "-"
	}()
)

// callState is what the transport needs to know about one adapter call.
type callState struct {
	ctx context.Context
	// noReplay marks a write that is not safe to send twice (it has an
	// increment or a condition): a connection that fails after the request
	// may have reached the server is reported, never retried.
	noReplay bool
}

// traced is an SDK request whose trace ID can be set; every *XxxRequest of
// the row and table API has the method through its embedded ExtraRequestInfo.
type traced interface {
	SetTraceID(string)
}

// call runs fn, one SDK call, under ctx on a goroutine of its own when
// ctx can end (the mode for clients that retry by themselves). req is the
// SDK request fn sends (nil when the SDK offers no per-call header, as for
// ListTable). The returned error is ctx.Err() when ctx ended before fn
// finished, fn's own error otherwise; a panic inside the SDK becomes an
// ErrUnavailable error.
func call(ctx context.Context, req traced, noReplay bool, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := ctx.Done()
	if done == nil && !noReplay {
		return protect(fn)
	}
	id := register(ctx, req, noReplay)
	if done == nil {
		defer calls.Delete(id)
		return protect(fn)
	}
	res := make(chan error, 1)
	go func() {
		if id != "" {
			defer calls.Delete(id)
		}
		res <- protect(fn)
	}()
	select {
	case err := <-res:
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
		}
		return err
	case <-done:
		// Prefer an answer that is already there.
		select {
		case err := <-res:
			if err == nil {
				return nil
			}
		default:
		}
		return ctx.Err()
	}
}

// callSync runs fn on the caller's goroutine, its HTTP request tied to
// ctx through the transport; fn makes one attempt (the SDK does not
// retry), so it returns as soon as ctx ends.
func callSync(ctx context.Context, req traced, noReplay bool, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ctx.Done() != nil || noReplay {
		defer calls.Delete(register(ctx, req, noReplay))
	}
	err := protect(fn)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
	}
	return err
}

// register gives req a fresh trace ID under which the transport finds ctx.
func register(ctx context.Context, req traced, noReplay bool) string {
	if req == nil {
		return ""
	}
	id := callPrefix + strconv.FormatUint(callSeq.Add(1), 36)
	req.SetTraceID(id)
	calls.Store(id, &callState{ctx: ctx, noReplay: noReplay})
	return id
}

// retryPolicy is the SDK's retry policy (api.go getNextPause): its
// attempt and time limits and its back-off intervals, run by the adapter
// with driver.Backoff so that its back-off sleeps end with the caller's
// context.
type retryPolicy struct {
	times   uint          // retries after the first attempt
	maxTime time.Duration // from the first attempt
	backoff driver.Backoff
}

func newRetryPolicy(cfg *tablestore.TableStoreConfig) *retryPolicy {
	base, ceil := cfg.DefaultRetryInterval, cfg.MaxRetryInterval
	if base/time.Millisecond <= 0 {
		base = tablestore.DefaultRetryInterval * time.Millisecond
	}
	if ceil/time.Millisecond <= 0 {
		ceil = tablestore.MaxRetryInterval * time.Millisecond
	}
	// The SDK waits a random whole number of milliseconds in
	// [1, min(base<<n, max)] before retry n.
	return &retryPolicy{
		times:   cfg.RetryTimes,
		maxTime: cfg.MaxRetryTime,
		backoff: driver.Backoff{Base: base, Max: ceil, Min: time.Millisecond},
	}
}

// budget counts the attempts of one logical call (a single-row call, or
// one batch with its partial retries), so retries never multiply.
type budget struct {
	n   uint
	end time.Time
}

// pause returns how long to wait before another attempt, or false when the
// budget is spent.
func (p *retryPolicy) pause(b *budget) (time.Duration, bool) {
	if b.end.IsZero() {
		b.end = time.Now().Add(p.maxTime)
	}
	if b.n >= p.times || time.Now().After(b.end) {
		return 0, false
	}
	d := p.backoff.Delay(int(min(b.n, 32)))
	b.n++
	return d, true
}

// retryable applies the SDK's rules to the error of one attempt of action
// (the SDK's URI, "/GetRow"): whether to retry, and whether at once (a
// connection the server closed) or after a back-off.
func retryable(err error, action string) (retry, now bool) {
	var oe *tablestore.OtsError
	if errors.As(err, &oe) {
		return tablestore.ShouldRetryViaErrorAndAction(oe.Code, oe.Message, action), false
	}
	var ab *abandonedError
	var nr *noReplayError
	var te *tablekit.Error
	if errors.As(err, &ab) || errors.As(err, &nr) || errors.As(err, &te) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false, false
	}
	msg := err.Error()
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(msg, "EOF") ||
		strings.Contains(msg, "server closed idle connection") || strings.Contains(strings.ToLower(msg), "connection reset by peer"):
		return true, true
	case strings.Contains(msg, "connection refused") || strings.Contains(msg, "i/o timeout") ||
		strings.Contains(msg, "cannot assign requested address"):
		return true, false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		//lint:ignore SA1019 Temporary is deprecated, but it is the SDK's own rule (api.go getNextPause).
		return ne.Temporary(), false
	}
	return false, false
}

// protect runs fn and turns a panic inside the SDK into an error.
func protect(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = tablekit.Errorf(tablekit.ErrUnavailable, "the Tablestore SDK panicked on the server's answer: %v", r)
		}
	}()
	return fn()
}

// ContextTransport returns an http.RoundTripper that ties every request the
// adapter sends to the context of the adapter call that sent it, on top of
// base (nil means a transport built like the SDK's own). [Open]
// installs it; install it yourself in TableStoreConfig.Transport when you
// build the *tablestore.TableStoreClient you pass to [New], so that
// an ended context also aborts the HTTP request in flight. Requests that
// do not come from an adapter call pass through unchanged.
func ContextTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = newBaseTransport(nil)
	}
	return &ctxTransport{base: base}
}

type ctxTransport struct {
	base http.RoundTripper
	// timeout, when set, is the SDK's HTTPTimeout.RequestTimeout, which
	// Open applies here instead of in the SDK's http.Client (whose Timeout
	// it sets to 0). An http.Client enforces its Timeout over a transport
	// it does not know (this one) with a goroutine and a timer per
	// request; here it is a context deadline, as the http.Client sets on
	// its own transport. The bound and its error are the same: the whole
	// exchange, headers and body, and an error matching
	// context.DeadlineExceeded with Timeout() true.
	timeout time.Duration
}

func (t *ctxTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var st *callState
	if id := r.Header[traceHeader]; len(id) > 0 && id[0] != "" {
		if v, ok := calls.Load(id[0]); ok {
			st = v.(*callState)
		}
	}
	if st == nil && t.timeout <= 0 {
		return t.base.RoundTrip(r)
	}
	ctx := r.Context()
	if st != nil {
		ctx = st.ctx
		if err := ctx.Err(); err != nil {
			if r.Body != nil {
				_ = r.Body.Close()
			}
			return nil, &abandonedError{err: err}
		}
	}
	var cancel context.CancelFunc
	if t.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
	}
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		err = callError(st, ctx, err, false) // before cancel, which ends ctx
		if cancel != nil {
			cancel()
		}
		return nil, err
	}
	resp.Body = &callBody{ReadCloser: resp.Body, st: st, ctx: ctx, cancel: cancel}
	return resp, nil
}

// callError is what the transport reports for err, an error of the
// request (or, with body set, of reading the answer) sent under ctx for
// the call st (nil for a request that is not an adapter call's).
func callError(st *callState, ctx context.Context, err error, body bool) error {
	if st != nil {
		if cerr := st.ctx.Err(); cerr != nil {
			return &abandonedError{err: cerr}
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) { // the request timeout, not the call's context
		return &requestTimeoutError{err: err, body: body}
	}
	if st != nil && st.noReplay && (body || !isDialError(err)) {
		return &noReplayError{err: err}
	}
	return err
}

// requestTimeoutError is an exchange that outlasted the SDK's
// RequestTimeout; it reads and matches as http.Client's own timeout
// error does.
type requestTimeoutError struct {
	err  error
	body bool
}

func (e *requestTimeoutError) Error() string {
	if e.body {
		return e.err.Error() + " (Client.Timeout or context cancellation while reading body)"
	}
	return e.err.Error() + " (Client.Timeout exceeded while awaiting headers)"
}
func (e *requestTimeoutError) Timeout() bool   { return true }
func (e *requestTimeoutError) Temporary() bool { return true }
func (e *requestTimeoutError) Is(target error) bool {
	return target == context.DeadlineExceeded
}

// CloseIdleConnections closes the idle connections of the base transport.
func (t *ctxTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// callBody gives body read errors the same treatment as request errors,
// and ends the request timeout's context when the SDK closes the body.
type callBody struct {
	io.ReadCloser
	st     *callState // nil: not an adapter call's request
	ctx    context.Context
	cancel context.CancelFunc // nil: no request timeout
}

func (b *callBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = callError(b.st, b.ctx, err, true)
	}
	return n, err
}

func (b *callBody) Close() error {
	err := b.ReadCloser.Close()
	if b.cancel != nil {
		b.cancel()
	}
	return err
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// abandonedError is the transport's answer for a request whose context
// ended. Its message and methods are chosen so that the SDK's retry loop
// (api.go getNextPause) does not retry it: no Temporary(), and none of
// the strings "EOF", "connection reset", "connection refused", "i/o timeout".
type abandonedError struct{ err error }

func (e *abandonedError) Error() string {
	return "tablekit: request abandoned: " + e.err.Error()
}
func (e *abandonedError) Unwrap() error { return e.err }

// noReplayError reports a failed connection on a write that must not be
// sent twice; like abandonedError it is never retried by the SDK.
type noReplayError struct{ err error }

func (e *noReplayError) Error() string {
	return "tablekit: the connection failed after the write was sent; not retried because the write may have been applied"
}
func (e *noReplayError) Unwrap() error { return e.err }
