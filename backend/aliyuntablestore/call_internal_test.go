package aliyuntablestore

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

type fakeReq struct{ id string }

func (r *fakeReq) SetTraceID(id string) { r.id = id }

func registered() int {
	n := 0
	calls.Range(func(_, _ any) bool { n++; return true })
	return n
}

// call registers a cancellable call for the transport only while the SDK
// works on it, returns as soon as the context ends, and leaves nothing
// behind once the SDK call finishes.
func TestCallLifecycle(t *testing.T) {
	base := registered()
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	finished := make(chan struct{})
	req := &fakeReq{}
	errc := make(chan error, 1)
	started := make(chan string, 1)
	go func() {
		errc <- call(ctx, req, false, func() error {
			defer close(finished)
			started <- req.id
			<-release
			return nil
		})
	}()
	id := <-started
	if !strings.HasPrefix(id, callPrefix) {
		t.Fatalf("trace id %q lacks the adapter's prefix", id)
	}
	if v, ok := calls.Load(id); !ok || v.(*callState).ctx != ctx {
		t.Fatal("the call is not registered under its trace id")
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Second):
		t.Fatal("call did not return after the cancellation")
	}
	if registered() != base+1 {
		t.Fatal("the entry must stay while the SDK still works (its next attempt must find the ended context)")
	}
	close(release)
	<-finished
	deadline := time.Now().Add(time.Second)
	for registered() != base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := registered(); n != base {
		t.Fatalf("%d calls still registered", n-base)
	}
}

// A call whose context cannot end and that may be replayed takes the
// direct path: no trace id, no registration.
func TestCallDirectPath(t *testing.T) {
	req := &fakeReq{}
	if err := call(context.Background(), req, false, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if req.id != "" {
		t.Errorf("trace id %q set on the direct path", req.id)
	}
	// noReplay needs the registration even without a deadline.
	var during int
	if err := call(context.Background(), req, true, func() error { during = registered(); return nil }); err != nil {
		t.Fatal(err)
	}
	if req.id == "" || during == 0 {
		t.Errorf("a no-replay call was not registered")
	}
}

// A panic inside the SDK becomes an ErrUnavailable error, on both paths.
func TestCallRecoversPanics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []context.Context{context.Background(), ctx} {
		err := call(c, &fakeReq{}, false, func() error {
			panic(errors.New("the SDK failed to decode an answer"))
		})
		if !errors.Is(err, tablekit.ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
	}
}

// The errors the transport returns for an ended context and for a write
// that must not be replayed carry none of the marks the SDK retries on.
func TestTransportErrorsAreNotRetryable(t *testing.T) {
	for _, err := range []error{
		&abandonedError{err: context.DeadlineExceeded},
		&abandonedError{err: context.Canceled},
		&noReplayError{err: errors.New("read tcp: connection reset by peer: unexpected EOF")},
	} {
		msg := err.Error()
		for _, mark := range []string{"EOF", "connection reset by peer", "Connection reset by peer", "server closed idle connection", "connection refused", "i/o timeout", "cannot assign requested address"} {
			if strings.Contains(msg, mark) {
				t.Errorf("%q contains %q, which the SDK retries", msg, mark)
			}
		}
		if _, ok := err.(interface{ Temporary() bool }); ok {
			t.Errorf("%T has Temporary(), which the SDK consults", err)
		}
	}
}

// callSync registers a call only while it runs, and only when the
// transport needs it.
func TestCallSync(t *testing.T) {
	base := registered()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := &fakeReq{}
	var during int
	if err := callSync(ctx, req, false, func() error { during = registered(); return nil }); err != nil {
		t.Fatal(err)
	}
	if during != base+1 || registered() != base {
		t.Errorf("registered %d during the call and %d after, want %d and %d", during, registered(), base+1, base)
	}
	req = &fakeReq{}
	if err := callSync(context.Background(), req, false, func() error { return nil }); err != nil || req.id != "" {
		t.Errorf("a call that cannot end and may be replayed was registered (id %q, err %v)", req.id, err)
	}
	cancel()
	ran := false
	if err := callSync(ctx, req, false, func() error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("a call with an ended context ran (%v) or returned %v", ran, err)
	}
}

// policy is the adapter's retry policy for a config with these settings.
func policy(times uint, maxTime, base, ceil time.Duration) *retryPolicy {
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes, cfg.MaxRetryTime, cfg.DefaultRetryInterval, cfg.MaxRetryInterval = times, maxTime, base, ceil
	return newRetryPolicy(cfg)
}

// The adapter's retry policy is the SDK's: RetryTimes retries within
// MaxRetryTime, back-off (driver.Backoff) drawn from [1ms, min(base<<n,
// max)+1ms).
func TestRetryPolicy(t *testing.T) {
	p := policy(3, time.Minute, 50*time.Millisecond, 120*time.Millisecond)
	var b budget
	for n := 0; n < 3; n++ {
		d, ok := p.pause(&b)
		ceil := min(50*time.Millisecond<<n, 120*time.Millisecond) + time.Millisecond
		if !ok || d < time.Millisecond || d >= ceil {
			t.Errorf("retry %d: pause %v, %v; want within [1ms, %v)", n, d, ok, ceil)
		}
	}
	if _, ok := p.pause(&b); ok {
		t.Error("a fourth retry was allowed")
	}
	// Unset intervals are the SDK's defaults.
	if d := policy(3, time.Minute, 0, 0); d.backoff.Base != tablestore.DefaultRetryInterval*time.Millisecond || d.backoff.Max != tablestore.MaxRetryInterval*time.Millisecond {
		t.Errorf("default back-off %+v, want the SDK's %d ms and %d ms", d.backoff, tablestore.DefaultRetryInterval, tablestore.MaxRetryInterval)
	}
	p = policy(100, time.Nanosecond, time.Millisecond, time.Millisecond)
	b = budget{}
	p.pause(&b)
	time.Sleep(time.Millisecond)
	if _, ok := p.pause(&b); ok {
		t.Error("a retry after MaxRetryTime was allowed")
	}
	for _, c := range []struct {
		err        error
		action     string
		retry, now bool
	}{
		{&tablestore.OtsError{Code: "OTSServerBusy"}, "/PutRow", true, false},
		{&tablestore.OtsError{Code: "OTSAuthFailed", HttpStatusCode: 403}, "/GetRow", false, false},
		{&tablestore.OtsError{Code: "OTSTimeout"}, "/GetRow", true, false},
		{&tablestore.OtsError{Code: "OTSTimeout"}, "/PutRow", false, false},
		{&tablestore.OtsError{Code: "OTSConditionCheckFail"}, "/PutRow", false, false},
		{io.ErrUnexpectedEOF, "/PutRow", true, true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), "/PutRow", true, false},
		{&abandonedError{err: context.Canceled}, "/GetRow", false, false},
		{&noReplayError{err: io.EOF}, "/UpdateRow", false, false},
		{tablekit.Errorf(tablekit.ErrUnavailable, "SDK panic"), "/GetRow", false, false},
	} {
		if r, n := retryable(c.err, c.action); r != c.retry || n != c.now {
			t.Errorf("retryable(%v, %s) = %v, %v; want %v, %v", c.err, c.action, r, n, c.retry, c.now)
		}
	}
}
