package gcpbigtable_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/conformance"
)

// TestConformance runs the whole SPEC suite, the differential test against
// the reference and the linearizability check on one in-process bttest.
// GC is off: the suite's clocks are not the wall clock (its own starts in
// 2031, some tests run in 2016) and bttest's GC loop collects by wall-clock
// age (TestGC covers the policies).
func TestConformance(t *testing.T) {
	srv := newServer(t)
	conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		cfg := gcpbigtable.Options{GC: gcpbigtable.GCOff}
		return openBackend(t, srv, cfg), nil
	}))
}
