package awsdynamodb_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures on dynalite (internal/testkit/indexbench).
func BenchmarkIndex(b *testing.B) {
	needDynalite(b)
	indexbench.Run(b, func(b *testing.B) tablekit.Backend {
		cfg := awsConfig(nil)
		be, err := awsdynamodb.Open(context.Background(), &awsdynamodb.Options{AWS: &cfg, Endpoint: endpoint, Shards: 4, NoTransactions: true, NoStreams: true})
		if err != nil {
			b.Fatal(err)
		}
		return be
	})
}
