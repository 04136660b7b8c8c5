package tkotel_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/observe"
	"github.com/tablekit/tablekit/tkotel"
)

// BenchmarkPutRow is a local-engine PutRow (overwriting one of 1024 rows
// with three columns) side by side:
//
//   - none: a Client without observer or logger;
//   - otel-unset: tkotel.New() with the global providers unset, the
//     default of a program that never configures OpenTelemetry (figure:
//     at most 3% over none);
//   - logger: a Client with a logger only (nothing logged: no retries);
//   - otel-inmemory: tkotel with the SDK's providers recording every span
//     (in memory, reset every 256 operations) and every metric.
//
// Run: go test ./tkotel -run '^$' -bench PutRow -count 6 -benchmem
func BenchmarkPutRow(b *testing.B) {
	tel := newTelemetry(b)
	cases := []struct {
		name string
		opts []tablekit.ClientOption
	}{
		{"none", nil},
		{"otel-unset", []tablekit.ClientOption{tablekit.WithObserver(tkotel.New())}},
		{"logger", []tablekit.ClientOption{tablekit.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}},
		{"otel-inmemory", []tablekit.ClientOption{tablekit.WithObserver(tel.observer())}},
	}
	if reflectGlobalSet() {
		b.Fatal("the global tracer provider is set: otel-unset would measure a configured provider")
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			put := newPutRow(b, tc.opts...)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				put(i)
				i++
				if i&255 == 0 {
					tel.spans.Reset()
				}
			}
		})
	}
}

// reflectGlobalSet reports whether a program set the global tracer
// provider: then tkotel.New() starts observations.
func reflectGlobalSet() bool {
	_, ob := tkotel.New().StartOperation(context.Background(), observe.Operation{Name: "PutRow"})
	_ = otel.GetTracerProvider()
	return ob != nil
}

// newPutRow returns a PutRow of one of 1024 rows on a new local engine
// behind a Client with opts.
func newPutRow(b *testing.B, opts ...tablekit.ClientOption) func(i int) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New(), opts...)
	b.Cleanup(func() { db.Close() })
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "events", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		b.Fatal(err)
	}
	tbl := db.Table("events")
	keys := make([]tablekit.PrimaryKey, 1024)
	for i := range keys {
		keys[i] = tablekit.Key("id", tablekit.Integer(int64(i)))
	}
	cols := []tablekit.Column{
		{Name: "kind", Value: tablekit.String("click")},
		{Name: "user", Value: tablekit.String("u-12345")},
		{Name: "n", Value: tablekit.Integer(42)},
	}
	return func(i int) {
		if err := tbl.PutRow(ctx, keys[i&1023], cols); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutRowOverhead interleaves a Client without observer and one
// with tkotel.New() (global providers unset) in alternating blocks of 128
// PutRows, so both sides meet the same machine noise, and reports each
// side's median block time per operation and the median, over adjacent
// pairs of blocks, of the overhead in percent (figure: at most 3%).
//
// Run: go test ./tkotel -run '^$' -bench PutRowOverhead -count 6
func BenchmarkPutRowOverhead(b *testing.B) {
	if reflectGlobalSet() {
		b.Fatal("the global tracer provider is set")
	}
	interleave(b, "none", newPutRow(b), "otel-unset", newPutRow(b, tablekit.WithObserver(tkotel.New())), nil)
}

// BenchmarkPutRowInMemory is BenchmarkPutRowOverhead against tkotel with
// the SDK's providers recording every span (in memory, dropped every 256
// operations) and every metric.
func BenchmarkPutRowInMemory(b *testing.B) {
	tel := newTelemetry(b)
	interleave(b, "none", newPutRow(b), "otel-inmemory", newPutRow(b, tablekit.WithObserver(tel.observer())), tel.spans.Reset)
}

// interleave runs blocks of 128 calls of a and of z, alternating which
// goes first, and reports the median time per call of each and the median
// overhead of z over a in percent. each, if set, runs between pairs.
func interleave(b *testing.B, aName string, a func(int), zName string, z func(int), each func()) {
	const block = 128
	var ta, tz, over []float64
	run := func(put func(int)) float64 {
		start := time.Now()
		for i := range block {
			put(i)
		}
		return float64(time.Since(start).Nanoseconds()) / block
	}
	for i := 0; b.Loop(); i++ {
		var x, y float64
		if i%2 == 0 {
			x, y = run(a), run(z)
		} else {
			y, x = run(z), run(a)
		}
		ta, tz, over = append(ta, x), append(tz, y), append(over, 100*(y-x)/x)
		if each != nil && i%2 == 1 {
			each()
		}
	}
	b.ReportMetric(benchstat.Median(ta), aName+"-ns/put")
	b.ReportMetric(benchstat.Median(tz), zName+"-ns/put")
	b.ReportMetric(benchstat.Median(over), "overhead-%")
}
