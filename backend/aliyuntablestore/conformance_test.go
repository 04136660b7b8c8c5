package aliyuntablestore_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// tsemuHarness gives the conformance suite an adapter talking HTTP,
// through the real SDK, to a fresh tsemu server that reads the suite's
// clock, optionally behind a proxy (wrap). It implements
// conformance.SharedStore: a shared backend is a new adapter, with its own
// SDK client and connections, on the same endpoint, as another process
// would open it.
type tsemuHarness struct {
	wrap      func(http.Handler) http.Handler
	endpoints sync.Map // a backend it returned -> *endpoint
}

// endpoint is where a harness backend's server answers.
type endpoint struct {
	url string
	srv *tsemu.Server
}

func (h *tsemuHarness) open(e *endpoint) (tablekit.Backend, error) {
	b, err := aliyuntablestore.Open(context.Background(), &aliyuntablestore.Options{Endpoint: e.url, Instance: e.srv.InstanceName(), AccessKeyID: e.srv.AccessKeyID(), AccessKeySecret: e.srv.AccessKeySecret()})
	if err != nil {
		return nil, err
	}
	h.endpoints.Store(b, e)
	return b, nil
}

// NewBackend implements conformance.Harness.
func (h *tsemuHarness) NewBackend(_ context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), Clock: clock})
	if err != nil {
		return nil, err
	}
	t.Cleanup(srv.Close)
	e := &endpoint{url: srv.Endpoint(), srv: srv}
	if h.wrap != nil {
		p := httptest.NewServer(h.wrap(srv.Handler()))
		t.Cleanup(p.Close)
		e.url = p.URL
	}
	return h.open(e)
}

// ShareBackend implements conformance.SharedStore.
func (h *tsemuHarness) ShareBackend(_ context.Context, _ testing.TB, _ tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	e, ok := h.endpoints.Load(b)
	if !ok {
		return nil, fmt.Errorf("ShareBackend: %T is not a backend of this harness", b)
	}
	return h.open(e.(*endpoint))
}

// TestConformance runs the whole SPEC suite, the differential test against
// the reference and the linearizability check through the real SDK over
// HTTP.
func TestConformance(t *testing.T) {
	conformance.RunTests(t, &tsemuHarness{})
}

// TestConformanceStrict runs the suite again through a proxy that makes
// tsemu drop rows the way the real service documents (a read with
// columns_to_get or time_range that selects no cell of a row returns no
// row), so the adapter's answers do not depend on tsemu returning them.
func TestConformanceStrict(t *testing.T) {
	var dropped atomic.Int64
	conformance.RunTests(t, &tsemuHarness{wrap: func(h http.Handler) http.Handler { return strictHandler(h, &dropped) }})
}
