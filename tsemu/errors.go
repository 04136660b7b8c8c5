package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"errors"
	"fmt"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
)

// otsError is a Tablestore error: HTTP status, error code and message.
type otsError struct {
	status int
	code   string
	msg    string
}

func (e *otsError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.msg) }

func (e *otsError) proto() *otsprotocol.Error {
	return &otsprotocol.Error{Code: proto.String(e.code), Message: proto.String(e.msg)}
}

func paramErr(format string, args ...any) *otsError {
	return &otsError{status: 400, code: "OTSParameterInvalid", msg: fmt.Sprintf(format, args...)}
}

func invalidPK(format string, args ...any) *otsError {
	return &otsError{status: 400, code: "OTSInvalidPK", msg: fmt.Sprintf(format, args...)}
}

func authErr(msg string) *otsError {
	return &otsError{status: 403, code: "OTSAuthFailed", msg: msg}
}

// errAuth is the answer to a request whose access key ID, instance name
// or signature is wrong: the service's answer to a bad signature, the same
// for all three.
var errAuth = authErr("Signature mismatch.")

func internalError(format string, args ...any) *otsError {
	return &otsError{status: 500, code: "OTSInternalServerError", msg: fmt.Sprintf(format, args...)}
}

// unsupported reports a Tablestore feature this emulator does not implement.
func unsupported(what string) *otsError {
	return paramErr("%s is not supported by the tablekit Tablestore emulator.", what)
}

// toOTS turns any error into the Tablestore error a client sees. Errors
// of tablekit map by their portable code; their message is the tablekit
// message without the "tablekit: Op table" prefix.
func toOTS(err error) *otsError {
	var oe *otsError
	if errors.As(err, &oe) {
		return oe
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &otsError{status: 503, code: "OTSTimeout", msg: "Operation timeout."}
	}
	msg := err.Error()
	var te *tablekit.Error
	if errors.As(err, &te) && te.Msg != "" {
		msg = te.Msg
	}
	switch {
	case errors.Is(err, tablekit.ErrConditionFailed):
		return &otsError{status: 403, code: "OTSConditionCheckFail", msg: "Condition check failed."}
	case errors.Is(err, tablekit.ErrTableNotFound):
		return errNoTable
	case errors.Is(err, tablekit.ErrAlreadyExists):
		return &otsError{status: 409, code: "OTSObjectAlreadyExist", msg: "Requested table already exists."}
	case errors.Is(err, tablekit.ErrInvalidPrimaryKey):
		return invalidPK("%s", msg)
	case errors.Is(err, tablekit.ErrInvalidArgument):
		return paramErr("%s", msg)
	case errors.Is(err, tablekit.ErrThrottled):
		return &otsError{status: 503, code: "OTSServerBusy", msg: "Server is busy."}
	case errors.Is(err, tablekit.ErrUnavailable):
		return &otsError{status: 503, code: "OTSServerUnavailable", msg: msg}
	case errors.Is(err, tablekit.ErrUnimplemented):
		return paramErr("%s", msg)
	}
	return internalError("%s", msg)
}
