package gcpbigtable_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// BenchmarkAutoIncrementPut compares a PutRow whose key holds
// tablekit.AutoIncrement (a ReadModifyWriteRow on the partition's counter
// row, then a CheckAndMutateRow) with a plain PutRow of an explicit key
// (one MutateRow), the same row (bench.cols: 10 String columns of 100
// bytes) into one table on one bttest, alternating which goes first.
// It reports each side's time per op, their ratio auto/plain, and the
// RPCs each makes:
//
//	go test -run '^$' -bench BenchmarkAutoIncrementPut -benchtime 2000x ./backend/gcpbigtable/
func BenchmarkAutoIncrementPut(b *testing.B) {
	ctx := context.Background()
	var rpcs atomic.Int64
	srv := newServer(b)
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst", GC: gcpbigtable.GCOff, ClientOptions: append(emulatorOptions(srv), countRPCs(&rpcs)...)}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	be, err := gcpbigtable.Open(ctx, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	db := tablekit.NewClient(be)
	b.Cleanup(func() { db.Close() })
	key := tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger, AutoIncrement: true}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "auto", Key: key}); err != nil {
		b.Fatal(err)
	}
	tbl := db.Table("auto")
	var cols []tablekit.Column
	for _, name := range benchNames() {
		cols = append(cols, tablekit.Column{Name: name, Value: tablekit.String(benchValue)})
	}
	autoKey := tablekit.Key("pk", tablekit.String("auto")).Add("seq", tablekit.AutoIncrement)
	auto := func(int) error { return tbl.PutRow(ctx, autoKey, cols) }
	plain := func(i int) error {
		return tbl.PutRow(ctx, tablekit.Key("pk", tablekit.String("plain")).Add("seq", tablekit.Integer(int64(i))), cols)
	}
	for i := range 20 { // warm both call shapes up
		if err := auto(i); err != nil {
			b.Fatal(err)
		}
		if err := plain(i); err != nil {
			b.Fatal(err)
		}
	}
	var d, n [2]int64
	i := 0
	for b.Loop() {
		for side := range 2 {
			s := (i + side) % 2
			f := auto
			if s == 1 {
				f = plain
			}
			n0, t0 := rpcs.Load(), time.Now()
			if err := f(i); err != nil {
				b.Fatal(err)
			}
			d[s] += int64(time.Since(t0))
			n[s] += rpcs.Load() - n0
		}
		i++
	}
	b.ReportMetric(float64(d[0])/float64(i), "auto-ns/op")
	b.ReportMetric(float64(d[1])/float64(i), "plain-ns/op")
	b.ReportMetric(float64(d[0])/float64(d[1]), "auto/plain")
	b.ReportMetric(float64(n[0])/float64(i), "auto-rpcs/op")
	b.ReportMetric(float64(n[1])/float64(i), "plain-rpcs/op")
}
