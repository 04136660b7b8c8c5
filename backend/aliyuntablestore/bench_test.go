package aliyuntablestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
)

// The adapter against the raw SDK doing the same work, over HTTP to the
// same tsemu server: a point write of a 1 KB row (10 Binary columns of
// 100 bytes, as YCSB's fields, explicit versions), an update of one
// column, a point read and a 100-row range, without and with a
// projection on every column (YCSB's scans name their fields).
//
// BenchmarkAdapterVsSDK/<op>/{adapter,adapter-ctx,sdk} give absolute figures.
// BenchmarkAdapterVsSDK/<op>/interleaved makes one call of each variant
// per iteration, in rotating order, and reports their wall-time medians,
// their mean CPU time (the whole process's: client and in-process server)
// and the ratios adapter/sdk, so the ratios come from interleaved calls on
// the same machine state; "ctx" is the adapter given a cancellable
// context. The ops are a point write of a 1 KB row, an update of one
// column, a point read and a 100-row range:
//
//	go test -run '^$' -bench 'AdapterVsSDK/.*/interleaved' -benchtime 3000x ./backend/aliyuntablestore/
//	go test -run '^$' -bench 'AdapterVsSDK/.*/(adapter|sdk)$' -benchmem ./backend/aliyuntablestore/

const benchRows = 1000

type benchEnv struct {
	backend *aliyuntablestore.Backend
	tbl     *tablekit.Table
	raw     *tablestore.TableStoreClient
	cols    []tablekit.Column
	rawVals [][]byte // the cells' values as the SDK takes them
	names   []string // the cells' names, the projection of the *Cols ops
}

func newBenchEnv(b *testing.B) *benchEnv {
	srv := newServer(b)
	ab := openAt(b, srv, srv.Endpoint(), nil)
	db := tablekit.NewClient(ab)
	ctx := context.Background()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "bench", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{
		backend: ab,
		tbl:     db.Table("bench"),
		raw:     tablestore.NewClientWithConfig(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret(), "", aliyuntablestore.DefaultConfig()),
	}
	for i := range 10 {
		v := []byte(strings.Repeat("x", 100))
		e.cols = append(e.cols, tablekit.Column{Name: fmt.Sprintf("f%d", i), Value: tablekit.Binary(v)})
		e.rawVals = append(e.rawVals, v)
		e.names = append(e.names, e.cols[i].Name)
	}
	for i := range benchRows {
		if err := e.tbl.PutRow(ctx, benchKey(i), e.cols); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

func benchID(i int) string { return fmt.Sprintf("row%06d", i%benchRows) }

func benchKey(i int) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.String(benchID(i))) }

func rawKey(id string) *tablestore.PrimaryKey {
	pk := &tablestore.PrimaryKey{}
	pk.AddPrimaryKeyColumn("id", id)
	return pk
}

type benchOp struct {
	name    string
	adapter func(ctx context.Context, i int) error
	sdk     func(i int) error
}

func (e *benchEnv) ops() []benchOp {
	return []benchOp{
		{
			name: "PutRow",
			adapter: func(ctx context.Context, i int) error {
				return e.tbl.PutRow(ctx, benchKey(i), e.cols)
			},
			sdk: func(i int) error {
				ch := &tablestore.PutRowChange{TableName: "bench", PrimaryKey: rawKey(benchID(i))}
				ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
				now := time.Now().UnixMilli()
				for i, c := range e.cols {
					ch.AddColumnWithTimestamp(c.Name, e.rawVals[i], now)
				}
				_, err := e.raw.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
				return err
			},
		},
		{
			name: "GetRow",
			adapter: func(ctx context.Context, i int) error {
				r, found, err := e.tbl.GetRow(ctx, benchKey(i))
				if err == nil && (!found || len(r.Columns) != 10) {
					err = fmt.Errorf("row %d: found %v, %d columns", i, found, len(r.Columns))
				}
				return err
			},
			sdk: func(i int) error {
				resp, err := e.raw.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
					TableName: "bench", PrimaryKey: rawKey(benchID(i)), MaxVersion: 1,
				}})
				if err == nil && len(resp.Columns) != 10 {
					err = fmt.Errorf("row %d: %d columns", i, len(resp.Columns))
				}
				return err
			},
		},
		{
			name: "UpdateRow",
			adapter: func(ctx context.Context, i int) error {
				_, err := e.tbl.UpdateRow(ctx, benchKey(i), []tablekit.Change{tablekit.Put("f0", e.cols[0].Value)})
				return err
			},
			sdk: func(i int) error {
				ch := &tablestore.UpdateRowChange{TableName: "bench", PrimaryKey: rawKey(benchID(i))}
				ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
				ch.PutColumnWithTimestamp("f0", e.rawVals[0], time.Now().UnixMilli())
				_, err := e.raw.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch})
				return err
			},
		},
		{
			name: "GetRange100",
			adapter: func(ctx context.Context, i int) error {
				start := (i * 100) % (benchRows - 100)
				res, err := e.tbl.GetRange(ctx, benchKey(start), benchKey(start+100), tablekit.Limit(100))
				if err == nil && len(res.Rows) != 100 {
					err = fmt.Errorf("range at %d: %d rows", start, len(res.Rows))
				}
				return err
			},
			sdk: func(i int) error {
				start := (i * 100) % (benchRows - 100)
				resp, err := e.raw.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
					TableName: "bench", StartPrimaryKey: rawKey(benchID(start)), EndPrimaryKey: rawKey(benchID(start + 100)),
					MaxVersion: 1, Limit: 100,
				}})
				if err == nil && len(resp.Rows) != 100 {
					err = fmt.Errorf("range at %d: %d rows", start, len(resp.Rows))
				}
				return err
			},
		},
		{
			name: "GetRange100Cols",
			adapter: func(ctx context.Context, i int) error {
				start := (i * 100) % (benchRows - 100)
				res, err := e.tbl.GetRange(ctx, benchKey(start), benchKey(start+100), tablekit.Limit(100), tablekit.Columns(e.names...))
				if err == nil && len(res.Rows) != 100 {
					err = fmt.Errorf("range at %d: %d rows", start, len(res.Rows))
				}
				return err
			},
			sdk: func(i int) error {
				start := (i * 100) % (benchRows - 100)
				resp, err := e.raw.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
					TableName: "bench", StartPrimaryKey: rawKey(benchID(start)), EndPrimaryKey: rawKey(benchID(start + 100)),
					MaxVersion: 1, Limit: 100, ColumnsToGet: e.names,
				}})
				if err == nil && len(resp.Rows) != 100 {
					err = fmt.Errorf("range at %d: %d rows", start, len(resp.Rows))
				}
				return err
			},
		},
	}
}

func BenchmarkAdapterVsSDK(b *testing.B) {
	e := newBenchEnv(b)
	// A context that can end takes the adapter's other path (a goroutine
	// per call, the call registered for the transport).
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, op := range e.ops() {
		b.Run(op.name, func(b *testing.B) {
			for _, v := range []struct {
				name string
				ctx  context.Context
			}{{"adapter", context.Background()}, {"adapter-ctx", cancellable}} {
				b.Run(v.name, func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						if err := op.adapter(v.ctx, i); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run("sdk", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if err := op.sdk(i); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("interleaved", func(b *testing.B) {
				// Each iteration makes one call of each variant, rotating
				// their order so that none always follows another.
				variants := []func(i int) error{
					func(i int) error { return op.adapter(context.Background(), i) },
					func(i int) error { return op.adapter(cancellable, i) },
					op.sdk,
				}
				d := make([][]time.Duration, len(variants))
				cpu := make([]time.Duration, len(variants))
				for i := 0; b.Loop(); i++ {
					for k := range variants {
						v := (i + k) % len(variants)
						c0, t0 := benchstat.ProcessCPU(), time.Now()
						if err := variants[v](i); err != nil {
							b.Fatal(err)
						}
						d[v] = append(d[v], time.Since(t0))
						cpu[v] += benchstat.ProcessCPU() - c0
					}
				}
				// Medians of wall time: the machine's noise comes in
				// spikes that swamp a mean. CPU time is the process's own
				// (client and in-process server), which other processes
				// on the machine do not inflate, so its mean is steady.
				ma, mc, ms := benchstat.Median(d[0]), benchstat.Median(d[1]), benchstat.Median(d[2])
				b.ReportMetric(float64(ma.Nanoseconds()), "adapter-p50-ns")
				b.ReportMetric(float64(mc.Nanoseconds()), "adapter-ctx-p50-ns")
				b.ReportMetric(float64(ms.Nanoseconds()), "sdk-p50-ns")
				b.ReportMetric(float64(ma)/float64(ms), "ratio")
				b.ReportMetric(float64(mc)/float64(ms), "ratio-ctx")
				if n := len(d[0]); n > 0 && cpu[2] > 0 {
					b.ReportMetric(float64(cpu[0].Nanoseconds())/float64(n), "adapter-cpu-ns")
					b.ReportMetric(float64(cpu[2].Nanoseconds())/float64(n), "sdk-cpu-ns")
					b.ReportMetric(float64(cpu[0])/float64(cpu[2]), "cpu-ratio")
					b.ReportMetric(float64(cpu[1])/float64(cpu[2]), "cpu-ratio-ctx")
				}
			})
		})
	}
}
