package aliyuntablestore_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/rangebench"
)

// getRangeCounter counts GetRange requests.
type getRangeCounter struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *getRangeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/GetRange" {
		c.n.Add(1)
	}
	return c.base.RoundTrip(r)
}

// BenchmarkFilteredRange is the figure of issue 13 on the Tablestore
// emulator: a range of 12,000 rows read whole, and read with Limit(1) and
// a filter only the last row passes, side by side (see package
// rangebench). The adapter sends the filter to the server, so the rows it
// examines are not counted here. Run with:
//
//	go test -run '^$' -bench FilteredRange -count 6 ./backend/aliyuntablestore/
func BenchmarkFilteredRange(b *testing.B) {
	srv := newServer(b)
	cnt := &getRangeCounter{base: http.DefaultTransport}
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.Transport = cnt
	db := tablekit.NewClient(openAt(b, srv, srv.Endpoint(), cfg))
	t, err := rangebench.Table(context.Background(), db, "filtered", rangebench.Rows)
	if err != nil {
		b.Fatal(err)
	}
	rangebench.Run(b, t, rangebench.Rows, rangebench.Counters{Calls: cnt.n.Load})
}
