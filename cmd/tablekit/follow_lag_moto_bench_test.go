package main

import (
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/mototest"
)

// BenchmarkFollowLagMoto is BenchmarkFollowLag with DynamoDB on moto as
// the source (mototest's server, patched and serialized as the
// conformance suite runs it), read through DynamoDB Streams:
//
//	go test -run '^$' -bench FollowLagMoto -benchtime 1x -count 3 ./cmd/tablekit/
//
// Besides the follower's 200 ms poll, the adapter spaces a shard's
// GetRecords calls 200 ms apart (DynamoDB Streams' 5 a second); moto
// serves one request at a time, so writes/s says what rate it sustained.
func BenchmarkFollowLagMoto(b *testing.B) {
	benchFollowLag(b, func(b *testing.B) *tablekit.Client {
		ep := mototest.Start(b)
		b.Setenv("AWS_ACCESS_KEY_ID", "test")
		b.Setenv("AWS_SECRET_ACCESS_KEY", "test")
		return mustOpen(b, "dynamodb://?region="+mototest.Region+"&endpoint="+ep)
	})
}
