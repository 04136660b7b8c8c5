package conformance_test

import (
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
)

func TestLinearizabilityLocalEngine(t *testing.T) {
	conformance.RunLinearizability(t, localHarness)
}

// Each broken backend must be caught.
func TestLinearizabilityDetectsBrokenBackends(t *testing.T) {
	cases := []struct {
		name string
		wrap func(tablekit.Backend) tablekit.Backend
		want string
	}{
		{"DropsEvery7thIncrement", func(b tablekit.Backend) tablekit.Backend { return &dropIncrements{Backend: b, every: 7} }, "lost update"},
		{"StaleReads", newStaleReads, "not linearizable"},
		{"RacyReadModifyWriteIncrement", func(b tablekit.Backend) tablekit.Backend { return racyIncrements{b} }, "lost update"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := conformance.RunLinearizabilityErr(t, brokenHarness(c.wrap), conformance.LinearizabilityOptions{})
			if err == nil {
				t.Fatalf("%s: the check passed", c.name)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("report lacks %q:\n%v", c.want, err)
			}
			t.Logf("caught, as expected:\n%v", err)
		})
	}
}
