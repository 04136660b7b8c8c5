package gcpbigtable

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tablekit/tablekit"
)

// wrap turns an error of the Bigtable client into what a tablekit backend
// returns: the context's own error when the context ended, otherwise a
// *tablekit.Error whose Code is the portable sentinel for the gRPC code and
// whose Err is the native error (a gRPC status error, reachable with
// errors.As or status.FromError).
func wrap(ctx context.Context, err error, format string, args ...any) error {
	return tablekit.WrapNative(ctx, err, codeOf, format, args...)
}

// codeOf maps a gRPC status code to a portable sentinel.
func codeOf(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return tablekit.ErrUnavailable
	}
	switch st.Code() {
	case codes.NotFound:
		return tablekit.ErrTableNotFound
	case codes.AlreadyExists:
		return tablekit.ErrAlreadyExists
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return tablekit.ErrInvalidArgument
	case codes.ResourceExhausted:
		return tablekit.ErrThrottled
	case codes.Unimplemented:
		return tablekit.ErrUnimplemented
	}
	return tablekit.ErrUnavailable
}

func isCode(err error, c codes.Code) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == c
}
