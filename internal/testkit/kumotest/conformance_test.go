package kumotest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/conformance"
)

// TestConformanceKumo runs the whole SPEC suite on kumo, with
// transactions and streams: atomic writes (SPEC §13) and the change feed
// (§15) included.
//
// kumo v0.33.1 fails every conditional write of the adapter (see
// dottedNamesBug): the suite would only time out, so it is skipped while
// that bug is there; TestKumoBugDottedNames fails once it is fixed.
func TestConformanceKumo(t *testing.T) {
	ep := Start(t)
	if dottedNamesBug(t, ep) {
		t.Skip("kumo evaluates conditions on attribute names holding '.' wrongly (TestKumoBugDottedNames): every conditional write of the adapter fails")
	}
	conformance.RunTests(t, conformance.WithNarrowLimits(conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		cfg := aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
		return awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: ep, Shards: 4})
	}), "DynamoDB items are at most 400 KB and sort keys at most 1024 bytes"))
}
