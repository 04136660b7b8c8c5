package gcpbigtable_test

import (
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures on bttest (internal/testkit/indexbench).
func BenchmarkIndex(b *testing.B) {
	srv := newServer(b)
	indexbench.Run(b, func(b *testing.B) tablekit.Backend {
		return openBackend(b, srv, gcpbigtable.Options{GC: gcpbigtable.GCOff})
	})
}
