package localengine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
)

// BenchmarkLocalParallel is mixed point reads and overwrites through
// tablekit.Client on the 1,000,000-row table of the other benchmarks, from
// 1, 2, 4, 8 and 16 goroutines (exactly that many, whatever GOMAXPROCS),
// each on random keys of the whole table. The mixes: read (reads only),
// read95 (5% writes) and read50. It reports reads/s and writes/s; ns/op is
// wall time per operation of all goroutines together, so throughput
// scaling is the ratio of ns/op at 1 goroutine to ns/op at g. cpu-ns/op
// is the CPU time of the whole process per operation: on a machine whose
// cores other processes share, it tells whether more goroutines cost more
// CPU per operation (lock contention), which the wall time cannot.
//
//	go test -run '^$' -bench LocalParallel -benchtime 400000x -count 3 ./localengine/
func BenchmarkLocalParallel(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(3)}}
	for _, mix := range []struct {
		name   string
		writes int // percent
	}{{"read", 0}, {"read95", 5}, {"read50", 50}} {
		for _, g := range []int{1, 2, 4, 8, 16} {
			b.Run(fmt.Sprintf("%s/g%d", mix.name, g), func(b *testing.B) {
				const chunk = 64 // operations a goroutine claims at a time
				var claimed, reads, writes atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				c0, ok0 := benchstat.ProcessCPU(), benchstat.HasProcessCPU
				for w := range g {
					wg.Go(func() {
						r := rand.New(rand.NewPCG(uint64(w), uint64(g)))
						var nr, nw int64
						for {
							from := claimed.Add(chunk) - chunk
							if from >= int64(b.N) {
								break
							}
							for range min(chunk, int64(b.N)-from) {
								k := benchPKs[r.IntN(benchKeys)]
								if r.IntN(100) < mix.writes {
									if err := benchClient.PutRow(ctx, k, cols); err != nil {
										b.Error(err)
										return
									}
									nw++
									continue
								}
								if row, ok, err := benchClient.GetRow(ctx, k); err != nil || !ok || len(row.Columns) != 1 {
									b.Error("GetRow", ok, err)
									return
								}
								nr++
							}
						}
						reads.Add(nr)
						writes.Add(nw)
					})
				}
				wg.Wait()
				c1, ok1 := benchstat.ProcessCPU(), benchstat.HasProcessCPU
				b.StopTimer()
				if ok0 && ok1 {
					b.ReportMetric(float64((c1-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
				s := b.Elapsed().Seconds()
				b.ReportMetric(float64(reads.Load())/s, "reads/s")
				if mix.writes > 0 {
					b.ReportMetric(float64(writes.Load())/s, "writes/s")
				}
			})
		}
	}
}
