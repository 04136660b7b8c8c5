package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/mototest"
)

// BenchmarkFollowLagMoto is BenchmarkFollowLag with DynamoDB on moto as
// the source (mototest's server, patched and serialized as the
// conformance suite runs it), read through DynamoDB Streams, beside moto
// alone:
//
//	go test -run '^$' -bench FollowLagMoto -benchtime 1x -count 3 ./cmd/tablekit/
//
// "tablekit" is copy --follow (copyTables, then followTables) from a
// tablekit table on moto. "sdk" is the same writers and a follower
// written with the AWS SDK alone on a plain table (key k, Number): each
// writer's PutItem carries the time it was sent, and the follower reads
// the shard with GetRecords every 200 ms (DynamoDB Streams' 5 calls a
// second per shard, the adapter's pace), with the iterator each call
// returns, taking a record's lag when its page arrives. Both report the
// lag's p50, p99 and max, the write rate moto sustained and the 99th
// percentile of a write call's time (moto serves one request at a time,
// so a write, and a GetRecords, wait for the requests ahead of them).
func BenchmarkFollowLagMoto(b *testing.B) {
	b.Run("tablekit", func(b *testing.B) {
		benchFollowLag(b, func(b *testing.B) *tablekit.Client {
			ep := mototest.Start(b)
			b.Setenv("AWS_ACCESS_KEY_ID", "test")
			b.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			return mustOpen(b, "dynamodb://?region="+mototest.Region+"&endpoint="+ep)
		})
	})
	b.Run("sdk", benchFollowLagMotoSDK)
}

// benchFollowLagMotoSDK is BenchmarkFollowLagMoto's "sdk".
func benchFollowLagMotoSDK(b *testing.B) {
	for range b.N {
		b.StopTimer()
		ep := mototest.Start(b)
		ctx, cancel := context.WithCancel(context.Background())
		cfg := aws.Config{Region: mototest.Region, Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}
		db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) })
		st := dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(ep) })
		name := fmt.Sprintf("lag%d", time.Now().UnixNano())
		out, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String(name),
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeN}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
			BillingMode:          types.BillingModePayPerRequest,
			StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		})
		if err != nil {
			b.Fatal(err)
		}
		arn := out.TableDescription.LatestStreamArn
		ds, err := st.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
		if err != nil {
			b.Fatal(err)
		}
		it, err := st.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: ds.StreamDescription.Shards[0].ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			b.Fatal(err)
		}
		var (
			mu   sync.Mutex
			lags []time.Duration
		)
		followed := make(chan error, 1)
		go func() {
			iter := it.ShardIterator
			for slot := time.Now(); ; slot = slot.Add(getRecordsGap) {
				if d := time.Until(slot); d > 0 {
					select {
					case <-ctx.Done():
						followed <- nil
						return
					case <-time.After(d):
					}
				} else {
					slot = time.Now()
				}
				page, err := st.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(tablekit.MaxFeedPage)})
				if err != nil {
					if ctx.Err() != nil {
						err = nil
					}
					followed <- err
					return
				}
				now := time.Now().UnixMilli()
				mu.Lock()
				for _, r := range page.Records {
					if t, ok := r.Dynamodb.NewImage["t"].(*stypes.AttributeValueMemberN); ok {
						ms, _ := strconv.ParseInt(t.Value, 10, 64)
						lags = append(lags, time.Duration(now-ms)*time.Millisecond)
					}
				}
				mu.Unlock()
				iter = page.NextShardIterator
			}
		}()
		received := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(lags)
		}
		b.StartTimer()
		w := paceWrites(func(i int64) error {
			n := &types.AttributeValueMemberN{Value: strconv.FormatInt(i, 10)}
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
				"k": n, "v": n, "t": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
			}})
			return err
		})
		if w.err != nil {
			b.Fatal(w.err)
		}
		for deadline := time.Now().Add(time.Minute); received() < w.written; {
			if time.Now().After(deadline) {
				b.Fatalf("the follower received %d of %d records within a minute of the writers' end", received(), w.written)
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.StopTimer()
		cancel()
		if err := <-followed; err != nil {
			b.Fatal(err)
		}
		reportLags(b, lags)
		w.report(b)
	}
}

// getRecordsGap is the adapter's least time between two GetRecords calls
// of a shard (backend/awsdynamodb/feediter.go).
const getRecordsGap = 200 * time.Millisecond

// reportLags reports the p50, p99 and maximum of lags, in ms.
func reportLags(b *testing.B, lags []time.Duration) {
	lags = slices.Clone(lags)
	slices.Sort(lags)
	q := func(p float64) float64 { return float64(lags[int(p*float64(len(lags)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "max-ms")
}
