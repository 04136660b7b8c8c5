package gcpbigtable_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/internal/testkit/rangebench"
)

// readRowsCounter counts ReadRows streams and the rows they deliver.
type readRowsCounter struct {
	streams, rows atomic.Int64
}

func (c *readRowsCounter) interceptor(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || method != "/google.bigtable.v2.Bigtable/ReadRows" {
		return s, err
	}
	c.streams.Add(1)
	return &countingStream{ClientStream: s, c: c}, nil
}

type countingStream struct {
	grpc.ClientStream
	c *readRowsCounter
}

func (s *countingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if r, ok := m.(*btpb.ReadRowsResponse); ok && err == nil {
		for _, ch := range r.Chunks {
			if ch.GetCommitRow() {
				s.c.rows.Add(1)
			}
		}
	}
	return err
}

// openCounted opens the adapter on a new bttest with cnt counting its
// ReadRows calls, and returns a Client on it.
func openCounted(tb testing.TB, cnt *readRowsCounter) *tablekit.Client {
	tb.Helper()
	srv := newServer(tb)
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst"}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	cfg.ClientOptions = append(emulatorOptions(srv), option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(cnt.interceptor)))
	be, err := gcpbigtable.Open(context.Background(), &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	db := tablekit.NewClient(be)
	tb.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkFilteredRange is the figure of issue 13 on bttest: a range of
// 12,000 rows read whole, and read with Limit(1) and a filter only the
// last row passes, side by side (see package rangebench). Run with:
//
//	go test -run '^$' -bench FilteredRange -count 6 ./backend/gcpbigtable/
//
// calls/read is the ReadRows calls per GetRange, examined/row the rows
// Bigtable sent per row returned (the filter is pushed down: 1).
func BenchmarkFilteredRange(b *testing.B) {
	var cnt readRowsCounter
	db := openCounted(b, &cnt)
	t, err := rangebench.Table(context.Background(), db, "filtered", rangebench.Rows)
	if err != nil {
		b.Fatal(err)
	}
	rangebench.Run(b, t, rangebench.Rows, rangebench.Counters{Calls: cnt.streams.Load, Examined: cnt.rows.Load})
}

// BenchmarkFilteredRangePushdown times the filtered read of
// BenchmarkFilteredRange with the filter pushed down and evaluated on the
// client alone (as the adapter did before), alternately in one loop, and
// reports each one's time and process CPU per read, their ratios
// (pushed/client, cpu-pushed/client), and each one's calls and rows
// Bigtable sent per read.
func BenchmarkFilteredRangePushdown(b *testing.B) {
	var cnt readRowsCounter
	db := openCounted(b, &cnt)
	ctx := context.Background()
	t, err := rangebench.Table(ctx, db, "filtered", rangebench.Rows)
	if err != nil {
		b.Fatal(err)
	}
	var wall, cpu [2]time.Duration
	var calls, rows [2]int64
	n := 0
	for b.Loop() {
		for side := range 2 {
			s := (n + side) % 2 // 0 pushed, 1 client
			restore := gcpbigtable.SetPushdown(s == 0)
			c0, r0, p0, t0 := cnt.streams.Load(), cnt.rows.Load(), benchstat.ProcessCPU(), time.Now()
			err := rangebench.Filtered(ctx, t, rangebench.Rows)
			wall[s] += time.Since(t0)
			cpu[s] += benchstat.ProcessCPU() - p0
			calls[s] += cnt.streams.Load() - c0
			rows[s] += cnt.rows.Load() - r0
			restore()
			if err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	for s, name := range []string{"pushed", "client"} {
		b.ReportMetric(float64(wall[s].Milliseconds())/float64(n), name+"-ms")
		b.ReportMetric(float64(calls[s])/float64(n), name+"-calls/read")
		b.ReportMetric(float64(rows[s])/float64(n), name+"-rows/read")
	}
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "pushed/client")
	if cpu[1] > 0 {
		b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-pushed/client")
	}
}

// TestFilteredRangeCalls pins the sizing of range calls: a filtered
// Limit(1) read of 3,000 rows that only the last passes is one ReadRows
// call (it was one call per two rows) that brings that one row (the filter
// is pushed down: it brought all 3,000), and an unfiltered Limit(10) read
// asks for no more than 11 rows.
func TestFilteredRangeCalls(t *testing.T) {
	ctx := context.Background()
	var cnt readRowsCounter
	db := openCounted(t, &cnt)
	const n = 3000
	tbl, err := rangebench.Table(ctx, db, "filtered", n)
	if err != nil {
		t.Fatal(err)
	}
	s0, r0 := cnt.streams.Load(), cnt.rows.Load()
	if err := rangebench.Filtered(ctx, tbl, n); err != nil {
		t.Fatal(err)
	}
	if calls, rows := cnt.streams.Load()-s0, cnt.rows.Load()-r0; calls != 1 || rows != 1 {
		t.Errorf("filtered Limit(1) read made %d ReadRows calls bringing %d rows, want 1 call bringing 1", calls, rows)
	}
	s0, r0 = cnt.streams.Load(), cnt.rows.Load()
	if err := rangebench.Limited(ctx, tbl, 10); err != nil {
		t.Fatal(err)
	}
	if calls, rows := cnt.streams.Load()-s0, cnt.rows.Load()-r0; calls != 1 || rows > 11 {
		t.Errorf("unfiltered Limit(10) read made %d calls of %d rows in all, want 1 call of at most 11", calls, rows)
	}
}
