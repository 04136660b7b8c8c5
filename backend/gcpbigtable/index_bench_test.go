package gcpbigtable_test

import (
	"context"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures on bttest (internal/testkit/indexbench),
// with the RPCs the adapter sends counted (wire/write, wire/read; the
// client's own upkeep RPCs left out, see countRPCs).
func BenchmarkIndex(b *testing.B) {
	srv := newServer(b)
	var rpcs atomic.Int64
	indexbench.RunWire(b, func(b *testing.B) tablekit.Backend {
		cfg := gcpbigtable.Options{Project: "proj", Instance: "inst", GC: gcpbigtable.GCOff, ClientOptions: append(emulatorOptions(srv), countRPCs(&rpcs)...)}
		cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
		be, err := gcpbigtable.Open(context.Background(), &cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { be.Close() })
		return be
	}, rpcs.Load)
}
