package tablekit

import (
	"context"
	"fmt"
	"strconv"
)

// Backend is for adapter authors: a store of SPEC.md tables. Programs call
// a [Client], which validates every request once, fills in defaults and
// versions, and hands the backend well-formed requests to apply with SPEC's
// semantics, atomically per row. Package conformance proves that a backend
// does; packages rowmodel (SPEC's single-row rules) and backend/driver
// (errors, retries, URL parameters) help write one.
//
// The contract, for every method:
//
//   - Concurrency. A Backend is safe for concurrent use by many goroutines
//     and Clients, in this process and others (each Client caches
//     table metadata of its own).
//   - Ownership. A request and all it points to (Meta above all, which every
//     request of the table shares) is the caller's and read-only; the
//     backend keeps no part of it after returning, and no reference to what
//     it returns.
//   - Time. Every request carries Now, the client clock's milliseconds,
//     taken once per operation; backends use it, not a clock of their own,
//     for TTL visibility and increment versions, so a ManualClock governs
//     every backend alike.
//   - Metadata may be stale. Meta is the Client's cached copy. A backend
//     that keeps Meta's Incarnation refuses a request of another one with
//     [ErrTableNotFound] or an error matching driver.ErrStaleMeta, and one
//     that applies Options itself (trims or hides versions) refuses, with
//     driver.ErrStaleMeta, a write that would remove a version written under
//     a newer Generation; the Client then reads the table again and retries.
//     A store that keeps schema and options itself (Tablestore) may report an
//     empty Incarnation and Generation 0 and ignore both.
//   - Errors. Context errors are returned as they are; anything else is an
//     *Error whose Code is a portable sentinel, wrapping the native error
//     (driver.Wrap): one native condition, one Code on every backend. Only
//     [ErrThrottled] and [ErrUnavailable] say a retry may succeed. Messages
//     quote no more than a short prefix of a key or value, never a secret.
//   - Close. Called once, after which the Client starts no call; calls in
//     flight may fail but must not panic or corrupt the store. It releases
//     everything the backend holds, but not a native client the caller
//     passed in.
//
// Optional capabilities: [BatchReader], [BatchWriter] and [RangeScanner]
// (native batches, a lending Scan), [AtomicWriter] (SPEC §13, refused
// without it), [NativeAccessor] ([Client.As]),
// [SystemNamer] (the telemetry name) and [CapabilityDeclarer]. An optional
// method may answer [ErrSkip], "not supported here", and the Client takes
// its fallback (GetRow per row, Write per write, GetRange pages), as
// database/sql does with driver.ErrSkip. So a wrapper (package faults) is
// one type that implements every optional method, forwards each and
// answers ErrSkip where the backend inside lacks it; as a [Wrapper] it has
// that backend's [Capabilities]. Adding a capability touches a field of
// Capabilities (and [CapabilitiesOf]'s default), its optional interface,
// the Client's fallback (or its refusal with [ErrUnimplemented]), a
// forwarding method per wrapper, the backends that have it, and a
// conformance case.
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

// ErrSkip is what an optional method of a [Backend] answers (as it is or
// wrapped) to say "not supported here": nothing was done, and the Client
// takes the fallback, as with database/sql's driver.ErrSkip. It matches
// [ErrUnimplemented] too.
var ErrSkip = fmt.Errorf("%w: optional backend method not supported here (use the fallback)", ErrUnimplemented)

// Capabilities is for programs that choose a path before calling (SPEC
// §13-§15): what a backend supports beyond the required methods. A false
// batch or scan field means the Client emulates the call, not that it fails.
type Capabilities struct {
	// BatchRead: BatchGetRow is one store call ([BatchReader]).
	BatchRead bool
	// BatchWrite: BatchWriteRow is one store call ([BatchWriter]).
	BatchWrite bool
	// LendingScan: [Table.Scan] lends rows uncopied ([RangeScanner]).
	LendingScan bool
	// AtomicWrite: multi-row writes in one partition key (SPEC §13,
	// [AtomicWriter]). Absent, such a call is refused with
	// ErrUnimplemented, never degraded; so for the two below.
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
// telemetry ([Operation.System]).
type SystemNamer interface {
	SystemName() string
}

// ReadSpec is a resolved read selection (SPEC §8): the client has validated
// it and turned defaults into values.
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

// GetRangeResponse is one page: Next, if non-nil, is the inclusive start
// of the rest of the range.
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
	// Columns are a put's cells, versions set (none: a key-only row).
	Columns []Column
	// Changes are an update's, in order, versions set (Now for an
	// Increment, whose version SPEC §8 decides).
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
	// MaxScanRows is how many stored rows a GetRange page examines at most.
	MaxScanRows = 10000
)
