package fileengine_test

import (
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures (internal/testkit/indexbench).
func BenchmarkIndex(b *testing.B) { indexbench.Run(b, openBench) }

// BenchmarkIndexBackfill: AddIndex's fill in rows/s (-benchtime 1x).
func BenchmarkIndexBackfill(b *testing.B) { indexbench.Backfill(b, openBench) }

func openBench(b *testing.B) tablekit.Backend {
	{
		e, err := fileengine.Open(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = e.Close() })
		return e
	}
}
