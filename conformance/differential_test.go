package conformance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// The local engine against the reference (the fast engine against the
// plain one), and a check that the generator's sequences run clean.
func TestDifferentialLocalEngine(t *testing.T) {
	conformance.RunDifferential(t, localHarness)
}

// More seeds and longer sequences; the local engine runs thousands of
// operations a second.
func TestDifferentialLocalEngineSeeds(t *testing.T) {
	ops := 2000
	if testing.Short() {
		ops = 500
	}
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			conformance.RunDifferentialWith(t, localHarness, conformance.DifferentialOptions{Seed: seed, Ops: ops})
		})
	}
}

// A seed and a count replay the same sequence.
func TestDifferentialReproducible(t *testing.T) {
	o := conformance.DifferentialOptions{Seed: 7, Ops: 400}
	a := conformance.RunDifferentialReport(t, localHarness, o)
	b := conformance.RunDifferentialReport(t, localHarness, o)
	if a.Err != nil || b.Err != nil {
		t.Fatalf("local engine against the reference: %v / %v", a.Err, b.Err)
	}
	if a.Ran != o.Ops || len(a.Trace) != len(b.Trace) {
		t.Fatalf("ran %d ops, want %d; traces have %d and %d lines", a.Ran, o.Ops, len(a.Trace), len(b.Trace))
	}
	for i := range a.Trace {
		if a.Trace[i] != b.Trace[i] {
			t.Fatalf("op #%d differs between two runs of seed %d:\n%s\n%s", i, o.Seed, a.Trace[i], b.Trace[i])
		}
	}
}

// Each broken backend must be caught, with a report that names the seed,
// the op and how to replay it.
func TestDifferentialDetectsBrokenBackends(t *testing.T) {
	cases := []struct {
		name string
		wrap func(tablekit.Backend) tablekit.Backend
	}{
		{"RangeRowsOutOfOrder", func(b tablekit.Backend) tablekit.Backend { return rangeOutOfOrder{b} }},
		{"DropsEvery7thIncrement", func(b tablekit.Backend) tablekit.Backend { return &dropIncrements{Backend: b, every: 7} }},
		{"StaleReads", newStaleReads},
		{"IgnoresIncarnation", func(b tablekit.Backend) tablekit.Backend { return ignoresIncarnation{b} }},
		{"AutoIncrementRepeats", func(b tablekit.Backend) tablekit.Backend { return &aiRepeats{Backend: b} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := conformance.DifferentialOptions{Seed: conformance.DefaultDifferentialSeed, Ops: conformance.DefaultDifferentialOps}
			rep := conformance.RunDifferentialReport(t, brokenHarness(c.wrap), o)
			if rep.Err == nil {
				t.Fatalf("%s: no divergence found in %d ops", c.name, rep.Ran)
			}
			msg := rep.Err.Error()
			for _, want := range []string{
				fmt.Sprintf("at op #%d of %d (seed %d)", rep.Ran-1, o.Ops, o.Seed),
				"diff (-reference +backend)",
				fmt.Sprintf("TABLEKIT_DIFF_SEED=%d TABLEKIT_DIFF_OPS=%d go test -run", o.Seed, rep.Ran),
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("report lacks %q:\n%s", want, msg)
				}
			}
			t.Logf("caught after %d ops, as expected:\n%s", rep.Ran, msg)
		})
	}
}

// A harness whose backends share no storage, and that does not implement
// SharedStore, fails with advice.
func TestDifferentialNeedsSharedStore(t *testing.T) {
	h := conformance.HarnessFunc(func(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
		return localengine.New(), nil
	})
	rep := conformance.RunDifferentialReport(t, h, conformance.DifferentialOptions{Seed: 1, Ops: 10})
	if rep.Err == nil || !strings.Contains(rep.Err.Error(), "implement conformance.SharedStore") {
		t.Fatalf("got %v, want an error telling to implement conformance.SharedStore", rep.Err)
	}
}
