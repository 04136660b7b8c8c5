package driver_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

type nativeErr struct{ s string }

func (e *nativeErr) Error() string { return e.s }

func TestWrap(t *testing.T) {
	native := &nativeErr{"N"}
	classify := func(error) error { return tablekit.ErrThrottled }
	ctx := context.Background()
	err := driver.Wrap(ctx, native, classify, "on %q", "t")
	var n *nativeErr
	if !errors.Is(err, tablekit.ErrThrottled) || !errors.As(err, &n) {
		t.Fatalf("Wrap = %v: want ErrThrottled reaching the native error", err)
	}
	if driver.Wrap(ctx, nil, classify, "") != nil {
		t.Fatal("nil must stay nil")
	}
	own := tablekit.Errorf(tablekit.ErrConditionFailed, "x")
	if got := driver.Wrap(ctx, own, classify, ""); got != error(own) {
		t.Fatalf("an *Error must pass through, got %v", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := driver.Wrap(cctx, native, classify, ""); got != context.Canceled {
		t.Fatalf("ended context: got %v, want context.Canceled", got)
	}
}

func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{tablekit.Errorf(tablekit.ErrThrottled, "x"), true},
		{tablekit.Errorf(tablekit.ErrUnavailable, "x"), true},
		{tablekit.Errorf(tablekit.ErrInvalidArgument, "x"), false},
		{tablekit.Errorf(tablekit.ErrPermissionDenied, "x"), false},
		{driver.Stale("x"), false},
		{context.Canceled, false},
	} {
		if got := driver.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if err := driver.Stale("t"); !errors.Is(err, driver.ErrStaleMeta) {
		t.Errorf("Stale() = %v does not match ErrStaleMeta", err)
	}
}

func TestBackoffBounds(t *testing.T) {
	b := driver.Backoff{Base: 2 * time.Millisecond, Max: 50 * time.Millisecond, Min: time.Millisecond}
	for n := range 40 {
		w := min(2*time.Millisecond<<min(n, 30), 50*time.Millisecond)
		for range 50 {
			d := b.Delay(n)
			if d < time.Millisecond || d >= time.Millisecond+w {
				t.Fatalf("Delay(%d) = %v, want in [1ms, %v)", n, d, time.Millisecond+w)
			}
		}
	}
	var zero driver.Backoff
	if d := zero.Delay(100); d > time.Second+time.Millisecond {
		t.Fatalf("zero Backoff Delay(100) = %v, want at most about 1s", d)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := driver.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("Sleep did not end with its context")
	}
}

func TestParallelBoundAndError(t *testing.T) {
	var running, peak atomic.Int32
	err := driver.Parallel(context.Background(), 50, 4, func(ctx context.Context, i int) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		running.Add(-1)
		return nil
	})
	if err != nil || peak.Load() > 4 || peak.Load() < 1 {
		t.Fatalf("Parallel: err %v, peak %d, want nil and 1..4", err, peak.Load())
	}
	boom := errors.New("boom")
	var calls atomic.Int32
	err = driver.Parallel(context.Background(), 1000, 2, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() == 1000 {
		t.Fatalf("Parallel: err %v after %d calls, want boom before all 1000", err, calls.Load())
	}
}
