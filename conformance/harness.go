// Package conformance is for backend authors, built-in and third-party:
// SPEC.md as tests. Any backend — the ones in this
// module or a third party's — proves it honours the contract with
//
//	func TestConformance(t *testing.T) {
//		conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
//			return mybackend.Open(...)
//		}))
//	}
//
// RunTests runs every SPEC section, a seeded randomized differential test
// against a plain reference backend, and a linearizability check of concurrent
// conditional writes and increments (see RunDifferential and
// RunLinearizability to run those alone). Some cases open a second backend
// on the store of the first, as another process would: a Harness whose
// successive NewBackend calls do not share storage implements
// [SharedStore]. Every assertion reports through
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
// The result implements SharedStore when h does.
func WithNarrowLimits(h Harness, why string) Harness {
	if s, ok := h.(SharedStore); ok {
		return narrowSharedHarness{narrowHarness{h, why}, s}
	}
	return narrowHarness{h, why}
}

type narrowHarness struct {
	Harness
	why string
}

func (n narrowHarness) NarrowLimits() string { return n.why }

type narrowSharedHarness struct {
	narrowHarness
	s SharedStore
}

func (n narrowSharedHarness) ShareBackend(ctx context.Context, t testing.TB, clock tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	return n.s.ShareBackend(ctx, t, clock, b)
}

// SharedStore is implemented by a Harness that can open a second backend
// over the store of one it made, as another process would: the second
// backend shares the tables and rows of b but none of its caches or
// connections, and closing either leaves the other working. The suite uses
// it for SPEC §3's rules across clients (a table deleted and created again,
// options changed by another client) and for calls after Close.
//
// A Harness that does not implement it gets NewBackend called again, which
// is enough when successive backends share storage (one emulator process
// behind every call). The suite checks that the second backend sees the
// first one's tables and fails, telling the harness author to implement
// SharedStore, when it does not.
type SharedStore interface {
	// ShareBackend returns a new backend over b's store. The suite closes
	// what it gets, and closes b separately.
	ShareBackend(ctx context.Context, t testing.TB, clock tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error)
}

// shareBackend opens a second backend on b's store: h's ShareBackend, or
// NewBackend again.
func shareBackend(ctx context.Context, t testing.TB, h Harness, clock tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	if s, ok := h.(SharedStore); ok {
		return s.ShareBackend(ctx, t, clock, b)
	}
	return h.NewBackend(ctx, t, clock)
}

// notSharedHelp is how the suite tells a harness author that the second
// backend does not see the first one's store.
const notSharedHelp = "the second backend does not see the first one's tables: successive Harness.NewBackend calls do not share storage; " +
	"implement conformance.SharedStore on the Harness (ShareBackend returns a new backend over the same store, as another process would open it)"
