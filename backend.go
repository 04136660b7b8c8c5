package tablekit

import (
	"context"
	"fmt"
	"strconv"
)

// Backend is for adapter authors: a store of SPEC.md tables, which applies
// the well-formed requests a [Client] hands it with SPEC's semantics,
// atomically per row (package conformance proves it; packages rowmodel and
// backend/driver help).
//
// The contract, for every method:
//
//   - Concurrency. Safe for many goroutines and Clients, in any process.
//   - Ownership. A request and all it points to (Meta, shared by the
//     table's requests) is read-only and not kept; what a method returns is
//     the caller's.
//   - Time. Requests carry Now, the client clock's milliseconds; backends
//     use it, not a clock of their own, for TTL and increments.
//   - Metadata may be stale. Meta is the Client's cached copy. A backend
//     that keeps Meta's Incarnation refuses a request of another one with
//     [ErrTableNotFound] or an error matching driver.ErrStaleMeta, and one
//     that applies Options itself (trims or hides versions) refuses, with
//     driver.ErrStaleMeta, a write that would remove a version written under
//     a newer Generation, or reveal one newer options hide (SPEC §5;
//     rowmodel.Reveals, CheckGeneration); the Client reads and retries.
//     A store that keeps schema and options itself (Tablestore) may report an
//     empty Incarnation and Generation 0 and ignore both.
//   - Errors. Context errors are returned as they are; anything else is an
//     *Error whose Code is a portable sentinel, wrapping the native error
//     (driver.Wrap): one native condition, one Code on every backend. Only
//     [ErrThrottled] and [ErrUnavailable] say a retry may succeed. Messages
//     quote no more than a short prefix of a key or value, never a secret.
//   - Close. Called once, last; calls in flight may fail but never panic or
//     corrupt. It releases all but a native client the caller passed in.
//
// Optional: [BatchReader], [BatchWriter], [RangeScanner], [AtomicWriter]
// (SPEC §13, refused without it), [NativeAccessor], [SystemNamer],
// [CapabilityDeclarer]. An optional method may answer
// [ErrSkip] and the Client takes its fallback (GetRow per row, Write per
// write, GetRange pages), so a wrapper ([Wrapper]; package faults) is one
// type that forwards every optional method, answering ErrSkip where the
// backend inside lacks it, and has that backend's [Capabilities]. Adding a
// capability touches a Capabilities field (and [CapabilitiesOf]), its
// interface, the Client's fallback or refusal ([ErrUnimplemented]), each
// wrapper's forwarding method, the backends that have it, and conformance.
type Backend interface {
	// CreateTable creates a table (meta is complete, with a new random
	// Incarnation to store and report), or fails with ErrAlreadyExists.
	CreateTable(ctx context.Context, meta *TableMeta) error
	// DescribeTable returns the table's meta exactly as created or last
	// updated, with its current Incarnation and Generation.
	DescribeTable(ctx context.Context, table string) (*TableMeta, error)
	// ListTables returns every table's name, in any order.
	ListTables(ctx context.Context) ([]string, error)
	// UpdateTable replaces the options with req.Options if the table is
	// still req.Meta's (another Incarnation: ErrTableNotFound; another
	// Generation: ErrConditionFailed) and returns the new meta, whose
	// Generation is req.Meta.Generation+1 where backends count them.
	UpdateTable(ctx context.Context, req *UpdateTableRequest) (*TableMeta, error)
	// DeleteTable removes a table and its rows.
	DeleteTable(ctx context.Context, table string) error

	// GetRow returns the row, or nil when it does not exist or fails the
	// filter.
	GetRow(ctx context.Context, req *GetRowRequest) (*Row, error)
	// GetRange returns one page: at most req.Limit rows that exist and
	// pass the filter, in order; fewer, even none, with Next set (after
	// examining MaxScanRows rows, say). Next is nil only at the end.
	GetRange(ctx context.Context, req *GetRangeRequest) (*GetRangeResponse, error)
	// Write applies one put, update or delete atomically, its condition
	// checked against the row as it is then (a failed condition or
	// increment writes nothing), and returns an update's increments.
	Write(ctx context.Context, req *WriteRequest) (*UpdateResult, error)

	Close() error
}

// BatchReader is implemented by a backend whose store reads many rows in
// one call; without it, or on [ErrSkip], the Client calls GetRow per row.
type BatchReader interface {
	// BatchGetRow returns one result per request (of any tables), in
	// order, each with its own error; err fails the whole call.
	BatchGetRow(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error)
}

// BatchWriter is implemented by a backend whose store writes many rows in
// one call; without it, or on [ErrSkip], the Client calls Write per write.
type BatchWriter interface {
	// BatchWriteRow applies each write as Write would and returns one
	// result per write, in order; err fails the whole call. No two
	// requests address one row, so any order or parallelism is fine.
	BatchWriteRow(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error)
}

// ErrSkip is an optional [Backend] method's "not supported here" (nothing
// done; the Client takes the fallback), as database/sql's driver.ErrSkip is.
// It matches [ErrUnimplemented] too.
var ErrSkip = fmt.Errorf("%w: optional backend method not supported here (use the fallback)", ErrUnimplemented)

// Capabilities is for programs that choose a path before calling (SPEC
// §13-§15): what a backend supports beyond the required methods.
type Capabilities struct {
	// BatchRead: BatchGetRow is one store call ([BatchReader]).
	BatchRead bool
	// BatchWrite: BatchWriteRow is one store call ([BatchWriter]).
	BatchWrite bool
	// LendingScan: [Table.Scan] lends rows uncopied ([RangeScanner]).
	LendingScan bool
	// AtomicWrite: multi-row writes in one partition key (SPEC §13,
	// [AtomicWriter]); absent, they are refused (ErrUnimplemented), never
	// degraded, and so for the two below.
	AtomicWrite bool
	// AutoIncrement: a key column may be auto-increment (SPEC §14).
	AutoIncrement bool
	// ChangeFeed: a table may record its writes in a change feed (SPEC §15).
	ChangeFeed bool
}

// CapabilityDeclarer is implemented by a backend that declares its
// [Capabilities] itself rather than let [CapabilitiesOf] derive them.
type CapabilityDeclarer interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns what b declares, or else what its optional
// interfaces say (BatchRead for a [BatchReader], ...), for a [Wrapper] only
// what the backend inside has as well.
func CapabilitiesOf(b Backend) Capabilities {
	if d, ok := b.(CapabilityDeclarer); ok {
		return d.Capabilities()
	}
	var c Capabilities
	_, c.BatchRead = b.(BatchReader)
	_, c.BatchWrite = b.(BatchWriter)
	_, c.LendingScan = b.(RangeScanner)
	_, c.AtomicWrite = b.(AtomicWriter)
	if w, ok := b.(Wrapper); ok {
		in := CapabilitiesOf(w.Unwrap())
		c.BatchRead = c.BatchRead && in.BatchRead
		c.BatchWrite = c.BatchWrite && in.BatchWrite
		c.LendingScan = c.LendingScan && in.LendingScan
		c.AtomicWrite = c.AtomicWrite && in.AtomicWrite
	}
	return c
}

// NativeAccessor is implemented by a backend that offers its native
// client to programs, through [Client.As].
type NativeAccessor interface {
	As(target any) bool
}

// Wrapper is implemented by a backend that wraps another (package faults,
// a cache): Unwrap returns the backend inside.
type Wrapper interface {
	Unwrap() Backend
}

// SystemNamer is implemented by a backend that names its store for
// telemetry ([observe.Operation]).
type SystemNamer interface {
	SystemName() string
}

// ReadSpec is a read selection (SPEC §8), validated, defaults resolved.
type ReadSpec struct {
	// Columns is the projection (sorted, no key columns); nil: all.
	Columns []string
	// MaxVersions is how many versions per column to return, ≥ 1.
	MaxVersions int
	// TimeRange, if non-nil, limits versions to [Start, End).
	TimeRange *TimeRange
	// Filter, if non-nil, decides which rows are returned, on the cells
	// selected before the projection (SPEC §8).
	Filter Filter
}

// UpdateTableRequest changes a table's options.
type UpdateTableRequest struct {
	// Meta is the table as the Client last read it (see UpdateTable).
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

// GetRowResponse is one result of BatchGetRow (Row nil: no such row).
type GetRowResponse struct {
	Row *Row
	Err error
}

// GetRangeRequest reads one page of [Start, End), or (End, Start] walking
// down from Start when Backward; bounds may hold InfMin and InfMax.
type GetRangeRequest struct {
	Meta     *TableMeta
	Start    PrimaryKey
	End      PrimaryKey
	Backward bool
	Limit    int // 1..MaxPageRows+1 (one more than a page when resuming after a key)
	Read     ReadSpec
	Now      int64
}

// GetRangeResponse is one page; Next starts the rest (nil at the end).
type GetRangeResponse struct {
	Rows []Row
	Next PrimaryKey
}

// WriteRequest is one put, update or delete of the row at Key.
type WriteRequest struct {
	Meta *TableMeta
	Kind WriteKind
	Key  PrimaryKey
	// Columns are a put's cells, versions set (none: a key-only row).
	Columns []Column
	// Changes are an update's, in order, versions set (Now for an
	// Increment, whose version SPEC §8 decides).
	Changes   []Change
	Condition Condition
	Now       int64
}

// String formats w for messages.
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

// WriteResponse is one result of BatchWriteRow: that row's own error, or
// an update's increments.
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
	// MaxScanRows is how many stored rows a GetRange page examines at most.
	MaxScanRows = 10000
)
