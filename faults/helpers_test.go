package faults_test

import (
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
)

// helperCases are the batch helpers' paths (none yet).
func helperCases(open func(*testing.T) tablekit.Backend, rules func(faults.Op, bool) []faults.Rule) []struct {
	name  string
	open  func(t *testing.T) tablekit.Backend
	rules []faults.Rule
	path  writeBatch
} {
	return nil
}
