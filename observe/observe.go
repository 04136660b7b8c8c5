// Package observe is for telemetry integrations of tablekit (package
// tkotel is one): the interfaces a tablekit.Client reports its operations,
// retries and outcomes to, installed with tablekit.WithObserver. It
// depends on no telemetry library.
package observe

import (
	"context"
	"time"
)

// Observer sees every operation of a tablekit.Client: its start, the retries made
// on its behalf and its end. Package tkotel implements it with
// OpenTelemetry traces and metrics; tablekit itself depends on no telemetry
// library. Install one with tablekit.WithObserver.
//
// Operations are the Client's and Table's exported methods (PutRow,
// GetRange, BatchWriteRow, ...), and one Rows iteration is one operation.
// An operation made on behalf of another (a batch helper's chunks) is an
// operation of its own, started with the outer one's context.
type Observer interface {
	// StartOperation is called when an operation starts, before any
	// backend call. It returns the context the operation runs with (the
	// backend sees it, so a span put there is the parent of the backend's
	// own spans) and the observation of this one operation, or nil to
	// skip it; a nil observation costs the operation nothing more.
	StartOperation(ctx context.Context, op Operation) (context.Context, Observation)
}

// Observation receives what happens to one operation. Retry may be called
// from several goroutines at once (a batch's rows are written in
// parallel); End is called once, last.
type Observation interface {
	// Retry is called before a call of the operation is made again.
	Retry(ctx context.Context, r Retry)
	// End is called when the operation returns (for a Rows iteration,
	// when the iteration stops).
	End(ctx context.Context, o Outcome)
}

// Operation describes an operation when it starts.
type Operation struct {
	// System is OpenTelemetry's db.system.name, as the backend names it
	// (tablekit.SystemNamer: "aws.dynamodb", "tablekit.bigtable", ...), or
	// "tablekit." and the backend package's name.
	System string
	// Name is the method: "PutRow", "GetRange", "BatchWriteRow", ...
	Name string
	// Table is the table, or "" for none or several (a batch).
	Table string
	// BatchSize is the number of entries of a batch operation, 0 otherwise.
	BatchSize int
}

// Outcome describes an operation when it ends.
type Outcome struct {
	// Rows is how many rows were returned or applied (without errors).
	Rows int
	// Bytes is their size (tablekit.Row.Size; a write's key and cells or changes).
	Bytes int
	// Failed is how many entries of a batch failed on their own.
	Failed int
	// Retries counts the Client's stale-metadata retries and the
	// backend's back-offs (backend/driver); a native SDK's are not seen.
	Retries int
	// Err is the operation's error, nil on success.
	Err error
	// ErrorType is Err's code as OpenTelemetry's error.type (see
	// [Retry.ErrorType]).
	ErrorType string
}

// Retry describes one retry.
type Retry struct {
	// Attempt is 1 for a call's first retry; 0 if the backend does not count.
	Attempt int
	// Delay is the back-off before the retry, 0 when it follows at once.
	Delay time.Duration
	// Reason is the error retried, nil when the backend did not say.
	Reason error
	// ErrorType is Reason's code as OpenTelemetry's error.type: the
	// sentinel's name in snake case ("throttled", "table_not_found", ...),
	// "deadline_exceeded", "canceled", "stale_metadata" or "_OTHER".
	ErrorType string
}
