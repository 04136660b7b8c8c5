package conformance

import "testing"

// Entry points for the package's own tests of its checkers: they return
// what the checkers found instead of failing the test, so a test can prove
// that a broken backend is caught.

type DiffReport = diffReport

// RunDifferentialReport runs the differential test with exactly o (the
// environment overrides do not apply) and returns its report.
func RunDifferentialReport(t testing.TB, h Harness, o DifferentialOptions) DiffReport {
	o.ignoreEnv = true
	return runDifferential(t, h, o)
}
