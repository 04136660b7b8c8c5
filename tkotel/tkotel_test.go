package tkotel_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/observe"
	"github.com/tablekit/tablekit/tkotel"
)

// telemetry is an in-memory OpenTelemetry pipeline.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	return tel
}

func (tel *telemetry) observer() *tkotel.Observer {
	return tkotel.New(tkotel.WithTracerProvider(tel.tp), tkotel.WithMeterProvider(tel.mp))
}

func (tel *telemetry) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := tel.spans.Ended()
	for i := len(ended) - 1; i >= 0; i-- {
		if ended[i].Name() == name {
			return ended[i]
		}
	}
	var names []string
	for _, s := range ended {
		names = append(names, s.Name())
	}
	t.Fatalf("no span %q; spans: %q", name, names)
	return nil
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		g, ok := got[attribute.Key(k)]
		if v == nil {
			if ok {
				t.Errorf("span %q: attribute %s = %v, want none", s.Name(), k, g.String())
			}
			continue
		}
		if !ok || g.AsInterface() != v {
			t.Errorf("span %q: attribute %s = %v (present %v), want %v", s.Name(), k, g.AsInterface(), ok, v)
		}
	}
}

func newTable(t *testing.T, b tablekit.Backend, obs observe.Observer) *tablekit.Client {
	t.Helper()
	db := tablekit.NewClient(b, tablekit.WithObserver(obs))
	t.Cleanup(func() { db.Close() })
	err := db.CreateTable(context.Background(), tablekit.TableMeta{
		Name: "events", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSpansFollowDatabaseConventions(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	db := newTable(t, localengine.New(), tel.observer())
	events := db.Table("events")

	parentCtx, parent := tel.tp.Tracer("test").Start(ctx, "handler")
	key := tablekit.Key("id", tablekit.Integer(1))
	cols := []tablekit.Column{{Name: "kind", Value: tablekit.String("click")}}
	if err := events.PutRow(parentCtx, key, cols); err != nil {
		t.Fatal(err)
	}
	parent.End()
	put := tel.span(t, "PutRow events")
	if put.SpanKind() != trace.SpanKindClient {
		t.Errorf("kind %v", put.SpanKind())
	}
	if put.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("PutRow's span is not a child of the caller's span")
	}
	wantAttrs(t, put, map[string]any{
		"db.system.name":            "tablekit.local",
		"db.operation.name":         "PutRow",
		"db.collection.name":        "events",
		"tablekit.rows":             int64(1),
		"tablekit.bytes":            int64(key.Size() + len("kind") + len("click")),
		"error.type":                nil,
		"db.response.returned_rows": nil,
	})
	if put.Status().Code == codes.Error {
		t.Errorf("status %v", put.Status())
	}

	if _, _, err := events.GetRow(ctx, key); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, tel.span(t, "GetRow events"), map[string]any{
		"db.operation.name":         "GetRow",
		"db.response.returned_rows": int64(1),
	})

	err := events.PutRow(ctx, key, cols, tablekit.ExpectNotExist)
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatal(err)
	}
	failed := tel.span(t, "PutRow events")
	wantAttrs(t, failed, map[string]any{"error.type": "condition_failed", "tablekit.rows": int64(0)})
	if failed.Status().Code != codes.Error {
		t.Errorf("failed PutRow status %v", failed.Status())
	}

	writes := make([]tablekit.BatchWrite, 5)
	for i := range writes {
		writes[i] = tablekit.BatchWrite{Table: "events", Kind: tablekit.WritePut, Key: tablekit.Key("id", tablekit.Integer(int64(10+i))), Columns: cols}
	}
	writes[4].Key, writes[4].Condition = key, tablekit.Condition{Row: tablekit.ExpectNotExist}
	if _, err := db.BatchWriteRow(ctx, writes); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, tel.span(t, "BatchWriteRow events"), map[string]any{
		"db.operation.batch.size": int64(5),
		"tablekit.rows":           int64(4),
		"tablekit.failed_rows":    int64(1),
		"error.type":              nil,
	})

	if _, err := db.ListTables(ctx); err != nil {
		t.Fatal(err)
	}
	wantAttrs(t, tel.span(t, "ListTables"), map[string]any{"db.collection.name": nil, "db.operation.name": "ListTables"})
}

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	db := newTable(t, localengine.New(), tel.observer())
	events := db.Table("events")
	for i := range 3 {
		if err := events.PutRow(ctx, tablekit.Key("id", tablekit.Integer(int64(i))), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := events.PutRow(ctx, tablekit.Key("id", tablekit.Integer(0)), nil, tablekit.ExpectNotExist); err == nil {
		t.Fatal("second create succeeded")
	}
	res, err := events.GetRange(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax))
	if err != nil || len(res.Rows) != 3 {
		t.Fatal(len(res.Rows), err)
	}

	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != tkotel.ScopeName {
			t.Errorf("scope %q", sm.Scope.Name)
		}
		for _, m := range sm.Metrics {
			got[m.Name] = m.Data
			if m.Name == "db.client.operation.duration" && m.Unit != "s" {
				t.Errorf("duration unit %q", m.Unit)
			}
		}
	}
	dur, ok := got["db.client.operation.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("no duration histogram; metrics: %v", got)
	}
	counts := map[string]uint64{} // "op/error.type" -> count
	for _, dp := range dur.DataPoints {
		sys, _ := dp.Attributes.Value("db.system.name")
		if sys.AsString() != "tablekit.local" {
			t.Errorf("db.system.name %q", sys.AsString())
		}
		op, _ := dp.Attributes.Value("db.operation.name")
		coll, _ := dp.Attributes.Value("db.collection.name")
		if coll.AsString() != "events" {
			t.Errorf("%s: db.collection.name %q", op.AsString(), coll.AsString())
		}
		et, _ := dp.Attributes.Value("error.type")
		counts[op.AsString()+"/"+et.AsString()] += dp.Count
		if want := []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}; len(dp.Bounds) != len(want) || dp.Bounds[0] != want[0] {
			t.Errorf("bounds %v, want %v", dp.Bounds, want)
		}
	}
	if counts["PutRow/"] != 3 || counts["PutRow/condition_failed"] != 1 || counts["GetRange/"] != 1 || counts["CreateTable/"] != 1 {
		t.Errorf("duration counts %v", counts)
	}
	rows, ok := got["tablekit.client.rows"].(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("no rows counter")
	}
	sum := map[string]int64{}
	for _, dp := range rows.DataPoints {
		op, _ := dp.Attributes.Value("db.operation.name")
		sum[op.AsString()] += dp.Value
	}
	if sum["PutRow"] != 3 || sum["GetRange"] != 3 {
		t.Errorf("rows %v", sum)
	}
	returned, ok := got["db.client.response.returned_rows"].(metricdata.Histogram[int64])
	if !ok || len(returned.DataPoints) != 1 || returned.DataPoints[0].Sum != 3 {
		t.Errorf("returned_rows %+v", got["db.client.response.returned_rows"])
	}
}

// Retries reach the span as events and the retries counter; a throttled
// operation's error.type is "throttled".
func TestRetriesAndThrottling(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	inj := faults.New(1, faults.Rule{Ops: faults.OpWrite, Table: "events", Err: tablekit.ErrThrottled, Times: 1})
	inj.Disable()
	db := newTable(t, inj.Wrap(localengine.New()), tel.observer())
	inj.Enable()
	err := db.Table("events").PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)), nil)
	if !errors.Is(err, tablekit.ErrThrottled) {
		t.Fatalf("PutRow = %v, want throttled", err)
	}
	put := tel.span(t, "PutRow events")
	wantAttrs(t, put, map[string]any{"error.type": "throttled", "db.system.name": "tablekit.local"})

	// A stale-metadata retry: another client re-creates the table.
	eng := localengine.New()
	db2 := newTable(t, eng, tel.observer())
	if err := db2.Table("events").PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	admin := tablekit.NewClient(eng)
	defer admin.Close()
	if err := admin.DeleteTable(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateTable(ctx, tablekit.TableMeta{Name: "events", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	if err := db2.Table("events").PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	put = tel.span(t, "PutRow events")
	wantAttrs(t, put, map[string]any{"tablekit.retries": int64(1), "error.type": nil})
	if ev := put.Events(); len(ev) != 1 || ev[0].Name != "retry" {
		t.Fatalf("events %+v", ev)
	} else {
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range ev[0].Attributes {
			m[kv.Key] = kv.Value
		}
		if m["error.type"].AsString() != "stale_metadata" || m["tablekit.retry.attempt"].AsInt64() != 1 {
			t.Errorf("retry event attributes %v", ev[0].Attributes)
		}
	}
}

// With the global providers unset, an Observer from New() records nothing
// and hands the Client no observation; once the program sets them, it does.
// It runs in a child process, since the global providers cannot be unset
// (and the benchmarks need them unset).
func TestGlobalProviders(t *testing.T) {
	if os.Getenv("TKOTEL_GLOBAL_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGlobalProviders$", "-test.v")
		cmd.Env = append(os.Environ(), "TKOTEL_GLOBAL_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestGlobalProviders") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	ctx := context.Background()
	obs := tkotel.New()
	op := observe.Operation{System: "tablekit.local", Name: "PutRow", Table: "events"}
	if c, ob := obs.StartOperation(ctx, op); ob != nil || c != ctx {
		t.Fatalf("unset global providers: observation %v", ob)
	}
	tel := newTelemetry(t)
	otel.SetTracerProvider(tel.tp)
	otel.SetMeterProvider(tel.mp)
	c, ob := obs.StartOperation(ctx, op)
	if ob == nil {
		t.Fatal("set global providers: no observation")
	}
	ob.End(c, observe.Outcome{Rows: 1})
	wantAttrs(t, tel.span(t, "PutRow events"), map[string]any{"db.operation.name": "PutRow", "tablekit.rows": int64(1)})
}

// Injected latency is not a retry.
func TestLatencyIsNotARetry(t *testing.T) {
	ctx := context.Background()
	tel := newTelemetry(t)
	inj := faults.New(1, faults.Rule{Ops: faults.OpWrite, Latency: time.Millisecond})
	db := newTable(t, inj.Wrap(localengine.New()), tel.observer())
	if err := db.Table("events").PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	put := tel.span(t, "PutRow events")
	wantAttrs(t, put, map[string]any{"tablekit.retries": nil, "tablekit.rows": int64(1)})
	if len(put.Events()) != 0 || inj.Hits(0) != 1 {
		t.Errorf("events %v, hits %d", put.Events(), inj.Hits(0))
	}
}
