package awsdynamodb

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go"

	"github.com/tablekit/tablekit"
)

// Stores that lack an API the adapter declares.
//
// Capabilities declares atomic writes and a change feed unless
// Options.NoTransactions or Options.NoStreams (transactions=false,
// streams=false in a dynamodb:// URL) say the store lacks them; Open
// sends no request, so it cannot tell. dynalite serves neither
// TransactWriteItems nor DynamoDB Streams: it answers
// UnknownOperationException to both, and a ValidationException to the
// UpdateTable that enables a stream. So before the first atomic write and
// the first change-feed call, the backend asks the store once whether it
// serves the API (a TransactWriteItems checking an item of a table whose
// name DynamoDB refuses, writing nothing; a ListStreams of one stream), and when the
// store does not know the operation it answers ErrUnimplemented naming
// the URL parameter and the option, before writing anything (the feed's
// flag in the metadata item included). The answer is kept for the
// backend's life; an answer that is no API error (a lost connection) is
// not, and the call goes on to meet it itself.

// probeTable is the table the TransactWriteItems probe names: no
// DynamoDB table name holds a space.
const probeTable = "tablekit probe"

// probe is one such question's kept answer.
type probe struct {
	mu    sync.Mutex
	known bool
	err   error // nil: the store serves the API
}

// check returns the kept answer, or asks with ask and keeps a definite one.
func (p *probe) check(ctx context.Context, ask func(context.Context) error, refusal func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return p.err
	}
	err := ask(ctx)
	var api smithy.APIError
	switch {
	case err == nil:
	case isUnknownOperation(err):
		err = refusal()
	case errors.As(err, &api):
		err = nil // the store knows the operation
	default:
		return nil // no answer: the call meets the fault itself
	}
	p.known, p.err = true, err
	return err
}

// isUnknownOperation reports whether err is a store's answer that it does
// not serve the operation.
func isUnknownOperation(err error) bool { return isCode(err, "UnknownOperationException") }

// noTransactionsErr is the error of an atomic write on a store without
// TransactWriteItems.
func noTransactionsErr() error {
	return tablekit.Errorf(tablekit.ErrUnimplemented,
		"this DynamoDB endpoint does not serve TransactWriteItems (dynalite does not): open it with transactions=false in the dynamodb:// URL (Options.NoTransactions), which declares no atomic writes")
}

// noStreamsErr is the error of a change-feed call on a store without
// DynamoDB Streams.
func noStreamsErr() error {
	return tablekit.Errorf(tablekit.ErrUnimplemented,
		"this DynamoDB endpoint does not serve DynamoDB Streams (dynalite does not): open it with streams=false in the dynamodb:// URL (Options.NoStreams), which declares no change feed")
}

// haveTransactions returns nil when the store serves TransactWriteItems
// (or did not answer), else noTransactionsErr.
func (b *Backend) haveTransactions(ctx context.Context) error {
	return b.txProbe.check(ctx, func(ctx context.Context) error {
		// A ConditionCheck on no table: its name breaks DynamoDB's rules
		// (which the SDK does not check), so a store that serves
		// TransactWriteItems refuses it with an error of its own.
		_, err := b.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
			ConditionCheck: &types.ConditionCheck{TableName: aws.String(probeTable), Key: keyAttrs(0, []byte{0}), ConditionExpression: aws.String("attribute_exists(#k)"),
				ExpressionAttributeNames: map[string]string{"#k": attrKey}},
		}}})
		return err
	}, noTransactionsErr)
}

// haveStreams returns nil when the store serves DynamoDB Streams (or did
// not answer), else noStreamsErr.
func (b *Backend) haveStreams(ctx context.Context) error {
	return b.streamsProbe.check(ctx, func(ctx context.Context) error {
		_, err := b.streamsC.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{Limit: aws.Int32(1)})
		return err
	}, noStreamsErr)
}
