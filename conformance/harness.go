// Package conformance is SPEC.md as tests. Any backend — the ones in this
// module or a third party's — proves it honours the contract with
//
//	func TestConformance(t *testing.T) {
//		conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
//			return mybackend.Open(...)
//		}))
//	}
//
// RunTests runs every SPEC section, a seeded randomized differential test
// against the local engine, and a linearizability check of concurrent
// conditional writes and increments (see RunDifferential and
// RunLinearizability to run those alone). Every assertion reports through
// t.Errorf, so one run lists every failure, in the manner of
// testing/fstest.TestFS.
package conformance

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
)

// Harness makes backends for the suite.
type Harness interface {
	// NewBackend returns a backend to test. The suite drives time through
	// clock (a *tablekit.ManualClock it owns): a backend whose server side
	// reads time (an emulator that validates versions, say) must read it
	// from clock. Backends returned by successive calls may share storage
	// (one emulator process); the suite gives every table a unique name and
	// never assumes the store is empty. The suite closes what it gets.
	NewBackend(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error)
}

// HarnessFunc adapts a function to Harness.
type HarnessFunc func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error)

// NewBackend calls f.
func (f HarnessFunc) NewBackend(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
	return f(ctx, t, clock)
}

// NarrowLimits is implemented by a Harness whose backend refuses some rows
// that SPEC allows because its native limits are narrower (DynamoDB's
// 400 KB items and 1024-byte sort keys, say). Such refusals must still be
// ErrInvalidArgument naming the table, with nothing written. A Harness that
// does not implement it must store every row SPEC allows.
type NarrowLimits interface {
	// NarrowLimits describes the backend's narrower limits.
	NarrowLimits() string
}

// WithNarrowLimits returns h declaring the narrower limits described by why.
func WithNarrowLimits(h Harness, why string) Harness { return narrowHarness{h, why} }

type narrowHarness struct {
	Harness
	why string
}

func (n narrowHarness) NarrowLimits() string { return n.why }
