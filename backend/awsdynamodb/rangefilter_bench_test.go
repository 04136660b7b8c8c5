package awsdynamodb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/rangebench"
)

// queryCounter counts Query requests and the items they return.
type queryCounter struct {
	base           http.RoundTripper
	queries, items atomic.Int64
}

func (c *queryCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.Query" {
		return resp, err
	}
	c.queries.Add(1)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out struct{ Count int64 }
	if json.Unmarshal(body, &out) == nil {
		c.items.Add(out.Count)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// BenchmarkFilteredRange is the figure of issue 13 on dynalite: a range of
// 12,000 rows read whole, and read with Limit(1) and a filter only the
// last row passes, side by side (see package rangebench), with 1 shard
// and with the default 8. Run with:
//
//	go test -run '^$' -bench FilteredRange -count 6 ./backend/awsdynamodb/
func BenchmarkFilteredRange(b *testing.B) {
	for _, shards := range []int{1, awsdynamodb.DefaultShards} {
		b.Run("shards="+strconv.Itoa(shards), func(b *testing.B) {
			cnt := &queryCounter{base: http.DefaultTransport}
			cfg := awsConfig(&http.Client{Transport: cnt})
			be, err := awsdynamodb.Open(context.Background(), &awsdynamodb.Options{AWS: &cfg, Endpoint: needDynalite(b), Shards: shards})
			if err != nil {
				b.Fatal(err)
			}
			db := tablekit.NewClient(be)
			b.Cleanup(func() { db.Close() })
			name := uniqueName("filtered")
			t, err := rangebench.Table(context.Background(), db, name, rangebench.Rows)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.DeleteTable(context.Background(), name) })
			rangebench.Run(b, t, rangebench.Rows, rangebench.Counters{Calls: cnt.queries.Load, Examined: cnt.items.Load})
		})
	}
}

// TestFilteredRangeQueries pins the sizing of Queries: a filtered Limit(1)
// read of 3,000 rows (one shard) that only the last passes takes a few
// Queries (it took one per two rows), and an unfiltered Limit(10) read
// asks for no more than 11 items.
func TestFilteredRangeQueries(t *testing.T) {
	ctx := context.Background()
	cnt := &queryCounter{base: http.DefaultTransport}
	cfg := awsConfig(&http.Client{Transport: cnt})
	be, err := awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: needDynalite(t), Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(be)
	t.Cleanup(func() { db.Close() })
	const n = 3000
	name := uniqueName("filtered")
	tbl, err := rangebench.Table(ctx, db, name, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.DeleteTable(ctx, name) })
	q0, i0 := cnt.queries.Load(), cnt.items.Load()
	if err := rangebench.Filtered(ctx, tbl, n); err != nil {
		t.Fatal(err)
	}
	// 1,024 + 2,048 items cover 3,000 rows; a background prefetch may add one.
	if q, items := cnt.queries.Load()-q0, cnt.items.Load()-i0; q < 2 || q > 3 || items != n {
		t.Errorf("filtered Limit(1) read made %d Queries fetching %d items, want 2-3 fetching %d", q, items, n)
	}
	q0, i0 = cnt.queries.Load(), cnt.items.Load()
	if err := rangebench.Limited(ctx, tbl, 10); err != nil {
		t.Fatal(err)
	}
	if q, items := cnt.queries.Load()-q0, cnt.items.Load()-i0; q != 1 || items > 11 {
		t.Errorf("unfiltered Limit(10) read made %d Queries of %d items in all, want 1 of at most 11", q, items)
	}
}
