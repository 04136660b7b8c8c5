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
// /pushed is the adapter as it is (the filter i == n-1 pushed down: Bigtable
// sends the one row that passes); /client evaluates it on the client alone,
// as the adapter did before, for the side-by-side figure. calls/read is the
// ReadRows calls per GetRange; examined/row the rows Bigtable sent per row
// returned.
func BenchmarkFilteredRange(b *testing.B) {
	var cnt readRowsCounter
	db := openCounted(b, &cnt)
	t, err := rangebench.Table(context.Background(), db, "filtered", rangebench.Rows)
	if err != nil {
		b.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		name := "pushed"
		if !on {
			name = "client"
		}
		b.Run(name, func(b *testing.B) {
			defer gcpbigtable.SetPushdown(on)()
			rangebench.Run(b, t, rangebench.Rows, rangebench.Counters{Calls: cnt.streams.Load, Examined: cnt.rows.Load})
		})
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
