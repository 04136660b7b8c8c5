package base

// Bounded parallel work: the one implementation behind driver.Parallel
// and the Client's batch fallback.

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Parallel calls f(ctx, i) for every i in [0, n), at most limit at a time (limit
// < 1 means 1), and returns the first error a call returned, or ctx's
// error. After a call fails, the ctx the others see is cancelled and no
// call starts. With n == 1 or limit <= 1 the calls run in order on the
// caller's goroutine.
func Parallel(ctx context.Context, n, limit int, f func(ctx context.Context, i int) error) error {
	if n <= 0 {
		return nil
	}
	if n == 1 || limit <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := f(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return f(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
