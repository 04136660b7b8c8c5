package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampledb"
	"github.com/tablekit/tablekit/examples/internal/exampletest"
)

// TestRun runs the example on the in-memory engine, as `go run` does by
// default.
func TestRun(t *testing.T) { exampledb.Run(t, "", run) }

// TestBackends runs the example, unchanged, on every backend's emulator.
func TestBackends(t *testing.T) { exampletest.Everywhere(t, run) }
