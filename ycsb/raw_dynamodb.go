package tkycsb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"
)

// RawDynamoDB is a go-ycsb binding of the DynamoDB client itself, laid out
// as the adapter lays out a table (a numeric shard as the partition key,
// the record key as a binary sort key, a Binary attribute per field), so
// that YCSB's ordered scans are possible: a scan is a Query per shard from
// the start key, merged. Reads are consistent, as the adapter's are.
type RawDynamoDB struct {
	c      *dynamodb.Client
	shards int

	// AdapterShaped makes Update carry what the adapter's one-call
	// UpdateItem carries besides the fields (see backend/awsdynamodb's
	// fastwrite.go): a condition of one term on the row's generation and
	// one per field, a revision set if absent and a counter added to. The
	// conditions always hold here. It measures what the store charges for
	// evaluating them, apart from the adapter's own work.
	AdapterShaped bool

	// ItemTermShaped, with AdapterShaped, replaces the term per field by
	// one term on an item attribute (.o, never present here) that the
	// update also sets: the request an adapter keeping the newest overlay
	// version of the item in one attribute would send. It measures that
	// design's floor.
	ItemTermShaped bool
}

// NewRawDynamoDB returns a raw binding over c spreading records over
// shards partition-key values.
func NewRawDynamoDB(c *dynamodb.Client, shards int) *RawDynamoDB {
	return &RawDynamoDB{c: c, shards: max(shards, 1)}
}

const (
	rawShardAttr = "s"
	rawKeyAttr   = "k"
)

// Setup creates table unless it exists and waits for it.
func (r *RawDynamoDB) Setup(ctx context.Context, table string) error {
	_, err := r.c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(rawShardAttr), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String(rawKeyAttr), AttributeType: types.ScalarAttributeTypeB},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(rawShardAttr), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(rawKeyAttr), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return err
	}
	return dynamodb.NewTableExistsWaiter(r.c).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, 5*60e9)
}

func (r *RawDynamoDB) Close() error { return nil }

func (r *RawDynamoDB) InitThread(ctx context.Context, _, _ int) context.Context { return ctx }

func (r *RawDynamoDB) CleanupThread(context.Context) {}

func (r *RawDynamoDB) shard(key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return strconv.Itoa(int(h.Sum32() % uint32(r.shards)))
}

func (r *RawDynamoDB) key(key string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		rawShardAttr: &types.AttributeValueMemberN{Value: r.shard(key)},
		rawKeyAttr:   &types.AttributeValueMemberB{Value: []byte(key)},
	}
}

// projection returns a ProjectionExpression of fields (nil for all).
func projection(fields []string) (*string, map[string]string) {
	if len(fields) == 0 {
		return nil, nil
	}
	names := make(map[string]string, len(fields))
	refs := make([]string, len(fields))
	for i, f := range fields {
		ref := "#f" + strconv.Itoa(i)
		names[ref] = f
		refs[i] = ref
	}
	return aws.String(strings.Join(refs, ",")), names
}

func rawDynamoRecord(item map[string]types.AttributeValue) map[string][]byte {
	m := make(map[string][]byte, len(item))
	for n, v := range item {
		if b, ok := v.(*types.AttributeValueMemberB); ok && n != rawKeyAttr {
			m[n] = b.Value
		}
	}
	return m
}

func (r *RawDynamoDB) Read(ctx context.Context, table, key string, fields []string) (map[string][]byte, error) {
	proj, names := projection(fields)
	out, err := r.c.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), Key: r.key(key), ConsistentRead: aws.Bool(true),
		ProjectionExpression: proj, ExpressionAttributeNames: names,
	})
	if err != nil {
		return nil, err
	}
	if len(out.Item) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return rawDynamoRecord(out.Item), nil
}

// Scan queries every shard from start (count items each, in parallel) and
// merges them in key order.
func (r *RawDynamoDB) Scan(ctx context.Context, table, start string, count int, fields []string) ([]map[string][]byte, error) {
	proj, names := projection(append([]string{rawKeyAttr}, fields...))
	per := make([][]map[string]types.AttributeValue, r.shards)
	g, gctx := errgroup.WithContext(ctx)
	for s := range r.shards {
		g.Go(func() error {
			out, err := r.c.Query(gctx, &dynamodb.QueryInput{
				TableName:              aws.String(table),
				KeyConditionExpression: aws.String("#s = :s AND #k >= :k"),
				ExpressionAttributeNames: func() map[string]string {
					m := map[string]string{"#s": rawShardAttr, "#k": rawKeyAttr}
					for k, v := range names {
						m[k] = v
					}
					return m
				}(),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":s": &types.AttributeValueMemberN{Value: strconv.Itoa(s)},
					":k": &types.AttributeValueMemberB{Value: []byte(start)},
				},
				ProjectionExpression: proj,
				ConsistentRead:       aws.Bool(true),
				Limit:                aws.Int32(int32(count)),
			})
			if err != nil {
				return err
			}
			per[s] = out.Items
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []map[string]types.AttributeValue
	for _, items := range per {
		all = append(all, items...)
	}
	slices.SortFunc(all, func(a, b map[string]types.AttributeValue) int {
		return bytes.Compare(a[rawKeyAttr].(*types.AttributeValueMemberB).Value, b[rawKeyAttr].(*types.AttributeValueMemberB).Value)
	})
	all = all[:min(len(all), count)]
	out := make([]map[string][]byte, len(all))
	for i, it := range all {
		out[i] = rawDynamoRecord(it)
	}
	return out, nil
}

func (r *RawDynamoDB) Update(ctx context.Context, table, key string, values map[string][]byte) error {
	names := map[string]string{}
	vals := map[string]types.AttributeValue{}
	sets := make([]string, 0, len(values))
	for i, n := range sortedNames(values) {
		ref := strconv.Itoa(i)
		names["#f"+ref] = n
		vals[":v"+ref] = &types.AttributeValueMemberB{Value: values[n]}
		sets = append(sets, "#f"+ref+" = :v"+ref)
	}
	in := &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: r.key(key),
		UpdateExpression:         aws.String("SET " + strings.Join(sets, ", ")),
		ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
	}
	if r.AdapterShaped {
		names["#g"], names["#r"], names["#u"] = ".g", ".r", ".u"
		vals[":g"] = &types.AttributeValueMemberN{Value: "0"}
		vals[":r"] = &types.AttributeValueMemberS{Value: "r"}
		vals[":one"] = &types.AttributeValueMemberN{Value: "1"}
		vals[":b"] = &types.AttributeValueMemberS{Value: "~"} // above every field's value: a field is a B, never >= an S
		conds := []string{"NOT #g > :g"}
		for i := range sets {
			if !r.ItemTermShaped {
				conds = append(conds, "NOT #f"+strconv.Itoa(i)+" >= :b")
			}
		}
		if r.ItemTermShaped {
			names["#o"] = ".o"
			conds = append(conds, "NOT #o >= :b")
			sets = append(sets, "#o = :r")
		}
		in.UpdateExpression = aws.String("SET #r = if_not_exists(#r, :r), " + strings.Join(sets, ", ") + " ADD #u :one")
		in.ConditionExpression = aws.String(strings.Join(conds, " AND "))
	}
	_, err := r.c.UpdateItem(ctx, in)
	return err
}

func (r *RawDynamoDB) Insert(ctx context.Context, table, key string, values map[string][]byte) error {
	item := r.key(key)
	for n, v := range values {
		item[n] = &types.AttributeValueMemberB{Value: v}
	}
	_, err := r.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	return err
}

func (r *RawDynamoDB) Delete(ctx context.Context, table, key string) error {
	_, err := r.c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: r.key(key)})
	return err
}
