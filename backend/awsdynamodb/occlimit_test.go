package awsdynamodb_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// An optimistic write whose row another writer changes between each of
// its reads and its conditional write (here, on dynalite, a one-call
// update by a second client, made just before each of the first
// client's conditional PutItems) gives up after the limit's rounds with
// ErrThrottled naming the table, the key and the limit, never applied,
// instead of spinning until its context ends.
func TestOptimisticWriteRoundsBounded(t *testing.T) {
	ctx := context.Background()
	defer awsdynamodb.SetMaxOCCAttempts(5)()
	db, tbl := newTable(t, newBackend(t), nil, tablekit.TableOptions{})
	key := tablekit.Key("pk", tablekit.String("hot")).Add("sk", tablekit.Integer(0))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "x", Value: tablekit.Integer(0)}}); err != nil {
		t.Fatal(err)
	}
	var puts atomic.Int64
	rival := func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("rival", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if p, ok := in.Parameters.(*dynamodb.PutItemInput); ok && p.ConditionExpression != nil {
				n := puts.Add(1)
				if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("x", tablekit.Integer(n))}); err != nil {
					return middleware.InitializeOutput{}, middleware.Metadata{}, err
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	}
	loser, err := awsdynamodb.New(newClient(t, nil, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, rival) }), nil)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := db.DescribeTable(ctx, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	_, err = loser.Write(ctx, &tablekit.WriteRequest{Meta: &meta, Kind: tablekit.WriteUpdate, Key: key,
		Changes: []tablekit.Change{tablekit.Increment("n", 1)}, Now: tablekit.SystemClock{}.Now().UnixMilli()})
	if !errors.Is(err, tablekit.ErrThrottled) || !strings.Contains(err.Error(), tbl.Name()) || !strings.Contains(err.Error(), "hot") || !strings.Contains(err.Error(), " 5 rounds") {
		t.Fatalf("the optimistic write that always loses: %v, want ErrThrottled naming the table, the key and the limit of 5 rounds", err)
	}
	if n := puts.Load(); n != 5 {
		t.Errorf("%d conditional PutItems, want 5 (one a round)", n)
	}
	row, found, err := tbl.GetRow(ctx, key)
	if err != nil || !found {
		t.Fatal(found, err)
	}
	if _, ok := row.Get("n"); ok {
		t.Error("the write that gave up applied its increment")
	}
	if v, _ := row.Get("x"); !v.Equal(tablekit.Integer(5)) {
		t.Errorf("x = %v, want 5, the rival's last write", v)
	}
}
