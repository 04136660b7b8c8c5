package aliyuntablestore

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Tablestore error codes the adapter maps (Tablestore's "Error codes"
// page), following SPEC §12: only load shedding is ErrThrottled and only
// transient failures ErrUnavailable, the two a retry may cure.
var codeMap = map[string]error{
	// Requests that break a rule or a limit.
	"OTSParameterInvalid":      tablekit.ErrInvalidArgument,
	"OTSInvalidPK":             tablekit.ErrInvalidPrimaryKey,
	"OTSOutOfColumnCountLimit": tablekit.ErrInvalidArgument,
	"OTSOutOfRowSizeLimit":     tablekit.ErrInvalidArgument,
	"OTSRequestBodyTooLarge":   tablekit.ErrInvalidArgument,
	"OTSMissingHeader":         tablekit.ErrInvalidArgument,
	"OTSConditionCheckFail":    tablekit.ErrConditionFailed,
	"OTSObjectNotExist":        tablekit.ErrTableNotFound,
	"OTSObjectAlreadyExist":    tablekit.ErrAlreadyExists,

	// Credentials refused (a wrong AccessKey ID or secret, an expired STS
	// token, a wrong instance) or lacking a permission (RAM policies).
	"OTSAuthFailed":         tablekit.ErrPermissionDenied,
	"OTSNoPermissionAccess": tablekit.ErrPermissionDenied,
	"OTSPermissionDenied":   tablekit.ErrPermissionDenied,

	// Load shedding.
	"OTSServerBusy":                              tablekit.ErrThrottled,
	"OTSStorageServerBusy":                       tablekit.ErrThrottled,
	"OTSNotEnoughCapacityUnit":                   tablekit.ErrThrottled,
	"OTSCapacityUnitExhausted":                   tablekit.ErrThrottled,
	"OTSQuotaExhausted":                          tablekit.ErrThrottled,
	"OTSTooFrequentReservedThroughputAdjustment": tablekit.ErrThrottled,
	"OTSRowOperationConflict":                    tablekit.ErrThrottled,

	// Transient failures.
	"OTSPartitionUnavailable": tablekit.ErrUnavailable,
	"OTSTimeout":              tablekit.ErrUnavailable,
	"OTSServerUnavailable":    tablekit.ErrUnavailable,
	"OTSInternalServerError":  tablekit.ErrUnavailable,
	"OTSTableNotReady":        tablekit.ErrUnavailable,
	"OTSRequestTimeout":       tablekit.ErrUnavailable,
	"OTSStorageTimeout":       tablekit.ErrUnavailable,

	"OTSUnsupportOperation": tablekit.ErrUnimplemented,
	"OTSMethodNotAllowed":   tablekit.ErrUnimplemented,
}

// codeOf maps a Tablestore error code (and, for codes it does not know,
// the HTTP status) to a tablekit sentinel.
func codeOf(code string, status int) error {
	if c, ok := codeMap[code]; ok {
		return c
	}
	switch {
	case status == http.StatusTooManyRequests:
		return tablekit.ErrThrottled
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return tablekit.ErrPermissionDenied
	case status == http.StatusRequestTimeout:
		return tablekit.ErrUnavailable
	case status == http.StatusNotImplemented:
		return tablekit.ErrUnimplemented
	case status >= 500:
		return tablekit.ErrUnavailable
	case status == http.StatusNotFound:
		return tablekit.ErrTableNotFound
	case status == http.StatusConflict:
		return tablekit.ErrAlreadyExists
	case status >= 400:
		return tablekit.ErrInvalidArgument
	}
	return tablekit.ErrUnavailable
}

// mapError turns an error of the SDK into a *tablekit.Error whose Err is
// the native error (a *tablestore.OtsError when the server answered).
// Context errors pass through unchanged.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var te *tablekit.Error
	if errors.As(err, &te) {
		return err
	}
	var oe *tablestore.OtsError
	if errors.As(err, &oe) {
		return tablekit.WrapError(codeOf(oe.Code, oe.HttpStatusCode), oe, "")
	}
	var ab *abandonedError
	if errors.As(err, &ab) {
		return ab.err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var nr *noReplayError
	if errors.As(err, &nr) {
		return tablekit.WrapError(tablekit.ErrUnavailable, err, "the write's outcome is unknown")
	}
	// The SDK's own client-side refusals ("[tablestore] invalid input",
	// "... too long", "... too much"); the adapter's requests never
	// trigger them, but a refusal is not an outage.
	if msg := err.Error(); strings.HasPrefix(msg, "[tablestore] ") &&
		(strings.Contains(msg, "invalid input") || strings.Contains(msg, "too long") || strings.Contains(msg, "too much") || strings.Contains(msg, "no primary key")) {
		return tablekit.WrapError(tablekit.ErrInvalidArgument, err, "")
	}
	// Transport failures and undecodable answers.
	return tablekit.WrapError(tablekit.ErrUnavailable, err, "")
}

// rowError maps the per-row error of a batch answer. The native error is
// a *tablestore.OtsError built from the row's code and message, so
// errors.As reaches it as it does for single-row calls.
func rowError(e tablestore.Error, requestID string) error {
	oe := &tablestore.OtsError{Code: e.Code, Message: e.Message, RequestId: requestID}
	return tablekit.WrapError(codeOf(e.Code, 0), oe, "")
}

// staleKey marks an OTSInvalidPK answer to a row call as a sign of stale
// metadata: the key was built from the Client's cached schema, and the
// table may have been deleted and created again with another one. The
// error keeps Code ErrInvalidPrimaryKey (so a program that sees it can
// still match it) and wraps both driver.ErrStaleMeta, so that the Client
// reads the table again and validates the call against the new schema,
// and the *tablestore.OtsError. Other errors pass unchanged.
func staleKey(err error) error {
	var oe *tablestore.OtsError
	if err == nil || !errors.As(err, &oe) || oe.Code != "OTSInvalidPK" || errors.Is(err, driver.ErrStaleMeta) {
		return err
	}
	return tablekit.WrapError(tablekit.ErrInvalidPrimaryKey, &staleKeyError{oe: oe}, "")
}

// staleKeyError is an OTSInvalidPK error that also matches
// driver.ErrStaleMeta. Its message is the server's.
type staleKeyError struct{ oe *tablestore.OtsError }

func (e *staleKeyError) Error() string   { return e.oe.Error() }
func (e *staleKeyError) Unwrap() []error { return []error{driver.ErrStaleMeta, e.oe} }
