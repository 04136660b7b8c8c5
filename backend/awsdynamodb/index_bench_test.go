package awsdynamodb_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures on dynalite (internal/testkit/indexbench),
// with the HTTP requests the adapter sends counted (wire/write, wire/read).
func BenchmarkIndex(b *testing.B) {
	needDynalite(b)
	hc := &countingClient{c: &http.Client{}}
	indexbench.RunWire(b, func(b *testing.B) tablekit.Backend {
		cfg := awsConfig(hc)
		be, err := awsdynamodb.Open(context.Background(), &awsdynamodb.Options{AWS: &cfg, Endpoint: endpoint, Shards: 4, NoTransactions: true, NoStreams: true})
		if err != nil {
			b.Fatal(err)
		}
		return be
	}, hc.n.Load)
}

// countingClient counts the HTTP requests it sends.
type countingClient struct {
	c *http.Client
	n atomic.Int64
}

func (c *countingClient) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.c.Do(r)
}
