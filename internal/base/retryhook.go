// Package retryhook carries back-off retries from package backend/driver
// to the Client operation a context belongs to, without an exported hook
// in the root package: the Client stores a [Reporter] in the operation's
// context under [Key], and driver's waits call [Report].
package base

import (
	"context"
	"time"
)

// Key is the context key of the operation's Reporter.
type RetryKey struct{}

// A Reporter receives the retries of one operation.
type RetryReporter interface {
	// ReportBackoff reports a wait of delay before attempt (1-based; 0
	// when the waiter does not count attempts).
	ReportBackoff(ctx context.Context, attempt int, delay time.Duration)
}

// Report reports a back-off to the operation of ctx, if it has a Reporter.
func ReportRetry(ctx context.Context, attempt int, delay time.Duration) {
	if ctx == nil {
		return
	}
	if r, ok := ctx.Value(RetryKey{}).(RetryReporter); ok {
		r.ReportBackoff(ctx, attempt, delay)
	}
}
