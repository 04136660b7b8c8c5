package aliyuntablestore_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
)

// The SDK's HTTPTimeout.RequestTimeout, which the adapter's transport
// applies, bounds the wait for the answer's headers and the reading of
// its body; the error reads and matches as http.Client's own timeout:
// context.DeadlineExceeded, Timeout() true, not retried. A call within the
// timeout is unaffected, and a call's own context still ends it first.
func TestRequestTimeout(t *testing.T) {
	srv := newServer(t)
	createUsers(t, srv)
	p := newProxy(t, srv)
	cfg := aliyuntablestore.DefaultConfig()
	cfg.HTTPTimeout.RequestTimeout = 150 * time.Millisecond
	db := tablekit.NewClient(openAt(t, srv, p.URL, cfg))
	users := db.Table("users")
	ctx := context.Background()
	if err := users.PutRow(ctx, userKey("a"), []tablekit.Column{{Name: "n", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}

	check := func(name string, err error, elapsed time.Duration, wantMsg string) {
		t.Helper()
		var ne net.Error
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s: error %v, want a timeout matching context.DeadlineExceeded that says %q", name, err, wantMsg)
		}
		if elapsed < 140*time.Millisecond || elapsed > 1500*time.Millisecond {
			t.Errorf("%s: returned after %v, want about the 150 ms timeout (and no retry)", name, elapsed)
		}
	}

	// No answer: the wait for the headers times out.
	p.on("/GetRow", p.stall(3*time.Second))
	p.seen.Store(0)
	t0 := time.Now()
	_, _, err := users.GetRow(ctx, userKey("a"))
	check("headers", err, time.Since(t0), "awaiting headers")
	if n := p.seen.Load(); n != 1 {
		t.Errorf("headers: %d attempts, want 1 (a timeout is not retried)", n)
	}
	if !eventually(2*time.Second, func() bool { return p.aborted.Load() == 1 }) {
		t.Errorf("the timed-out request was not aborted on the wire")
	}

	// Headers, then a body that stalls.
	p.on("/GetRow", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte{1, 2, 3})
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
		return true
	})
	t0 = time.Now()
	_, _, err = users.GetRow(ctx, userKey("a"))
	check("body", err, time.Since(t0), "")

	// A call's own shorter deadline wins, and is reported as itself.
	p.on("/GetRow", p.stall(3*time.Second))
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	t0 = time.Now()
	_, _, err = users.GetRow(cctx, userKey("a"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 140*time.Millisecond {
		t.Errorf("call deadline: %v after %v, want the call's own deadline at 30 ms", err, time.Since(t0))
	}

	// Within the timeout, calls work, and a slow-but-in-time answer too.
	p.on("/GetRow", p.stall(50*time.Millisecond))
	for range 3 {
		if _, found, err := users.GetRow(ctx, userKey("a")); err != nil || !found {
			t.Fatalf("GetRow within the timeout: %v %v", found, err)
		}
	}
	p.hook.Store(nil)
}
