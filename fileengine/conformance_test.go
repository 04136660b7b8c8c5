package fileengine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/fileengine"
)

// TestConformance runs the whole SPEC suite, the differential test against
// the local engine and the linearizability check against engines on real
// pebble directories.
func TestConformance(t *testing.T) {
	conformance.RunTests(t, harness{})
}

// harness opens a new engine in a new directory per backend, and
// implements conformance.SharedStore: another "process" on the same store
// is the same engine (a directory is opened by one process at a time),
// behind a Close that leaves it open.
type harness struct{}

// NewBackend implements conformance.Harness.
func (harness) NewBackend(_ context.Context, t testing.TB, _ tablekit.Clock) (tablekit.Backend, error) {
	return fileengine.Open(t.TempDir(), nil)
}

// ShareBackend implements conformance.SharedStore.
func (harness) ShareBackend(_ context.Context, _ testing.TB, _ tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	switch b := b.(type) {
	case *fileengine.Engine:
		return shared{b}, nil
	case shared:
		return b, nil
	}
	return nil, fmt.Errorf("ShareBackend: %T is not a file engine", b)
}

// shared is an engine another backend owns: its Close does nothing, so
// that closing one client does not close the store under the other. It
// keeps the engine's BatchWriteRow.
type shared struct{ *fileengine.Engine }

// Close leaves the engine open for its owner.
func (shared) Close() error { return nil }
