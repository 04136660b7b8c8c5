package aliyuntablestore_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/tsemu"
)

// tsemuFileHarness is tsemuHarness with the tsemu server over the file
// engine (nosync) instead of the local engine: its change feed, and so
// Tablestore Stream, is the file engine's.
type tsemuFileHarness struct{ tsemuHarness }

// NewBackend implements conformance.Harness.
func (h *tsemuFileHarness) NewBackend(_ context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
	fe, err := fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
	if err != nil {
		return nil, err
	}
	srv, err := tsemu.NewServer(tsemu.Options{Backend: fe, Clock: clock})
	if err != nil {
		fe.Close()
		return nil, err
	}
	t.Cleanup(func() { srv.Close(); fe.Close() })
	return h.open(&endpoint{url: srv.Endpoint(), srv: srv})
}

// TestConformanceOverFile runs the SPEC suite through the adapter and
// tsemu over the file engine: the emulator's Stream API over a durable
// feed, and everything else over another engine than the local one.
func TestConformanceOverFile(t *testing.T) {
	conformance.RunTests(t, &tsemuFileHarness{})
}
