package awsdynamodb_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/conformance"
)

// TestConformance runs the whole SPEC suite (sections, differential against
// the reference, linearizability) on dynalite, with 4 shards per table so
// that every cross-partition range is a real merge. dynalite has no
// TransactWriteItems: the backend declares no atomic writes there
// (NoTransactions), and S13 checks that they are refused; nor has it
// DynamoDB Streams (NoStreams), and S15 checks that a feed is refused.
func TestConformance(t *testing.T) {
	needDynalite(t)
	conformance.RunTests(t, conformance.WithNarrowLimits(conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		cfg := awsConfig(nil)
		return awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: endpoint, Shards: 4, NoTransactions: true, NoStreams: true})
	}), "DynamoDB items are at most 400 KB and sort keys at most 1024 bytes"))
}

// TestConformanceMoto runs the whole SPEC suite on moto, which has
// TransactWriteItems: there the backend claims atomic writes (SPEC §13),
// and S13_AtomicWrite, the differential mix and the linearizability check
// hold them to it.
func TestConformanceMoto(t *testing.T) {
	ep := needMoto(t)
	conformance.RunTests(t, conformance.WithNarrowLimits(conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		cfg := awsConfig(nil)
		return awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: ep, Shards: 4})
	}), "DynamoDB items are at most 400 KB and sort keys at most 1024 bytes"))
}
