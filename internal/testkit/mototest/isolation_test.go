//go:build unix

package mototest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestTransactionsIsolated: canceled transactions run concurrently with
// committed increments of another item; every increment must remain. On
// moto_server as shipped (threaded, unserialized) a canceled transaction
// restores the copy of the table it took when it began and erases the
// increments committed meanwhile.
func TestTransactionsIsolated(t *testing.T) {
	ctx := context.Background()
	ep := Start(t)
	c := dynamodb.NewFromConfig(aws.Config{Region: Region, Credentials: credentials.NewStaticCredentialsProvider("t", "t", "")},
		func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) })
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("iso"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	key := func(k string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: k}}
	}
	const n = 150
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // increments, each acknowledged
		defer wg.Done()
		for range n {
			if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String("iso"), Key: key("counter"),
				UpdateExpression:          aws.String("ADD n :one"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() { // transactions whose condition fails
		defer wg.Done()
		for i := range n {
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String("iso"), Item: map[string]types.AttributeValue{
					"k": &types.AttributeValueMemberS{Value: "x" + strconv.Itoa(i)},
				}}},
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String("iso"), Key: key("absent"),
					ConditionExpression: aws.String("attribute_exists(k)")}},
			}})
			var tce *types.TransactionCanceledException
			if !errors.As(err, &tce) {
				t.Errorf("transaction with a failing ConditionCheck: %v, want TransactionCanceledException", err)
				return
			}
		}
	}()
	wg.Wait()
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("iso"), Key: key("counter"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	got := "absent"
	if v, ok := out.Item["n"].(*types.AttributeValueMemberN); ok {
		got = v.Value
	}
	if got != strconv.Itoa(n) {
		t.Errorf("counter = %s after %d acknowledged increments beside canceled transactions, want %d", got, n, n)
	}
}
