package base

// The retry hook carries back-off retries from package backend/driver to
// the Client operation a context belongs to, without an exported hook in
// the root package: the Client stores a [RetryReporter] in the
// operation's context under [RetryKey], and driver's waits call
// [ReportRetry].

import (
	"context"
	"time"
)

// RetryKey is the context key of the operation's RetryReporter.
type RetryKey struct{}

// A RetryReporter receives the retries of one operation.
type RetryReporter interface {
	// ReportBackoff reports a wait of delay before attempt (1-based; 0
	// when the waiter does not count attempts).
	ReportBackoff(ctx context.Context, attempt int, delay time.Duration)
}

// ReportRetry reports a back-off to the operation of ctx, if it has a
// RetryReporter.
func ReportRetry(ctx context.Context, attempt int, delay time.Duration) {
	if ctx == nil {
		return
	}
	if r, ok := ctx.Value(RetryKey{}).(RetryReporter); ok {
		r.ReportBackoff(ctx, attempt, delay)
	}
}
