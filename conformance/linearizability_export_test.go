package conformance

import "testing"

// RunLinearizabilityErr returns what RunLinearizabilityWith would fail with.
func RunLinearizabilityErr(t testing.TB, h Harness, o LinearizabilityOptions) error {
	return runLinearizability(t, h, o)
}
