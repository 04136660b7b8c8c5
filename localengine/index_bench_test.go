package localengine_test

import (
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
	"github.com/tablekit/tablekit/localengine"
)

// BenchmarkIndex: SPEC §16's figures (internal/testkit/indexbench).
func BenchmarkIndex(b *testing.B) {
	indexbench.Run(b, func(*testing.B) tablekit.Backend { return localengine.New() })
}

// BenchmarkIndexBackfill: AddIndex's fill in rows/s (-benchtime 1x).
func BenchmarkIndexBackfill(b *testing.B) {
	indexbench.Backfill(b, func(*testing.B) tablekit.Backend { return localengine.New() })
}
