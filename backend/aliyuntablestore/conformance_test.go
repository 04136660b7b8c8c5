package aliyuntablestore_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/backend/aliyuntablestore/tstest"
	"github.com/tablekit/tablekit/conformance"
)

// harness gives the conformance suite an adapter talking HTTP, through the
// real SDK, to a fresh tstest server that reads the suite's clock.
var harness = conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
	srv, err := tstest.NewServer(tstest.Options{Clock: clock})
	if err != nil {
		return nil, err
	}
	t.Cleanup(srv.Close)
	return aliyuntablestore.New(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret())
})

// TestConformance runs the whole SPEC suite, the differential test against
// the local engine and the linearizability check through the real SDK over
// HTTP.
func TestConformance(t *testing.T) {
	conformance.RunTests(t, harness)
}

// TestConformanceStrict runs the suite again through a proxy that makes
// tstest drop rows the way the real service documents (a read with
// columns_to_get or time_range that selects no cell of a row returns no
// row), so the adapter's answers do not depend on tstest returning them.
func TestConformanceStrict(t *testing.T) {
	conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		srv, err := tstest.NewServer(tstest.Options{Clock: clock})
		if err != nil {
			return nil, err
		}
		t.Cleanup(srv.Close)
		var dropped atomic.Int64
		p := httptest.NewServer(strictHandler(srv.Handler(), &dropped))
		t.Cleanup(p.Close)
		return aliyuntablestore.New(p.URL, srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret())
	}))
}
