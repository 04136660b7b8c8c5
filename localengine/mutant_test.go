package localengine_test

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// spanMutantEnv marks the child process of TestSpanMutantCaught.
const spanMutantEnv = "TABLEKIT_LOCALENGINE_SPAN_MUTANT"

// TestSpanMutantCaught shows that the differential test, whose reference
// is not this engine, catches a bug planted in this engine's span code (a
// forward range walk that skips the first row of the next span: mutant.go):
// in a child process, with the bug planted, the differential test against
// engines of 3-row spans must fail, reporting a divergence from the
// reference. Without the bug, the same run passes: it is part of
// TestConformanceSmallSpans.
//
// By hand: TABLEKIT_LOCALENGINE_SPAN_MUTANT=1 go test -run '^TestSpanMutantChild$' ./localengine
func TestSpanMutantCaught(t *testing.T) {
	if os.Getenv(spanMutantEnv) != "" {
		t.Skip("in the mutant's child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpanMutantChild$", "-test.count=1")
	for _, kv := range os.Environ() { // the default seed and length, whatever the caller's
		if !strings.HasPrefix(kv, "TABLEKIT_DIFF_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, spanMutantEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the differential test passed with the span mutant planted (err %v):\n%s", err, out)
	}
	for _, want := range []string{
		"--- FAIL: TestSpanMutantChild",
		"differential: the backend diverges from the reference",
		"diff (-reference +backend)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the child's output lacks %q:\n%s", want, out)
		}
	}
	if m := regexp.MustCompile(`differential: the backend diverges[^\n]*\n[^\n]*`).Find(out); m != nil {
		t.Logf("caught, as expected:\n%s", m)
	}
}

// TestSpanMutantChild is TestSpanMutantCaught's child: the differential
// test with the span mutant planted.
func TestSpanMutantChild(t *testing.T) {
	if os.Getenv(spanMutantEnv) == "" {
		t.Skip("only in TestSpanMutantCaught's child process")
	}
	defer localengine.PlantSpanMutant()()
	conformance.RunDifferential(t, harness{spanRows: 3})
}
