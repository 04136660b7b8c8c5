package tsproto

import (
	"net/http"

	"github.com/tablekit/tablekit"
)

// codes maps Tablestore's error codes (its "Error codes" page) to
// tablekit's sentinels, following SPEC §12: only load shedding is
// ErrThrottled and only transient failures ErrUnavailable, the two a retry
// may cure. The adapter reads every answer of the service through it; the
// emulator answers each tablekit error with a code that maps back to the
// same sentinel (tsemu's TestErrorCodesRoundTrip), except ErrUnimplemented,
// which the service answers OTSParameterInvalid for a feature it lacks.
var codes = map[string]error{
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

// ErrOf maps a Tablestore error code (and, for codes it does not know,
// the HTTP status; 0 for none) to a tablekit sentinel.
func ErrOf(code string, status int) error {
	if c, ok := codes[code]; ok {
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
