package localengine_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// TestConformance runs the whole SPEC suite, the differential test and the
// linearizability check against the local engine.
func TestConformance(t *testing.T) {
	conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		return localengine.New(), nil
	}))
}
