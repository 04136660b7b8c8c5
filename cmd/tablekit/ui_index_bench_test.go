package main

// The index page against the table's rows page, in process:
//
//	go test -run '^$' -bench 'UIIndexPage' -count 6 ./cmd/tablekit/
//
// Both render 100 rows × 10 columns of uiBenchTable on the local engine:
// table the rows page, index the page of an index on c0 that includes the
// other nine columns; interleaved does one of each per iteration and
// reports the median ratio index/table.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
)

func BenchmarkUIIndexPage(b *testing.B) {
	c, db := uiBenchTable(b)
	spec := tablekit.IndexSpec{Name: "by_c0", Columns: []tablekit.KeyColumn{{Name: "c0", Type: tablekit.TypeString}}}
	for i := 1; i < 10; i++ {
		spec.Include = append(spec.Include, fmt.Sprintf("c%d", i))
	}
	if err := db.AddIndex(context.Background(), "b", spec); err != nil {
		b.Fatal(err)
	}
	page := func(b *testing.B, path string) {
		w := serve(c, get(path))
		if w.Code != 200 || strings.Count(w.Body.String(), `<a class="open"`) != 100 {
			b.Fatalf("%s: %d", path, w.Code)
		}
	}
	const table, index = "/t/b?n=100", "/t/b/i/by_c0?n=100"
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			page(b, table)
		}
	})
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			page(b, index)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var ratios []float64
		for b.Loop() {
			t0 := time.Now()
			page(b, index)
			t1 := time.Now()
			page(b, table)
			ratios = append(ratios, float64(t1.Sub(t0))/float64(time.Since(t1)))
		}
		b.ReportMetric(benchstat.Median(ratios), "index/table")
	})
}
