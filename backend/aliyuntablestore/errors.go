package aliyuntablestore

import (
	"context"
	"errors"
	"strings"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/internal/tsproto"
)

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
		return tablekit.WrapError(tsproto.ErrOf(oe.Code, oe.HttpStatusCode), oe, "")
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
	return tablekit.WrapError(tsproto.ErrOf(e.Code, 0), oe, "")
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
