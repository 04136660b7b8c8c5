package awsdynamodb

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// mapErr turns an SDK error into what a tablekit.Backend returns: context
// errors as they are, everything else as a *tablekit.Error with a portable
// code (classify) and the SDK's error in Err, so errors.As reaches the
// typed DynamoDB exception and smithy.APIError. The message names the
// call, e.g. `PutItem`; the Client adds the operation and the portable
// table, so it names neither.
func mapErr(ctx context.Context, err error, format string, args ...any) error {
	return driver.Wrap(ctx, err, classify, "DynamoDB "+format, args...)
}

// classify returns the portable code of an SDK error (SPEC §12): by the
// DynamoDB error code when it is one the adapter knows, else by the HTTP
// status, else (no response: the request or response was lost in
// transport) ErrUnavailable. Only throttling and transient faults are
// ErrThrottled or ErrUnavailable; a limit that a retry cannot fix (an item,
// key or request too large) is ErrInvalidArgument.
func classify(err error) error {
	if noCredentials(err) {
		return tablekit.ErrPermissionDenied
	}
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
		case "UnrecognizedClientException", "InvalidSignatureException", "AccessDeniedException",
			"ExpiredTokenException", "ExpiredToken", "MissingAuthenticationToken",
			"MissingAuthenticationTokenException", "IncompleteSignatureException", "InvalidClientTokenId":
			return tablekit.ErrPermissionDenied
		case "ValidationException", "SerializationException", "ItemCollectionSizeLimitExceededException",
			"RequestEntityTooLarge", "RequestEntityTooLargeException":
			return tablekit.ErrInvalidArgument
		case "UnknownOperationException":
			return tablekit.ErrUnimplemented
		case "InternalServerError", "InternalFailure", "ServiceUnavailable", "ServiceUnavailableException",
			"TransactionConflictException", "ReplicatedWriteConflictException":
			return tablekit.ErrUnavailable
		}
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		switch s := re.HTTPStatusCode(); {
		case s == http.StatusTooManyRequests:
			return tablekit.ErrThrottled
		case s == http.StatusRequestTimeout:
			// The server (or a proxy) gave up waiting for the request:
			// transient, as a lost connection is. Node's HTTP server, which
			// dynalite runs on, answers 408 to a request it timed out.
			return tablekit.ErrUnavailable
		case s == http.StatusUnauthorized || s == http.StatusForbidden:
			return tablekit.ErrPermissionDenied
		case s >= http.StatusInternalServerError:
			return tablekit.ErrUnavailable
		case s >= http.StatusBadRequest: // 413 Request Entity Too Large among them
			return tablekit.ErrInvalidArgument
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

// noCredentials reports whether err is the SDK's failure to obtain
// credentials before it sent anything ("get identity: ..." of the
// operation: no credentials in the chain, or a provider that refused).
// That is ErrPermissionDenied, as on every backend (SPEC §12: credentials
// missing or refused); a retry finds none either.
func noCredentials(err error) bool {
	var op *smithy.OperationError
	return errors.As(err, &op) && op.Err != nil && strings.HasPrefix(op.Err.Error(), "get identity: ")
}

// sdkGaveUp reports whether the SDK already retried err's call as far as
// its retryer allows: it made more than one attempt (retry.MaxAttemptsError),
// or its retry quota ran out (ratelimit.QuotaExceededError). The error
// keeps its sentinel (a throttled call is ErrThrottled whoever retried it),
// but the adapter does not retry it again.
func sdkGaveUp(err error) bool {
	var max *retry.MaxAttemptsError
	if errors.As(err, &max) && max.Attempt > 1 {
		return true
	}
	var quota ratelimit.QuotaExceededError
	return errors.As(err, &quota)
}

// retryable reports whether a failed call that changes nothing when it fails
// (an idempotent batch chunk) may be sent again: SPEC §12's rule
// (driver.Retryable) on the error's portable code, so throttling, server
// and transport errors, unless the SDK's own retries already gave up on it
// (sdkGaveUp; with the SDK's retries off, the adapter's are the only
// ones). Context errors are final.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || sdkGaveUp(err) {
		return false
	}
	return driver.Retryable(&tablekit.Error{Code: classify(err), Err: err})
}

// inTable records the table e is about, so that its message names it once
// (a Client adds the table only to errors that have none).
func inTable(e *tablekit.Error, table string) *tablekit.Error {
	e.Table = table
	return e
}
