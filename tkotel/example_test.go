package tkotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tkotel"
)

// A Client whose operations appear in the program's traces and metrics,
// and whose retries and throttling go to its log. A real program passes
// its own providers, or none to use the global ones.
func Example() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))

	db := tablekit.NewClient(localengine.New(),
		tablekit.WithObserver(tkotel.New(tkotel.WithTracerProvider(tp), tkotel.WithMeterProvider(mp))),
		tablekit.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, nil))))
	defer db.Close()
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: "events", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}})
	if err != nil {
		panic(err)
	}
	err = db.Table("events").PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)),
		[]tablekit.Column{{Name: "kind", Value: tablekit.String("click")}})
	if err != nil {
		panic(err)
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind())
		for _, kv := range s.Attributes() {
			if kv.Key == "db.system.name" || kv.Key == "db.collection.name" || kv.Key == "tablekit.rows" {
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.String())
			}
		}
	}
	// Output:
	// CreateTable events client
	//   db.system.name=tablekit.local
	//   db.collection.name=events
	// PutRow events client
	//   db.system.name=tablekit.local
	//   db.collection.name=events
	//   tablekit.rows=1
}
