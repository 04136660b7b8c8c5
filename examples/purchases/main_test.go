package main

import (
	"testing"

	"github.com/tablekit/tablekit/examples/internal/exampledb"
)

func TestRun(t *testing.T) { exampledb.Run(t, run) }
