package tablekit

import (
	"context"
	"strconv"
)

// Backend is what an adapter implements: a store of SPEC.md tables. Programs
// do not call it; they call a [Client], which validates every request once,
// fills in defaults and versions, and hands the backend requests that are
// already well formed. A backend's job is to apply them with SPEC's
// semantics, atomically per row. Package conformance proves that it does;
// package rowmodel holds SPEC's single-row rules as functions, and package
// backend/driver the plumbing adapters share (error wrapping, retries,
// bounded parallelism).
//
// The contract, for every method:
//
//   - Concurrency. A Backend is safe for concurrent use by many goroutines
//     and by many Clients, in this process and in others: two Clients over
//     one store each keep their own cache of table metadata.
//   - Ownership. A request and everything it points to (Meta, keys,
//     columns, changes, filters) belongs to the caller and is read-only to
//     the backend, which must not keep any part of it after the method
//     returns (copy what is stored). Meta in particular is shared by every
//     request of the table and must never be changed. What a method returns
//     belongs to the caller; the backend keeps no reference to it.
//   - Time. Every request carries Now, the client clock's time in
//     milliseconds, taken once per operation. Backends use it, not a clock
//     of their own, for TTL visibility, the version of increments and
//     anything else that reads time, so that a test's ManualClock governs
//     every backend alike.
//   - Metadata may be stale. Meta is the Client's cached copy of the table,
//     possibly older than the store's. A backend that keeps Meta's
//     Incarnation must refuse a request whose Incarnation is not the
//     table's current one (the table was deleted and created again) with
//     [ErrTableNotFound] or with an error matching driver.ErrStaleMeta;
//     the Client then reads the table again and retries against the new
//     schema. A backend that applies Options on the client side (trims
//     versions when it writes, or hides cells when it reads) must never
//     remove a version written under a newer Generation than Meta's: it
//     refuses such a write with driver.ErrStaleMeta instead. Nor may it
//     reveal a version newer options hide (SPEC §5: a MaxVersions lowered
//     since Meta was read hides versions that Meta's options show): a
//     write that removes a stored version while keeping an older one
//     (rowmodel.Reveals) is applied only once the store's Generation is
//     confirmed to be Meta's (rowmodel.CheckGeneration). A backend
//     whose store keeps the schema and options itself (Tablestore) may
//     report an empty Incarnation and Generation 0 and ignore both.
//   - Errors. Context errors are returned as they are. Anything else is an
//     *Error whose Code is one of the portable sentinels, with the native
//     error in Err (driver.Wrap builds it): the same native condition gives
//     the same Code on every backend, and only [ErrThrottled] and
//     [ErrUnavailable] say a retry may succeed. A message quotes no more
//     than a short prefix of a key or value and never a credential.
//   - Close. The Client calls Close once, when it is closed, and starts no
//     call after it; calls already in flight may fail with any error but
//     must not panic or corrupt the store. Close releases everything the
//     backend holds (connections, goroutines); a backend made from a
//     native client the caller passed in does not close that client.
//
// A backend may also implement [BatchReader] and [BatchWriter] when its
// store has batch calls, [RangeScanner] when it can lend a range's rows
// without copying them (for [Table.Scan]), and As to offer its native
// client (see [Client.As]).
//
// Names: what a backend receives is a ...Request and what it returns a
// ...Response ([GetRowRequest], [GetRangeRequest] and [GetRangeResponse],
// [WriteRequest] and [WriteResponse]); what a Client returns to a program
// is a ...Result ([RangeResult], [BatchGetResult], [BatchWriteResult],
// [UpdateResult]), so the two cannot be mixed up.
type Backend interface {
	// CreateTable creates a table. meta is complete: options have their
	// defaults, and Incarnation is a new random identifier the backend
	// stores and reports. A table of that name already present is
	// ErrAlreadyExists.
	CreateTable(ctx context.Context, meta *TableMeta) error
	// DescribeTable returns the table's meta exactly as created or last
	// updated, with its current Incarnation and Generation.
	DescribeTable(ctx context.Context, table string) (*TableMeta, error)
	// ListTables returns every table's name, in any order.
	ListTables(ctx context.Context) ([]string, error)
	// UpdateTable replaces the table's options with req.Options (complete)
	// if the table is still the one req.Meta describes: a different
	// Incarnation is ErrTableNotFound, a different Generation is
	// ErrConditionFailed (the Client then reads the table again and
	// retries). It returns the table's meta after the change, whose
	// Generation is req.Meta.Generation+1 on backends that count them.
	UpdateTable(ctx context.Context, req *UpdateTableRequest) (*TableMeta, error)
	// DeleteTable removes a table and its rows.
	DeleteTable(ctx context.Context, table string) error

	// GetRow returns the row, or nil when it does not exist or fails the
	// filter.
	GetRow(ctx context.Context, req *GetRowRequest) (*Row, error)
	// GetRange returns one page of a range: at most req.Limit rows that
	// exist and pass the filter, in order. It may return fewer, even none,
	// with Next set (for example after examining MaxScanRows rows); Next is
	// nil only when the range is exhausted.
	GetRange(ctx context.Context, req *GetRangeRequest) (*GetRangeResponse, error)
	// Write applies one put, update or delete, atomically: the condition
	// is checked against the row as it is when the write is applied, and
	// when it fails, or an increment fails, nothing is written. It returns
	// the increments of an update (nil otherwise).
	Write(ctx context.Context, req *WriteRequest) (*UpdateResult, error)

	// Close releases the backend's resources.
	Close() error
}

// BatchReader is implemented by a backend whose store reads many rows in
// one call. Without it, the Client calls GetRow for each row, a few at a
// time.
type BatchReader interface {
	// BatchGetRow returns one result per request, in order, each with its
	// own error. The error return is for a failure of the whole call. The
	// requests may address several tables.
	BatchGetRow(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error)
}

// BatchWriter is implemented by a backend whose store writes many rows in
// one call. Without it, the Client calls Write for each write, a few at a
// time.
type BatchWriter interface {
	// BatchWriteRow applies each write independently, as Write would, and
	// returns one result per write, in order, each with its own error. The
	// error return is for a failure of the whole call. No two requests of
	// one call address the same row (the Client orders same-row writes by
	// splitting the batch), so they may be applied in any order or in
	// parallel.
	BatchWriteRow(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error)
}

// ReadSpec is a resolved read selection (SPEC §8): the client has validated
// it and turned defaults into values.
type ReadSpec struct {
	// Columns is the projection; nil means every column. Key columns always
	// come back and never appear here. The Client sends it sorted, without
	// repeats, and may share it between requests: a backend only reads it.
	Columns []string
	// MaxVersions is how many versions per column to return, ≥ 1 (the
	// default of 1 and "all in the time range" are already resolved).
	MaxVersions int
	// TimeRange, if non-nil, limits versions to [Start, End).
	TimeRange *TimeRange
	// Filter, if non-nil, decides which rows are returned. It is evaluated
	// on the cells the read selects (visibility, TimeRange and MaxVersions
	// applied) before the projection, so it may read columns the
	// projection leaves out.
	Filter Filter
}

// UpdateTableRequest changes a table's options.
type UpdateTableRequest struct {
	// Meta is the table as the Client last read it; the change applies
	// only if the table's Incarnation and Generation are still these.
	Meta *TableMeta
	// Options is complete: every field is set.
	Options TableOptions
}

// GetRowRequest reads one row.
type GetRowRequest struct {
	Meta *TableMeta
	Key  PrimaryKey
	Read ReadSpec
	Now  int64
}

// GetRowResponse is one result of BatchGetRow: Row is nil when the row does not
// exist; Err is that row's own error.
type GetRowResponse struct {
	Row *Row
	Err error
}

// GetRangeRequest reads one page of [Start, End) (forward) or (End, Start]
// (backward, walking down from Start). Start and End may contain InfMin and
// InfMax; Start is inclusive.
type GetRangeRequest struct {
	Meta     *TableMeta
	Start    PrimaryKey
	End      PrimaryKey
	Backward bool
	Limit    int // 1..MaxPageRows+1 (one more than a page when resuming after a key)
	Read     ReadSpec
	Now      int64
}

// GetRangeResponse is one page of a range, a backend's answer to a
// [GetRangeRequest] (a Client answers GetRange with a [RangeResult]). Next, when non-nil, is the inclusive
// start key of the rest of the range.
type GetRangeResponse struct {
	Rows []Row
	Next PrimaryKey
}

// WriteRequest is one write: a put, an update or a delete of the row at
// Key, guarded by Condition.
type WriteRequest struct {
	Meta *TableMeta
	Kind WriteKind
	Key  PrimaryKey
	// Columns are a put's cells, every one with its version set (there may
	// be none: a key-only row). Empty for the other kinds.
	Columns []Column
	// Changes are an update's changes, in order; a Put change has its
	// version set, an Increment has Version = Now (the rule of SPEC §8
	// decides the version it is written at). Empty for the other kinds.
	Changes   []Change
	Condition Condition
	Now       int64
}

// String formats w for messages: `Put table "t" (k=Integer(1)) 2 columns if ExpectExist`.
func (w *WriteRequest) String() string {
	name := ""
	if w.Meta != nil {
		name = w.Meta.Name
	}
	s := w.Kind.String() + " table " + strconv.Quote(name) + " " + w.Key.String()
	switch w.Kind {
	case WritePut:
		s += " " + strconv.Itoa(len(w.Columns)) + " columns"
	case WriteUpdate:
		s += " " + strconv.Itoa(len(w.Changes)) + " changes"
	}
	if !w.Condition.IsZero() {
		s += " if " + w.Condition.String()
	}
	return s
}

// UpdateResult reports what an update did: the new value of each
// incremented column, in the order the increments were given.
type UpdateResult struct {
	Increments []Column
}

// WriteResponse is one result of BatchWriteRow: Err is that row's own error;
// Update holds an update's increments.
type WriteResponse struct {
	Update *UpdateResult
	Err    error
}

// Limits of SPEC §2 and §8 that the client enforces.
const (
	MaxKeyColumns      = 4
	MaxNameLength      = 255
	MaxKeyValueSize    = 1024
	MaxValueSize       = 2 << 20
	MaxColumnsPerWrite = 1024
	MaxWriteSize       = 4 << 20
	MaxBatchGet        = 100
	MaxBatchWrite      = 200
	MaxPageRows        = 5000
	MaxPageSize        = 4 << 20
	// MaxScanRows is how many stored rows a backend's GetRange page should
	// examine at most: a range whose rows mostly fail a filter then still
	// answers promptly, with Next set.
	MaxScanRows = 10000
)
