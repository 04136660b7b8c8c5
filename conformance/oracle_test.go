package conformance_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/conformance/internal/oracle"
)

// TestConformanceOracle runs the whole suite (every SPEC section, the
// differential test and the linearizability check) against the reference
// the differential test compares every backend with: the oracle answers to
// SPEC too, not only to itself.
func TestConformanceOracle(t *testing.T) {
	conformance.RunTests(t, oracleHarness{})
}

// oracleHarness gives every caller a new reference store; a second backend
// on the same store is the same store, behind a Close that leaves it open.
type oracleHarness struct{}

// NewBackend implements conformance.Harness.
func (oracleHarness) NewBackend(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
	return oracle.New(), nil
}

// ShareBackend implements conformance.SharedStore.
func (oracleHarness) ShareBackend(_ context.Context, _ testing.TB, _ tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	switch b := b.(type) {
	case *oracle.Store:
		return oracleShared{b}, nil
	case oracleShared:
		return b, nil
	}
	return nil, fmt.Errorf("ShareBackend: %T is not a reference store", b)
}

// oracleShared is a store another backend owns: closing it does nothing.
type oracleShared struct{ *oracle.Store }

// Close leaves the store open for its owner.
func (oracleShared) Close() error { return nil }
