package tablekit

import (
	"context"
	"fmt"
	"strconv"
)

// Backend is for adapter authors: a store applying a [Client]'s checked
// requests with SPEC.md's semantics, atomically per row (package conformance
// proves it). Methods are concurrency-safe; requests are read-only, never
// kept; req.Now (ms) decides TTL and increments. Refuse a request of a stale
// Meta (another Incarnation, or Generation whose options differ) with
// driver.ErrStaleMeta (SPEC §3, §5). Errors: ctx's as is, else an [*Error]
// wrapping the native one (driver.Wrap). Close is called once, last.
// Optional interfaces below may answer [ErrSkip] (the Client falls back).
type Backend interface {
	// CreateTable stores meta (with a new Incarnation) or ErrAlreadyExists.
	CreateTable(ctx context.Context, meta *TableMeta) error
	// DescribeTable returns the meta as created or last updated.
	DescribeTable(ctx context.Context, table string) (*TableMeta, error)
	// ListTables returns every table's name, in any order.
	ListTables(ctx context.Context) ([]string, error)
	// UpdateTable sets req.Options if req.Meta is current (another
	// Incarnation: ErrTableNotFound; Generation: ErrConditionFailed).
	UpdateTable(ctx context.Context, req *UpdateTableRequest) (*TableMeta, error)
	// DeleteTable removes a table and its rows.
	DeleteTable(ctx context.Context, table string) error

	// GetRow returns the row, or nil if it does not exist or fails the filter.
	GetRow(ctx context.Context, req *GetRowRequest) (*Row, error)
	// GetRange returns up to req.Limit rows passing the filter, in order;
	// fewer (even none) with Next set is fine; Next is nil only at the end.
	GetRange(ctx context.Context, req *GetRangeRequest) (*GetRangeResponse, error)
	// Write applies one write atomically, condition included (failing:
	// nothing written), returning an update's increments.
	Write(ctx context.Context, req *WriteRequest) (*UpdateResult, error)

	Close() error
}

// Backend contract details for adapter maintainers (not in go doc):
//   - Stale metadata: a backend keeping Incarnation refuses another one's
//     request with ErrTableNotFound or driver.ErrStaleMeta; one applying
//     Options itself refuses a write that would remove a version written
//     under a newer Generation or reveal one newer options hide
//     (rowmodel.Reveals, CheckGeneration). A store keeping schema and
//     options itself (Tablestore) may report Incarnation "" and Generation
//     0 and ignore both.
//   - Errors: one Code per native condition on every backend (ErrThrottled
//     and ErrUnavailable alone are retryable); messages quote at most a
//     short prefix of a key or value.
//   - Close: calls in flight may fail, never panic or corrupt; it releases
//     all but a native client the caller passed in.
//   - Optional methods: the Client's fallbacks are GetRow per row, Write per
//     write, GetRange pages, so a Wrapper (package faults) is one type
//     forwarding every optional method, ErrSkip where the inside lacks it;
//     CapabilitiesOf of a Wrapper reports only what the inside has too.
//   - Time: Now is the client clock's; an Increment's version is Now.
//   - ScanRange: rows lent to fn are not modified or kept by either side;
//     the caller never modifies next. GetRange may stop early (after
//     MaxScanRows examined rows, say) with Next set.
//   - Auto-increment (SPEC §14), for a backend whose Capabilities say
//     AutoIncrement (CapabilityDeclarer): CreateTable stores KeyColumn's
//     flag and DescribeTable returns it. The key of a put or update (in
//     Write, BatchWriteRow and AtomicWrite) may hold AutoIncrement in that
//     column (Key.AutoIncrementIndex()); assign a value above every one
//     assigned before in the partition key, never again, also after a
//     crash or a failed write (gaps are fine), write the row under
//     Key.WithAutoIncrement(v) as a new row (its condition sees no row),
//     record the real key in the change feed, and return it in
//     UpdateResult.Key. Conformance S14_AutoIncrement checks it.

// BatchReader reads many rows in one store call (else: GetRow per row).
type BatchReader interface {
	// BatchGetRow returns one result per request, in order; err fails all.
	BatchGetRow(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error)
}

// BatchWriter writes many rows in one store call (else: Write per write).
type BatchWriter interface {
	// BatchWriteRow applies each write as Write would (rows distinct, any
	// order); one result per write, in order; err fails all.
	BatchWriteRow(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error)
}

// ErrSkip is an optional [Backend] method's "not supported here, nothing
// done" (an [ErrUnimplemented]); the Client falls back.
var ErrSkip = fmt.Errorf("%w: optional backend method not supported here (use the fallback)", ErrUnimplemented)

// Adding a capability touches a Capabilities field (and CapabilitiesOf), its
// interface, the Client's fallback or refusal (ErrUnimplemented), each
// wrapper's forwarding method, the backends that have it, and conformance.

// Capabilities is what a backend supports beyond the required methods; the
// SPEC §13-15 features absent are refused ([ErrUnimplemented]), not degraded.
type Capabilities struct {
	BatchRead     bool // BatchGetRow is one store call ([BatchReader])
	BatchWrite    bool // BatchWriteRow is one store call ([BatchWriter])
	LendingScan   bool // [Table.Scan] lends rows uncopied ([RangeScanner])
	AtomicWrite   bool // SPEC §13: all-or-nothing writes in one partition key ([AtomicWriter])
	AutoIncrement bool // SPEC §14: a key column may be auto-increment
	ChangeFeed    bool // SPEC §15: a table may record its writes in a change feed ([ChangeFeeder])
	// SecondaryIndex: SPEC §16's indexes, consistent with the table. The
	// Client keeps them over the required calls (index.go), so it is true
	// on every backend.
	SecondaryIndex bool
}

// CapabilityDeclarer is a backend that states its [Capabilities] itself.
type CapabilityDeclarer interface {
	Capabilities() Capabilities
}

// CapabilitiesOf returns what b declares or its optional interfaces show.
func CapabilitiesOf(b Backend) Capabilities {
	if d, ok := b.(CapabilityDeclarer); ok {
		c := d.Capabilities()
		c.SecondaryIndex = true
		return c
	}
	c := Capabilities{SecondaryIndex: true}
	_, c.BatchRead = b.(BatchReader)
	_, c.BatchWrite = b.(BatchWriter)
	_, c.LendingScan = b.(RangeScanner)
	_, c.AtomicWrite = b.(AtomicWriter)
	_, c.ChangeFeed = b.(ChangeFeeder)
	if w, ok := b.(Wrapper); ok {
		in := CapabilitiesOf(w.Unwrap())
		c.BatchRead = c.BatchRead && in.BatchRead
		c.BatchWrite = c.BatchWrite && in.BatchWrite
		c.LendingScan = c.LendingScan && in.LendingScan
		c.AtomicWrite = c.AtomicWrite && in.AtomicWrite
		c.ChangeFeed = c.ChangeFeed && in.ChangeFeed
		c.AutoIncrement = in.AutoIncrement // no method of its own: writes pass through
	}
	return c
}

// NativeAccessor is a backend offering its native client through [Client.As].
type NativeAccessor interface {
	As(target any) bool
}

// Wrapper is a backend that wraps another (package faults, a cache).
type Wrapper interface {
	Unwrap() Backend
}

// SystemNamer is a backend naming its store for telemetry
// ([observe.Operation]).
type SystemNamer interface {
	SystemName() string
}

// ReadSpec is a read selection (SPEC §8), validated, defaults resolved.
type ReadSpec struct {
	Columns     []string   // the projection, sorted, no key columns; nil: all
	MaxVersions int        // versions per column to return, ≥ 1
	TimeRange   *TimeRange // if non-nil, only versions in [Start, End)
	Filter      Filter     // if non-nil, tested before the projection (SPEC §8)
}

// UpdateTableRequest changes a table's options.
type UpdateTableRequest struct {
	Meta    *TableMeta   // the table as the Client last read it
	Options TableOptions // complete: every field set
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
	Meta      *TableMeta
	Kind      WriteKind
	Key       PrimaryKey // a put's or update's may hold AutoIncrement (SPEC §14)
	Columns   []Column   // a put's, versions set (none: a key-only row)
	Changes   []Change   // an update's, in order, versions set
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

// UpdateResult is one write's result (SPEC §8, §14).
type UpdateResult struct {
	Increments []Column   // an update's incremented columns' new values, in order
	Key        PrimaryKey // the full key written if the request's held AutoIncrement
}

// WriteResponse is one write's error, or an update's increments.
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
	MaxScanRows        = 10000 // stored rows a GetRange page examines at most
)
