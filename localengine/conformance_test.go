package localengine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// TestConformance runs the whole SPEC suite, the differential test and the
// linearizability check against the local engine.
func TestConformance(t *testing.T) {
	conformance.RunTests(t, harness{})
}

// TestConformanceSmallSpans runs the suite against engines whose tables
// split a span beyond 3 rows: every range read crosses span boundaries,
// and writes split and merge spans as they go (span.go).
func TestConformanceSmallSpans(t *testing.T) {
	conformance.RunTests(t, harness{spanRows: 3})
}

// harness gives the suite a new engine per backend, and implements
// conformance.SharedStore: another "process" on the same store is the same
// engine, behind a Close that leaves it open. spanRows, when set, is the
// engines' span size (a test hook).
type harness struct{ spanRows int }

// NewBackend implements conformance.Harness.
func (h harness) NewBackend(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
	if h.spanRows > 0 {
		return localengine.NewWithSpanRows(h.spanRows), nil
	}
	return localengine.New(), nil
}

// ShareBackend implements conformance.SharedStore.
func (harness) ShareBackend(_ context.Context, _ testing.TB, _ tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	switch b := b.(type) {
	case *localengine.Engine:
		return shared{b}, nil
	case shared:
		return b, nil
	}
	return nil, fmt.Errorf("ShareBackend: %T is not a local engine", b)
}

// shared is an engine another backend owns: its Close does nothing, so
// that closing one client does not close the store under the other. The
// engine has no batch calls, so shared needs none.
type shared struct{ *localengine.Engine }

// Close leaves the engine open for its owner.
func (shared) Close() error { return nil }
