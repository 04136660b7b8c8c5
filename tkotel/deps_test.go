package tkotel_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The root package, what every program imports, must not depend on
// OpenTelemetry: only programs that import tkotel pay for it.
func TestRootDoesNotImportOpenTelemetry(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/tablekit/tablekit").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave %d packages: %q", len(deps), out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "go.opentelemetry.io/") {
			t.Errorf("package tablekit depends on %s", d)
		}
	}
}
