package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tablekit/tablekit"

// testOnly reports whether pkg may be imported only by tests: the test
// kit, and the examples' test helper.
func testOnly(pkg string) bool {
	return pkg == module+"/internal/testkit" || strings.HasPrefix(pkg, module+"/internal/testkit/") ||
		pkg == module+"/examples/internal/exampletest"
}

// TestNeverShipped checks that no package of the module imports the test
// kit outside its _test.go files (except the test kit itself and test
// helpers), so that no library build links it.
func TestNeverShipped(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkgs++
		if testOnly(f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if testOnly(imp) {
				t.Errorf("%s imports %s outside its tests", f[0], imp)
			}
		}
	}
	if pkgs < 20 {
		t.Fatalf("go list saw %d packages; is this the module?\n%s", pkgs, out)
	}
}

// TestReadmeLayout checks that the README's layout section names every
// package of the module, so that a new package cannot go unlisted.
func TestReadmeLayout(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	if end := strings.Index(layout, "\n## "); end >= 0 {
		layout = layout[:end]
	}
	listed := map[string]bool{}
	for line := range strings.Lines(layout) {
		if f := strings.Fields(line); len(f) > 0 {
			listed[f[0]] = true
		}
	}
	out, err := exec.Command("go", "list", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for pkg := range strings.Lines(string(out)) {
		dir := strings.TrimPrefix(strings.TrimSpace(pkg), module)
		if dir == "" {
			dir = "."
		} else {
			dir = strings.TrimPrefix(dir, "/") + "/"
		}
		if !listed[dir] {
			t.Errorf("README.md's layout section does not list %s", dir)
		}
	}
}
