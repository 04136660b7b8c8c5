package aliyuntablestore_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore/tstest"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/fileengine"
)

// tstestFileHarness is tstestHarness with the tstest server over the file
// engine (nosync) instead of the local engine: its change feed, and so
// Tablestore Stream, is the file engine's.
type tstestFileHarness struct{ tstestHarness }

// NewBackend implements conformance.Harness.
func (h *tstestFileHarness) NewBackend(_ context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
	fe, err := fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	srv, err := tstest.NewServer(tstest.Options{Backend: fe, Clock: clock})
	if err != nil {
		fe.Close()
		return nil, err
	}
	t.Cleanup(func() { srv.Close(); fe.Close() })
	return h.open(&endpoint{url: srv.Endpoint(), srv: srv})
}

// TestConformanceOverFile runs the SPEC suite through the adapter and
// tstest over the file engine: the emulator's Stream API over a durable
// feed, and everything else over another engine than the local one.
func TestConformanceOverFile(t *testing.T) {
	conformance.RunTests(t, &tstestFileHarness{})
}
