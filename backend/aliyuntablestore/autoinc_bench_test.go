package aliyuntablestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
)

// BenchmarkAutoIncrementPut puts 1 KB rows (10 Binary columns of 100
// bytes) of one partition key through the adapter to an in-process tsemu
// server over the local engine, side by side in one run: with the
// AutoIncrement placeholder and ReturnKey (RT_PK; the engine assigns the
// key) and with a key the caller gives (a plain PutRow). /interleaved
// makes one call of each per iteration, in alternating order, and reports
// their wall-time medians and the ratio auto/plain:
//
//	go test -run '^$' -bench 'AutoIncrementPut/interleaved' -benchtime 2000x -count 3 ./backend/aliyuntablestore/
func BenchmarkAutoIncrementPut(b *testing.B) {
	srv := newServer(b)
	db := tablekit.NewClient(openAt(b, srv, srv.Endpoint(), nil))
	ctx := context.Background()
	if err := db.CreateTable(ctx, msgsMeta); err != nil {
		b.Fatal(err)
	}
	tbl := db.Table("msgs")
	var cols []tablekit.Column
	for i := range 10 {
		cols = append(cols, tablekit.Column{Name: fmt.Sprintf("f%d", i), Value: tablekit.Binary([]byte(strings.Repeat("x", 100)))})
	}
	var k tablekit.PrimaryKey
	auto := func() error { return tbl.PutRow(ctx, msgKey("auto"), cols, tablekit.ReturnKey(&k)) }
	var n int64
	plain := func() error {
		n++
		return tbl.PutRow(ctx, tablekit.Key("conv", tablekit.String("plain")).Add("seq", tablekit.Integer(n)), cols)
	}
	for _, v := range []struct {
		name string
		put  func() error
	}{{"auto", auto}, {"plain", plain}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				if err := v.put(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		var d [2][]time.Duration
		i := 0
		for b.Loop() {
			for j := range 2 {
				v := (i + j) % 2
				put := auto
				if v == 1 {
					put = plain
				}
				t0 := time.Now()
				if err := put(); err != nil {
					b.Fatal(err)
				}
				d[v] = append(d[v], time.Since(t0))
			}
			i++
		}
		ma, mp := benchstat.Median(d[0]), benchstat.Median(d[1])
		b.ReportMetric(float64(ma.Nanoseconds()), "auto-ns/op")
		b.ReportMetric(float64(mp.Nanoseconds()), "plain-ns/op")
		b.ReportMetric(float64(ma)/float64(mp), "auto/plain")
	})
}
