package tkycsb_test

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	tkycsb "github.com/tablekit/tablekit/ycsb"
)

var (
	benchRecords   = flag.Int64("ycsb.records", 1000, "records BenchmarkYCSB loads into each target")
	benchWorkloads = flag.String("ycsb.workloads", "A,B,C,F,D,E", "workloads of BenchmarkYCSB, in run order (D and E insert)")
	benchRound     = flag.Duration("ycsb.round", time.Second, "how long BenchmarkYCSB runs each target in one round")
)

// BenchmarkYCSB runs YCSB's workloads at one thread on targets side by
// side in one run, for the ratios of issue 22 (figures: README.md,
// "Ratios"):
//
//   - Local: the local engine (mem://) against Bigtable on bttest, through
//     the tablekit adapter and through the raw client; it reports
//     local/adapter and local/raw, the local engine's throughput over
//     bttest's.
//   - DynamoDB: the adapter against the raw SDK client (NewRawDynamoDB),
//     each on its own dynalite (npm ci at the repository root); it
//     reports raw/adapter, the raw client's throughput over the adapter's
//     (above 1: the adapter is slower), and shaped/adapter: a raw client
//     whose updates carry the adapter's conditions and counters
//     (RawDynamoDB.AdapterShaped), which separates what dynalite charges
//     for evaluating them from the adapter's own work.
//
// Each target is loaded with -ycsb.records records, then each workload
// runs b.N rounds: a round runs the workload on every target in turn for
// -ycsb.round, the order of the targets reversed from one round to the
// next, so that the sides meet the machine's load alike (a run of a fixed
// time, not of a fixed count, so that go-ycsb's start of a run weighs
// alike on a fast and a slow target); throughput is operations over the
// time the runs took; and, per operation, the pair's ratio of p50
// latencies (OP-p50:A/B, the median over the rounds of each side's p50),
// which a preemption moves less. go-ycsb's own work (key choice, values) is in every
// operation, on both sides.
//
//	go test -run '^$' -bench 'YCSB/Local' -benchtime 4x -count 3 . -args -ycsb.records=5000
//	go test -run '^$' -bench 'YCSB/DynamoDB' -benchtime 4x -count 3 . -args -ycsb.records=5000
func BenchmarkYCSB(b *testing.B) {
	ctx := context.Background()
	b.Run("Local", func(b *testing.B) {
		bt, err := tkycsb.BigtableTargets()
		if err != nil {
			b.Fatal(err)
		}
		ycsbPairs(b, ctx, []tkycsb.Target{tkycsb.MemTarget(), bt[0], bt[1]},
			[]string{"local", "adapter", "raw"}, [][2]int{{0, 1}, {0, 2}})
	})
	b.Run("DynamoDB", func(b *testing.B) {
		if _, err := os.Stat("../node_modules/dynalite"); err != nil && os.Getenv("CI") != "true" {
			b.Skip("dynalite is not installed (npm ci at the repository root)")
		}
		dt, err := tkycsb.DynamoDBTargetsShaped()
		if err != nil {
			b.Fatal(err)
		}
		ycsbPairs(b, ctx, dt, []string{"adapter", "raw", "shaped", "itemterm"}, [][2]int{{1, 0}, {2, 0}, {3, 0}, {1, 3}})
	})
}

// ycsbPairs loads targets (named names), runs each workload on them and
// reports each target's ops/s and, for each pair {i, j}, names[i]/names[j]
// of their throughputs.
func ycsbPairs(b *testing.B, ctx context.Context, targets []tkycsb.Target, names []string, pairs [][2]int) {
	dbs := make([]tkycsb.Binding, len(targets))
	defer func() {
		for i, t := range targets {
			if dbs[i] != nil {
				dbs[i].Close()
			}
			if t.Close != nil {
				t.Close()
			}
		}
	}()
	for i, t := range targets {
		db, err := t.Open(ctx)
		if err != nil {
			b.Fatal(names[i], err)
		}
		dbs[i] = db
		if err := tkycsb.Load(ctx, db, tkycsb.Config{Records: *benchRecords, Threads: 8}); err != nil {
			b.Fatal(names[i], err)
		}
	}
	for _, w := range strings.Split(*benchWorkloads, ",") {
		b.Run(w, func(b *testing.B) {
			ops := make([]int64, len(targets))
			spent := make([]time.Duration, len(targets))
			p50s := make([]map[string][]time.Duration, len(targets)) // per operation, one a round
			for i := range p50s {
				p50s[i] = map[string][]time.Duration{}
			}
			for r := range b.N {
				for j := range targets {
					i := j
					if r%2 == 1 {
						i = len(targets) - 1 - j
					}
					res, err := tkycsb.Run(ctx, dbs[i], w, tkycsb.Config{Records: *benchRecords, Threads: 1, Duration: *benchRound})
					if err == nil && res.Errors > 0 {
						err = res.FirstErr
					}
					if err != nil {
						b.Fatal(names[i], w, err)
					}
					ops[i] += res.Ops
					spent[i] += res.Elapsed
					for op, l := range res.PerOp {
						p50s[i][op] = append(p50s[i][op], l.P50)
					}
				}
			}
			rate := make([]float64, len(targets))
			for i := range targets {
				rate[i] = float64(ops[i]) / spent[i].Seconds()
				b.ReportMetric(rate[i], names[i]+"-ops/s")
			}
			for _, p := range pairs {
				b.ReportMetric(rate[p[0]]/rate[p[1]], names[p[0]]+"/"+names[p[1]])
				// The same comparison in latency: the median over the
				// rounds of each operation's p50, p[1]'s over p[0]'s
				// (robust to a preemption, which a throughput is not).
				for op, l := range p50s[p[1]] {
					if r := p50s[p[0]][op]; len(r) > 0 {
						b.ReportMetric(float64(benchstat.Median(l))/float64(benchstat.Median(r)), op+"-p50:"+names[p[1]]+"/"+names[p[0]])
					}
				}
			}
		})
	}
}
