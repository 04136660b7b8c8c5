package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// binary is the tablekit command built once for the tests.
var tkBinary string

// tmpRoot is a directory removed after the tests.
var tmpRoot string

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "tablekit-cli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	tkBinary = filepath.Join(dir, "tablekit")
	// No symbol table or DWARF: the binary links faster.
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", tkBinary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building tablekit:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	stopBrowser()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// tk runs the binary with args (TABLEKIT_URL set to url unless empty) and
// stdin from in.
func tk(t *testing.T, url, in string, args ...string) result {
	t.Helper()
	return tkEnv(t, nil, url, in, args...)
}

// tkEnv is tk with more environment variables (NAME=VALUE).
func tkEnv(t *testing.T, env []string, url, in string, args ...string) result {
	t.Helper()
	cmd := exec.Command(tkBinary, args...)
	cmd.Env = append(append(os.Environ(), "TABLEKIT_URL="+url), env...)
	cmd.Stdin = strings.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running tablekit %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// ok runs the binary and fails the test unless it exits 0.
func ok(t *testing.T, url string, args ...string) string {
	t.Helper()
	r := tk(t, url, "", args...)
	if r.code != 0 {
		t.Fatalf("tablekit %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// fileURL is a file:// URL of a new directory (nosync: the tests do not
// need power-loss durability, and a killed process loses nothing with it).
func fileURL(t *testing.T) string {
	return "file://" + filepath.Join(t.TempDir(), "db") + "?nosync=true"
}

// golden compares got with testdata/NAME, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
