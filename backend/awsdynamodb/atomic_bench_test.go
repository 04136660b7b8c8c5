package awsdynamodb_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// BenchmarkAtomicWrite, on moto (dynalite has no transactions):
//
//	go test -run '^$' -bench BenchmarkAtomicWrite -benchtime 200x ./backend/awsdynamodb/
//
// Transaction: the adapter's atomic write of 10 rows of one partition key
// (1 KB each, 10 String columns) against one TransactWriteItems of the
// same 10 items issued with the SDK, each Put with a condition (the
// adapter's carries a row generation no newer than the request's; the
// raw one the same shape of condition on an attribute of its own).
// TransactionPacked: the same, the raw items carrying the 10 values in one
// attribute as the adapter's do. Singles: the same atomic write against the 10 rows written one PutRow
// after another. Each pair is interleaved (see interleaved); "ratio" is
// the first over the second.
func BenchmarkAtomicWrite(b *testing.B) {
	ctx := context.Background()
	ep := needMoto(b)
	c := dynamodb.NewFromConfig(awsConfig(&http.Client{}), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) })
	be, err := awsdynamodb.New(c, nil)
	if err != nil {
		b.Fatal(err)
	}
	_, tbl := newTable(b, be, nil, tablekit.TableOptions{})
	raw := rawTable(b, c)
	const rows = 10
	key := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("pk", tablekit.String("order")).Add("sk", tablekit.Integer(int64(i)))
	}
	atomic := func(i int) {
		ws := make([]tablekit.BatchWrite, rows)
		for r := range ws {
			ws[r] = tablekit.BatchPut("", key(r), benchCols(i+r))
		}
		if _, err := tbl.AtomicWrite(ctx, ws); err != nil {
			b.Fatal(err)
		}
	}
	direct := func(i int) { rawTransact(b, c, raw, rows, i, benchItem) }
	// packed: the raw items carry the 10 values in one attribute, as the
	// adapter's items carry them in .c, so that moto's per-attribute cost
	// does not favour the adapter.
	packed := func(i int) { rawTransact(b, c, raw, rows, i, packedItem) }
	singles := func(i int) {
		for r := range rows {
			if err := tbl.PutRow(ctx, key(r), benchCols(i+r)); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 20 { // warm every call shape up
		atomic(i)
		direct(i)
		packed(i)
		singles(i)
	}
	b.Run("Transaction", func(b *testing.B) { interleaved(b, "adapter", "raw", atomic, direct) })
	b.Run("TransactionPacked", func(b *testing.B) { interleaved(b, "adapter", "raw", atomic, packed) })
	b.Run("Singles", func(b *testing.B) { interleaved(b, "atomic", "singles", atomic, singles) })
}

// packedItem is benchItem with the 10 values in one String attribute.
func packedItem(pk string, sk int) map[string]types.AttributeValue {
	var v strings.Builder
	for f := range benchFields {
		v.WriteString(benchValue(sk + f))
	}
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberN{Value: strconv.Itoa(sk)},
		"c":  &types.AttributeValueMemberS{Value: v.String()},
	}
}

// rawTransact writes rows items of item with one TransactWriteItems, each
// Put conditioned as the adapter's are.
func rawTransact(b *testing.B, c *dynamodb.Client, raw string, rows, i int, item func(string, int) map[string]types.AttributeValue) {
	items := make([]types.TransactWriteItem, rows)
	for r := range items {
		items[r] = types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(raw), Item: item("order", r),
			ConditionExpression:       aws.String("NOT #v > :v"),
			ExpressionAttributeNames:  map[string]string{"#v": "ver"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(i)}},
		}}
	}
	if _, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
		b.Fatal(err)
	}
}
