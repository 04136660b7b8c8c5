// Package tkotel is for programs that export telemetry: it reports a
// tablekit Client's operations as OpenTelemetry traces and metrics,
// following the OpenTelemetry semantic conventions for database clients.
// Package tablekit does not import OpenTelemetry; only a program that
// imports tkotel does.
//
//	client := tablekit.NewClient(backend,
//		tablekit.WithObserver(tkotel.New()),     // global providers
//		tablekit.WithLogger(slog.Default()))      // retries and throttling
//
// Each operation (PutRow, GetRange, BatchWriteRow, one Rows iteration, ...)
// is a span of kind Client named "{operation} {table}", for example
// "PutRow events", with these attributes:
//
//   - db.system.name: "aws.dynamodb" (the conventions' name), or
//     "tablekit.bigtable", "tablekit.tablestore", "tablekit.local",
//     "tablekit.file" where the conventions define none;
//   - db.operation.name: the method, "PutRow";
//   - db.collection.name: the table (absent for ListTables and for a
//     batch across tables);
//   - db.operation.batch.size: the entries of a batch call;
//   - db.response.returned_rows: the rows a read returned;
//   - tablekit.rows, tablekit.bytes: the rows read or written and their
//     size (row operations only); tablekit.retries; tablekit.failed_rows:
//     a batch's entries that failed on their own;
//   - error.type: the portable error code ("throttled", "unavailable",
//     "condition_failed", "deadline_exceeded", ...), with the span's
//     status set to Error.
//
// Each retry is a span event "retry" with tablekit.retry.attempt,
// tablekit.retry.delay (seconds) and error.type.
//
// Metrics, with the attributes db.system.name, db.operation.name,
// db.collection.name and error.type:
//
//   - db.client.operation.duration (histogram, seconds, the conventions'
//     buckets);
//   - db.client.response.returned_rows (histogram, reads only);
//   - tablekit.client.rows, tablekit.client.bytes, tablekit.client.retries
//     (counters).
//
// Without options New uses the global providers (otel.GetTracerProvider
// and otel.GetMeterProvider), which do nothing until the program sets them;
// while neither is set an operation costs two type comparisons more than
// with no observer at all, and allocates nothing: 2.3% of a local-engine
// PutRow (median of 18 runs; BenchmarkPutRowOverhead, interleaved with a
// Client without observer). Recording every span and metric with the SDK
// in memory costs about 3.9 µs per operation (BenchmarkPutRowInMemory):
//
//	go test ./tkotel -run '^$' -bench 'PutRowOverhead|PutRowInMemory' -count 6
package tkotel

import (
	"context"
	"reflect"
	"time"

	"github.com/tablekit/tablekit/observe"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/tablekit/tablekit/tkotel"

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// WithTracerProvider makes the observer trace with tp instead of the global
// tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider makes the observer record metrics with mp instead of
// the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// Observer implements observe.Observer with OpenTelemetry. Build it with
// New and install it with tablekit.WithObserver; one Observer may serve
// many Clients.
type Observer struct {
	tracer       trace.Tracer // nil when the provider given is a no-op one
	globalTracer bool         // tracer is the global provider's: check it is set
	global       bool         // both providers are the global ones, unset when the package was initialised

	duration     metric.Float64Histogram
	returnedRows metric.Int64Histogram
	rows         metric.Int64Counter
	bytes        metric.Int64Counter
	retries      metric.Int64Counter
}

var _ observe.Observer = (*Observer)(nil)

// defaultTracer and defaultMeter are the types of the global providers
// while the program has not set them (OpenTelemetry-internal types that
// delegate once one is set), or nil if one had been set before this
// package was initialised. Comparing types is the cheapest exact test of
// "unset": a few nanoseconds per operation.
var defaultTracer, defaultMeter = globalDefault(otel.GetTracerProvider()), globalDefault(otel.GetMeterProvider())

func globalDefault(provider any) reflect.Type {
	t := reflect.TypeOf(provider)
	if t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		return t
	}
	return nil
}

// New returns an Observer. Without options it uses the global providers
// (see the package doc).
func New(opts ...Option) *Observer {
	var c config
	for _, o := range opts {
		o(&c)
	}
	o := &Observer{}
	tp := c.tp
	o.global = tp == nil && c.mp == nil && defaultTracer != nil && defaultMeter != nil
	if tp == nil {
		tp, o.globalTracer = otel.GetTracerProvider(), true
	}
	if _, noop := tp.(tracenoop.TracerProvider); !noop {
		o.tracer = tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	}
	mp := c.mp
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	o.duration, err = m.Float64Histogram("db.client.operation.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of database client operations."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10))
	if err != nil { // a provider that refuses the instrument: record nothing
		o.duration = metricnoop.Float64Histogram{}
	}
	o.returnedRows, err = m.Int64Histogram("db.client.response.returned_rows",
		metric.WithUnit("{row}"), metric.WithDescription("The number of rows returned by the operation."),
		metric.WithExplicitBucketBoundaries(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000))
	if err != nil {
		o.returnedRows = metricnoop.Int64Histogram{}
	}
	o.rows = counter(m, "tablekit.client.rows", "{row}", "Rows read or written.")
	o.bytes = counter(m, "tablekit.client.bytes", "By", "Size of the rows read or written.")
	o.retries = counter(m, "tablekit.client.retries", "{retry}", "Calls made again after a retryable failure or stale table metadata.")
	return o
}

func counter(m metric.Meter, name, unit, desc string) metric.Int64Counter {
	c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	if err != nil {
		return metricnoop.Int64Counter{}
	}
	return c
}

// tracing reports whether spans would be recorded anywhere.
func (o *Observer) tracing() bool {
	return o.tracer != nil && !(o.globalTracer && defaultTracer != nil && reflect.TypeOf(otel.GetTracerProvider()) == defaultTracer)
}

// StartOperation implements observe.Observer. With neither tracing nor
// metrics enabled it returns ctx and nil.
func (o *Observer) StartOperation(ctx context.Context, op observe.Operation) (context.Context, observe.Observation) {
	// Inline, and first: the cost of an operation while the program has
	// set no provider.
	if o.global && reflect.TypeOf(otel.GetTracerProvider()) == defaultTracer && reflect.TypeOf(otel.GetMeterProvider()) == defaultMeter {
		return ctx, nil
	}
	return o.start(ctx, op)
}

// start is StartOperation once a provider may record.
func (o *Observer) start(ctx context.Context, op observe.Operation) (context.Context, observe.Observation) {
	tracing := o.tracing()
	metrics := o.duration.Enabled(ctx)
	if !tracing && !metrics {
		return ctx, nil
	}
	ob := &observation{o: o, op: op, metrics: metrics, start: time.Now()}
	if tracing {
		name := op.Name
		if op.Table != "" {
			name += " " + op.Table
		}
		attrs := make([]attribute.KeyValue, 0, 4)
		attrs = append(attrs, semconv.DBSystemNameKey.String(op.System), semconv.DBOperationNameKey.String(op.Name))
		if op.Table != "" {
			attrs = append(attrs, semconv.DBCollectionNameKey.String(op.Table))
		}
		if op.BatchSize > 0 {
			attrs = append(attrs, semconv.DBOperationBatchSizeKey.Int(op.BatchSize))
		}
		ctx, ob.span = o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, ob
}

// observation is one operation being observed.
type observation struct {
	o       *Observer
	op      observe.Operation
	span    trace.Span // nil when not tracing
	metrics bool
	start   time.Time
}

// Retry implements observe.Observation: a span event.
func (ob *observation) Retry(_ context.Context, r observe.Retry) {
	if ob.span == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.Int("tablekit.retry.attempt", r.Attempt),
		attribute.Float64("tablekit.retry.delay", r.Delay.Seconds()),
	}
	if r.ErrorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(r.ErrorType))
	}
	ob.span.AddEvent("retry", trace.WithAttributes(attrs...))
}

// isRead reports whether an operation returns rows.
func isRead(name string) bool {
	switch name {
	case "GetRow", "GetRange", "Rows", "Scan", "BatchGetRow":
		return true
	}
	return false
}

// isTableOp reports whether an operation is on a table, not its rows.
func isTableOp(name string) bool {
	switch name {
	case "CreateTable", "DescribeTable", "ListTables", "UpdateTable", "DeleteTable":
		return true
	}
	return false
}

// End implements observe.Observation: it ends the span and records the
// metrics.
func (ob *observation) End(ctx context.Context, out observe.Outcome) {
	read := isRead(ob.op.Name)
	if ob.metrics {
		attrs := make([]attribute.KeyValue, 0, 4)
		attrs = append(attrs, semconv.DBSystemNameKey.String(ob.op.System), semconv.DBOperationNameKey.String(ob.op.Name))
		if ob.op.Table != "" {
			attrs = append(attrs, semconv.DBCollectionNameKey.String(ob.op.Table))
		}
		if out.ErrorType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(out.ErrorType))
		}
		set := metric.WithAttributeSet(attribute.NewSet(attrs...))
		ob.o.duration.Record(ctx, time.Since(ob.start).Seconds(), set)
		if read && out.Err == nil {
			ob.o.returnedRows.Record(ctx, int64(out.Rows), set)
		}
		if out.Rows > 0 {
			ob.o.rows.Add(ctx, int64(out.Rows), set)
			ob.o.bytes.Add(ctx, int64(out.Bytes), set)
		}
		if out.Retries > 0 {
			ob.o.retries.Add(ctx, int64(out.Retries), set)
		}
	}
	if ob.span == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	if read && out.Err == nil {
		attrs = append(attrs, semconv.DBResponseReturnedRowsKey.Int(out.Rows))
	}
	if !isTableOp(ob.op.Name) {
		attrs = append(attrs, attribute.Int("tablekit.rows", out.Rows), attribute.Int("tablekit.bytes", out.Bytes))
	}
	if out.Retries > 0 {
		attrs = append(attrs, attribute.Int("tablekit.retries", out.Retries))
	}
	if out.Failed > 0 {
		attrs = append(attrs, attribute.Int("tablekit.failed_rows", out.Failed))
	}
	if out.Err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(out.ErrorType))
		ob.span.SetStatus(codes.Error, out.Err.Error())
	}
	ob.span.SetAttributes(attrs...)
	ob.span.End()
}
