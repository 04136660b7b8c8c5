//go:build unix

package mototest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestTransactionsIsolated: canceled transactions run concurrently with
// committed increments of another item; every increment must remain. On
// moto_server as shipped (threaded, unserialized) a canceled transaction
// restores the copy of the table it took when it began and erases the
// increments committed meanwhile (TestMotoBugTransactionIsolation).
func TestTransactionsIsolated(t *testing.T) {
	c, _ := clients(StartWith(t, &Options{SwitchEvery: time.Microsecond})) // threads interleave: without the patch the race shows
	isoTable(t, c)
	got, other := isolationRace(t, c, "counter")
	if other != nil {
		t.Errorf("transaction with a failing ConditionCheck: %v, want TransactionCanceledException", other)
	}
	if want := strconv.Itoa(isoN); got != want {
		t.Errorf("counter = %s after %s acknowledged increments beside canceled transactions, want %s", got, want, want)
	}
}

// isoN is how many increments, and canceled transactions, one
// isolationRace runs.
const isoN = 150

// isoTable creates table "iso" (key k String).
func isoTable(t *testing.T, c *dynamodb.Client) {
	t.Helper()
	_, err := c.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String("iso"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isolationRace runs isoN acknowledged increments of item counter of
// table "iso" beside isoN transactions whose ConditionCheck fails, and
// returns the counter's value after them ("absent" when there is none)
// and the first answer to a transaction that was not its cancellation.
func isolationRace(t *testing.T, c *dynamodb.Client, counter string) (value string, other error) {
	t.Helper()
	ctx := context.Background()
	key := func(k string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: k}}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // increments, each acknowledged
		defer wg.Done()
		for range isoN {
			if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String("iso"), Key: key(counter),
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
		for i := range isoN {
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String("iso"), Item: key(fmt.Sprintf("x_%s_%d", counter, i))}},
				{ConditionCheck: &types.ConditionCheck{TableName: aws.String("iso"), Key: key("absent"),
					ConditionExpression: aws.String("attribute_exists(k)")}},
			}})
			var tce *types.TransactionCanceledException
			if !errors.As(err, &tce) && other == nil {
				other = fmt.Errorf("transaction %d: %w", i, err)
			}
		}
	}()
	wg.Wait()
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("iso"), Key: key(counter), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := out.Item["n"].(*types.AttributeValueMemberN); ok {
		return v.Value, other
	}
	return "absent", other
}
