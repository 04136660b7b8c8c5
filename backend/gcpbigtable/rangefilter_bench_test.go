package gcpbigtable_test

import (
	"context"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/internal/rangebench"
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

// BenchmarkFilteredRange is the figure of issue 13 on bttest: a range of
// 12,000 rows read whole, and read with Limit(1) and a filter only the
// last row passes, side by side (see package rangebench). Run with:
//
//	go test -run '^$' -bench FilteredRange -count 6 ./backend/gcpbigtable/
func BenchmarkFilteredRange(b *testing.B) {
	srv := newServer(b)
	var cnt readRowsCounter
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst"}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	cfg.ClientOptions = append(emulatorOptions(srv), option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(cnt.interceptor)))
	be, err := gcpbigtable.Open(context.Background(), &cfg)
	if err != nil {
		b.Fatal(err)
	}
	db := tablekit.NewClient(be)
	b.Cleanup(func() { db.Close() })
	t, err := rangebench.Table(context.Background(), db, "filtered", rangebench.Rows)
	if err != nil {
		b.Fatal(err)
	}
	rangebench.Run(b, t, rangebench.Rows, rangebench.Counters{Calls: cnt.streams.Load, Examined: cnt.rows.Load})
}

// TestFilteredRangeCalls pins the sizing of range calls: a filtered
// Limit(1) read of 3,000 rows that only the last passes is one ReadRows
// call (it was one call per two rows), and an unfiltered Limit(10) read
// asks for no more than 11 rows.
func TestFilteredRangeCalls(t *testing.T) {
	srv := newServer(t)
	var cnt readRowsCounter
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst"}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	cfg.ClientOptions = append(emulatorOptions(srv), option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(cnt.interceptor)))
	be, err := gcpbigtable.Open(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(be)
	t.Cleanup(func() { db.Close() })
	const n = 3000
	tbl, err := rangebench.Table(context.Background(), db, "filtered", n)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	s0, r0 := cnt.streams.Load(), cnt.rows.Load()
	res, err := tbl.GetRange(context.Background(), lo, hi, tablekit.Limit(1),
		tablekit.WithFilter(tablekit.SingleColumnValue("i", tablekit.Equal, tablekit.Integer(n-1))))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || !res.Rows[0].Key.Equal(tablekit.Key("k", tablekit.Integer(n-1))) {
		t.Fatalf("filtered read returned %v, want the row k=%d", res.Rows, n-1)
	}
	if calls := cnt.streams.Load() - s0; calls != 1 {
		t.Errorf("filtered Limit(1) read made %d ReadRows calls, want 1", calls)
	}
	if rows := cnt.rows.Load() - r0; rows != n {
		t.Errorf("filtered Limit(1) read examined %d rows, want %d", rows, n)
	}
	s0, r0 = cnt.streams.Load(), cnt.rows.Load()
	res, err = tbl.GetRange(context.Background(), lo, hi, tablekit.Limit(10))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 {
		t.Fatalf("Limit(10) read returned %d rows", len(res.Rows))
	}
	if calls, rows := cnt.streams.Load()-s0, cnt.rows.Load()-r0; calls != 1 || rows > 11 {
		t.Errorf("unfiltered Limit(10) read made %d calls of %d rows in all, want 1 call of at most 11", calls, rows)
	}
}
