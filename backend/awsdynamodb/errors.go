package awsdynamodb

import (
	"context"
	"errors"
	"net/http"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablekit/tablekit"
)

// mapErr turns an SDK error into what a tablekit.Backend returns: context
// errors as they are, everything else as a *tablekit.Error with a portable
// code and the SDK's error in Err (so errors.As reaches the typed
// DynamoDB exception). what names the call, e.g. `PutItem on table "t"`.
func mapErr(ctx context.Context, err error, what string) error {
	return tablekit.WrapNative(ctx, err, classify, "DynamoDB %s", what)
}

// classify returns the portable code of an SDK error.
func classify(err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ResourceNotFoundException":
			return tablekit.ErrTableNotFound
		case "ResourceInUseException":
			return tablekit.ErrAlreadyExists
		case "ConditionalCheckFailedException", "TransactionCanceledException":
			return tablekit.ErrConditionFailed
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
			"LimitExceededException", "TooManyRequestsException", "Throttling":
			return tablekit.ErrThrottled
		case "ValidationException", "SerializationException", "ItemCollectionSizeLimitExceededException":
			return tablekit.ErrInvalidArgument
		case "UnknownOperationException", "UnrecognizedClientException":
			return tablekit.ErrUnimplemented
		}
	}
	return tablekit.ErrUnavailable
}

// isCode reports whether err is a DynamoDB API error with one of codes.
func isCode(err error, codes ...string) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	for _, c := range codes {
		if api.ErrorCode() == c {
			return true
		}
	}
	return false
}

// retryable reports whether a failed call that changes nothing when it fails
// (an idempotent batch chunk) may be sent again: throttling, server errors
// and transport errors. Validation errors, missing tables and context
// errors are final.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(classify(err), tablekit.ErrThrottled) {
		return true
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= http.StatusInternalServerError {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorFault() == smithy.FaultServer || api.ErrorCode() == "InternalServerError"
	}
	// No API error: the request or response was lost in transport.
	return true
}
