package gcpbigtable

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// wrap turns an error of the Bigtable client into what a tablekit backend
// returns: the context's own error when the context ended, otherwise a
// *tablekit.Error whose Code is the portable sentinel for the gRPC code
// (codeOf) and whose Err is the native error (a gRPC status error,
// reachable with errors.As or status.FromError). Messages name keys with
// tablekit.PrimaryKey.String, which quotes at most a short prefix.
func wrap(ctx context.Context, err error, format string, args ...any) error {
	return driver.Wrap(ctx, err, codeOf, format, args...)
}

// codeOf maps a Bigtable (gRPC) error to a portable sentinel, per SPEC §12:
//
//	NotFound                                  ErrTableNotFound
//	AlreadyExists                             ErrAlreadyExists
//	InvalidArgument, OutOfRange,
//	  FailedPrecondition                      ErrInvalidArgument
//	ResourceExhausted: a message larger than
//	  the gRPC size limit                     ErrInvalidArgument (a retry sends the same message)
//	ResourceExhausted: anything else          ErrThrottled (quota, server overload)
//	Unauthenticated, PermissionDenied         ErrPermissionDenied
//	Unimplemented                             ErrUnimplemented
//	Unavailable, Aborted, DeadlineExceeded,
//	  Internal, Unknown, DataLoss, Canceled   ErrUnavailable
//
// An error without a gRPC status (the connection itself failed) is
// ErrUnavailable, except the Google auth library's "could not find default
// credentials" (no credentials at all, when Open builds the clients or at a
// call) and an OAuth "invalid_grant" (credentials refused), which are
// ErrPermissionDenied as they are on every backend (SPEC §12).
func codeOf(err error) error {
	if msg := err.Error(); strings.Contains(msg, "could not find default credentials") || strings.Contains(msg, "invalid_grant") {
		return tablekit.ErrPermissionDenied
	}
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
		if tooLarge(st.Message()) {
			return tablekit.ErrInvalidArgument
		}
		return tablekit.ErrThrottled
	case codes.Unauthenticated, codes.PermissionDenied:
		return tablekit.ErrPermissionDenied
	case codes.Unimplemented:
		return tablekit.ErrUnimplemented
	}
	return tablekit.ErrUnavailable
}

// tooLarge reports whether a ResourceExhausted message is gRPC's size
// limit ("grpc: received message larger than max (5000000 vs. 4194304)",
// "grpc: trying to send message larger than max ..."), on either side of
// the connection, rather than a quota or an overloaded server.
func tooLarge(msg string) bool {
	return strings.Contains(msg, "message larger than max")
}

func isCode(err error, c codes.Code) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == c
}
