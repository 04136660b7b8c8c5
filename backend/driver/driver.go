// Package driver is for adapter authors: what every tablekit.Backend needs
// besides SPEC's row rules (those are package rowmodel). It turns native
// errors into portable ones, tells the Client that a request's metadata is
// stale, and runs retries and bounded parallel work the same way in every
// adapter. Programs that only use tablekit never import it.
//
// The contract an adapter implements is written on tablekit.Backend, method
// by method; package conformance is its test suite.
package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/base"
)

// ErrStaleMeta is what a backend's error wraps when a request's Meta is
// older than the store's table: the table was deleted and created again
// (another Incarnation), or a row was written under newer options (a
// higher Generation) than the request knows. Nothing was written. The
// Client reads the table again and retries the call against the new
// metadata; a program never sees this error unless the table keeps
// changing under it.
var ErrStaleMeta = base.ErrStaleMeta

// Stale returns the error a backend returns for a stale request: an
// *tablekit.Error with Code ErrUnavailable that wraps ErrStaleMeta.
func Stale(format string, args ...any) error {
	return tablekit.WrapError(tablekit.ErrUnavailable, ErrStaleMeta, format, args...)
}

// Wrap is what an adapter does with an error of its native client: nil
// stays nil; when ctx has ended, or err is a context error, the context
// error is returned as it is; an *tablekit.Error passes through; anything
// else becomes an *tablekit.Error whose Code is classify(err) and whose Err
// is err, so errors.As still reaches the native type.
func Wrap(ctx context.Context, err error, classify func(error) error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var te *tablekit.Error
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return tablekit.WrapError(classify(err), err, format, args...)
}

// Retryable reports whether SPEC §12 says a retry of the same call may
// succeed: err matches tablekit.ErrThrottled or tablekit.ErrUnavailable
// (and is not a stale-metadata error, which needs new metadata, not a
// retry).
func Retryable(err error) bool {
	if errors.Is(err, ErrStaleMeta) {
		return false
	}
	return errors.Is(err, tablekit.ErrThrottled) || errors.Is(err, tablekit.ErrUnavailable)
}

// Backoff is a capped exponential backoff with full jitter: before retry
// attempt n (0-based) it waits a random duration in [Min, min(Base<<n, Max)).
// The zero Backoff waits between 0.5 ms and 1 ms at first, up to 1 s.
type Backoff struct {
	Base time.Duration // the first window; default 1 ms
	Max  time.Duration // the largest window; default 1 s
	Min  time.Duration // the least delay; default 0.5 ms
}

// Delay returns the jittered delay before retry attempt n (0-based).
func (b Backoff) Delay(n int) time.Duration {
	base, limit, least := b.Base, b.Max, b.Min
	if base <= 0 {
		base = time.Millisecond
	}
	if limit <= 0 {
		limit = time.Second
	}
	if least <= 0 {
		least = time.Millisecond / 2
	}
	w := base << min(max(n, 0), 30)
	if w <= 0 || w > limit {
		w = limit
	}
	return least + time.Duration(rand.Int64N(int64(w)))
}

// Wait sleeps Delay(n), or less when ctx ends first, and then returns
// ctx's error, if any. It reports retry attempt n+1 to the operation of
// ctx (through internal/base), for the program's telemetry and log.
func (b Backoff) Wait(ctx context.Context, n int) error {
	d := b.Delay(n)
	base.ReportRetry(ctx, n+1, d)
	return sleep(ctx, d)
}

// Sleep is the back-off before a retry: it waits d, or until ctx ends, and
// returns ctx's error if it ended. Like Wait, it reports the retry to the
// operation of ctx (through internal/base, with Attempt 0: not counted).
func Sleep(ctx context.Context, d time.Duration) error {
	base.ReportRetry(ctx, 0, d)
	return sleep(ctx, d)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Parallel calls f(ctx, i) for every i in [0, n), at most limit at a time
// (limit < 1 means 1), and returns the first error any call returned, or
// ctx's error. After a call fails, the ctx the others see is cancelled and
// no call starts. With n == 1 or limit == 1 it runs the calls in order on
// the caller's goroutine.
func Parallel(ctx context.Context, n, limit int, f func(ctx context.Context, i int) error) error {
	return base.Parallel(ctx, n, limit, f)
}
