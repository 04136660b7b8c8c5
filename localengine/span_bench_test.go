package localengine

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// BenchmarkSpanPut is BenchmarkScalePut's puts (overwrites of random rows
// of a -rows table of YCSB-shaped rows with fresh ones, from 1 and from 2
// goroutines) on two tables side by side in one run: "one", whose single
// span never splits (one B-tree under one lock, as the table was before
// spans), and "spans" (span.go's default); and "apart", the ceiling: 2
// goroutines each on a table of its own (spans and a third table), whose
// g2/g1 is against spans' g1. The 5 runs (side x goroutines) and the
// CPU-only spin loop of 1 and 2 goroutines alternate in 8 phases, the
// order rotating, so every side sees the same machine. It reports each
// side's g2/g1, spin-g2/g1, and spans/one: the 2-goroutine throughput of
// spans over one's.
//
//	go test -run '^$' -bench SpanPut -count 3 ./localengine/ -rows=100000
func BenchmarkSpanPut(b *testing.B) {
	ctx := context.Background()
	load := func(spanRows int) *tablekit.Table {
		e := New()
		e.spanRows = spanRows
		db := tablekit.NewClient(e)
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "ycsb",
			Key:     tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}},
			Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}}); err != nil {
			b.Fatal(err)
		}
		tbl := db.Table("ycsb")
		r := rand.New(rand.NewPCG(1, 2))
		for i := range *scaleRows {
			if err := tbl.PutRow(ctx, scaleKey(i), scaleCells(r, 0)); err != nil {
				b.Fatal(err)
			}
		}
		return tbl
	}
	sides := []*tablekit.Table{load(1 << 62), load(0), load(0)} // one, spans, the other table of apart
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([]tablekit.PrimaryKey, scaleKeys)
	for i := range keys {
		keys[i] = scaleKey(r.IntN(*scaleRows))
	}
	prep := make([][]tablekit.Column, 256)
	for i := range prep {
		prep[i] = scaleCells(r, 0)
	}
	const phases = 8
	per := max(b.N/phases, 1)
	var spent [3][3]time.Duration
	run := func(side, g, phase int) {
		var wg sync.WaitGroup
		t0 := time.Now()
		for w := range g {
			wg.Go(func() {
				for i := w; i < per; i += g {
					j := phase*per + i
					tbl := sides[side]
					if side == 2 { // apart: goroutine w on a table of its own
						tbl = sides[1+w]
					}
					if err := tbl.PutRow(ctx, keys[j%scaleKeys], prep[j%len(prep)]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		spent[side][g] += time.Since(t0)
	}
	var spin [3]time.Duration
	spinRun := func(g int) { spin[g] += spinTime(g) }
	type step struct{ side, g int }
	steps := []step{{0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 2}, {-1, 1}, {-1, 2}}
	b.ResetTimer()
	for p := range phases {
		for i := range steps {
			s := steps[(i+p)%len(steps)]
			if s.side < 0 {
				spinRun(s.g)
			} else {
				run(s.side, s.g, p)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(spin[1].Seconds()/spin[2].Seconds(), "spin-g2/g1")
	b.ReportMetric(spent[0][1].Seconds()/spent[0][2].Seconds(), "one-g2/g1")
	b.ReportMetric(spent[1][1].Seconds()/spent[1][2].Seconds(), "spans-g2/g1")
	b.ReportMetric(spent[1][1].Seconds()/spent[2][2].Seconds(), "apart-g2/g1")
	b.ReportMetric(spent[0][2].Seconds()/spent[1][2].Seconds(), "spans/one-g2")
	b.ReportMetric(spent[0][1].Seconds()/spent[1][1].Seconds(), "spans/one-g1")
}
