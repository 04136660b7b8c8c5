package tablekit_test

// Benchmarks of the change feed (SPEC §15) on the local and file engines,
// side by side in one run:
//
//	go test -run '^$' -bench ChangeFeed -benchtime 20000x -count 3 .
//
// Write/<engine> and Read/<engine> are internal/testkit/feedbench's. The
// file engine runs with nosync=true, so that the figures compare CPU work
// rather than fsyncs (a synced commit costs the same with or without its
// record).

import (
	"path/filepath"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/internal/testkit/feedbench"
	"github.com/tablekit/tablekit/localengine"
)

func feedBenchEngines(b *testing.B) map[string]func() tablekit.Backend {
	return map[string]func() tablekit.Backend{
		"local": func() tablekit.Backend { return localengine.New() },
		"file": func() tablekit.Backend {
			e, err := fileengine.Open(filepath.Join(b.TempDir(), "db"), &fileengine.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return e
		},
	}
}

func BenchmarkChangeFeed(b *testing.B) {
	for _, name := range []string{"local", "file"} {
		open := feedBenchEngines(b)[name]
		for _, run := range []struct {
			kind  string
			bench func(*testing.B, *tablekit.Client)
		}{{"Write", feedbench.Write}, {"Read", feedbench.Read}} {
			b.Run(run.kind+"/"+name, func(b *testing.B) {
				db := tablekit.NewClient(open())
				defer db.Close()
				run.bench(b, db)
			})
		}
	}
}
