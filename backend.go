package tablekit

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// This file is the adapter contract: [Backend], the optional interfaces a
// backend may add, [Capabilities] derived from them, and the requests and
// responses they carry. Programs use a [Client]; adapter authors build on
// packages rowmodel, backend/driver and backend/codec, and package
// conformance is the contract's test suite.

// Backend is for adapter authors: a store applying a [Client]'s checked
// requests with SPEC.md's semantics, atomically per row.
//
// Methods are safe for concurrent use. A request is read-only and is not
// kept after the call; its Now is the client clock's (ms) and decides TTL
// and increments. An error is ctx's as it is, else an [*Error] wrapping
// the native one (driver.Wrap), with one Code per native condition on
// every backend ([ErrThrottled] and [ErrUnavailable] alone are
// retryable), its message quoting at most a short prefix of a key or
// value.
//
// Beyond these methods a backend may implement optional interfaces
// ([BatchReader], [BatchWriter], [RangeScanner], [AtomicWriter],
// [ChangeFeeder], [FeedCreator], [FeedWaiter], [IndexWriter], [NativeAccessor],
// [SystemNamer], [Wrapper], [CapabilityDeclarer]): implementing one is
// having its capability ([CapabilitiesOf]; FeedWaiter, which changes only
// how soon a follower reads, has none); each says whether it may answer
// [ErrSkip] and what the Client does then.
type Backend interface {
	// CreateTable stores meta, with its Incarnation and Generation, or
	// fails with ErrAlreadyExists. A store keeping schema and options
	// itself (Tablestore) may report Incarnation "" and Generation 0 and
	// ignore both. With Capabilities.AutoIncrement it keeps each
	// KeyColumn's AutoIncrement flag (SPEC §14).
	CreateTable(ctx context.Context, meta *TableMeta) error
	// DescribeTable returns the meta as created or last updated.
	DescribeTable(ctx context.Context, table string) (*TableMeta, error)
	// ListTables returns every table's name, in any order.
	ListTables(ctx context.Context) ([]string, error)
	// UpdateTable sets req.Options if req.Meta is current (another
	// Incarnation: ErrTableNotFound; another Generation: ErrConditionFailed).
	UpdateTable(ctx context.Context, req *UpdateTableRequest) (*TableMeta, error)
	// DeleteTable removes a table and its rows.
	DeleteTable(ctx context.Context, table string) error

	// GetRow returns the row, or nil if it does not exist or fails the
	// filter. A request of a stale Meta is refused as Write's is.
	GetRow(ctx context.Context, req *GetRowRequest) (*Row, error)
	// GetRange returns up to req.Limit rows passing the filter, in order,
	// and Next, where the rest starts (nil only at the end). It may return
	// fewer rows, even none, with Next set: after [MaxScanRows] examined
	// rows, say. A request of a stale Meta is refused as Write's is.
	GetRange(ctx context.Context, req *GetRangeRequest) (*GetRangeResponse, error)
	// Write applies one put, update or delete atomically, its condition
	// included (failing: nothing written), and returns an update's
	// increments; an Increment's version is req.Now.
	//
	// Stale metadata (SPEC §3, §5): a backend keeping Incarnation refuses
	// a request of another one with ErrTableNotFound or driver.ErrStaleMeta
	// (driver.Stale); one applying Options itself refuses a write that
	// would remove a version written under a newer Generation or reveal
	// one newer options hide (rowmodel.Reveals, rowmodel.CheckGeneration).
	//
	// Auto-increment (SPEC §14), with Capabilities.AutoIncrement: the key
	// of a put or update (here, in BatchWriteRow, in AtomicWrite and in
	// IndexWriter.WriteIndexed) may hold AutoIncrement in its
	// auto-increment column (Key.AutoIncrementIndex()). Assign a value above every one assigned
	// before in the partition key, never again, also after a crash or a
	// failed write (gaps are fine); write the row under
	// Key.WithAutoIncrement(v) as a new row (its condition sees no row);
	// record the real key in the change feed and return it in
	// UpdateResult.Key. Conformance S14_AutoIncrement checks it.
	Write(ctx context.Context, req *WriteRequest) (*UpdateResult, error)

	// Close releases what the backend holds but a native client the
	// caller passed in. The Client calls it once, last; calls still in
	// flight may fail, never panic or corrupt.
	Close() error
}

// ErrSkip (for adapters) is an optional method's "not here after all, nothing done" (an
// [ErrUnimplemented]), for a backend whose store lacks the feature at run
// time or a wrapper whose inside lacks the method. Where the Client has a
// fallback (batches, Scan) it takes it; elsewhere ErrSkip reaches the
// program as the ErrUnimplemented it is.
var ErrSkip = fmt.Errorf("%w: optional backend method not supported here", ErrUnimplemented)

// BatchReader (for adapters) is [Capabilities.BatchRead]: many rows read in one store call.
type BatchReader interface {
	// BatchGetRow returns one result per request, in order, each as GetRow
	// would; err fails all. It may answer ErrSkip: the Client then calls
	// GetRow per row, as without a BatchReader.
	BatchGetRow(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error)
}

// BatchWriter (for adapters) is [Capabilities.BatchWrite]: many rows written in one store
// call.
type BatchWriter interface {
	// BatchWriteRow applies each write as Write would (rows distinct, any
	// order); one result per write, in order; err fails all. It may answer
	// ErrSkip: the Client then calls Write per write, as without a
	// BatchWriter.
	BatchWriteRow(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error)
}

// RangeScanner (for adapters) is [Capabilities.LendingScan]: [Table.Scan]'s rows lent
// uncopied.
type RangeScanner interface {
	// ScanRange hands fn the rows GetRange would return, each lent for the
	// call: neither side modifies or keeps it, and the caller never
	// modifies next. It returns GetRange's Next; fn returning false stops
	// it (next nil). It may answer ErrSkip before lending a row: the
	// Client then reads GetRange pages, as without a RangeScanner.
	ScanRange(ctx context.Context, req *GetRangeRequest, fn func(Row) bool) (next PrimaryKey, err error)
}

// AtomicWriter (for adapters) is [Capabilities.AtomicWrite]: [Client.AtomicWrite]'s
// writes (SPEC §13).
type AtomicWriter interface {
	// AtomicWrite applies checked reqs (distinct rows of one table and
	// partition key) all or none, linearizably; one response per write,
	// Err unset; on failure an [*AtomicWriteError] naming the write. There
	// is no fallback: without it, or answering ErrSkip, the Client's call
	// fails with ErrUnimplemented.
	AtomicWrite(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error)
}

// ChangeFeeder (for adapters) is [Capabilities.ChangeFeed] (SPEC §15): each row of a
// committed write is recorded atomically with it. There is no fallback:
// without it, or a method answering ErrSkip, the Client's feed calls fail
// with ErrUnimplemented.
type ChangeFeeder interface {
	// SetChangeFeed enables or disables the table's feed, or sets an
	// enabled feed's retention; disabling ends the open shard, enabling
	// opens a child of the last one.
	SetChangeFeed(ctx context.Context, req *SetChangeFeedRequest) (*ChangeFeedStatus, error)
	// DescribeChangeFeed returns the feed's status, retained shards oldest
	// first.
	DescribeChangeFeed(ctx context.Context, meta *TableMeta) (*ChangeFeedStatus, error)
	// ReadShard returns up to req.Limit records after req.From and Next
	// (req.From if none), Ended past an ended shard's end, and
	// [ErrTrimmed] (in ErrInvalidArgument) when records after req.From
	// are no longer retained.
	ReadShard(ctx context.Context, req *ReadShardRequest) (*ReadShardResponse, error)
}

// NativeAccessor (for adapters) is a backend offering its native client through
// [Client.As].
type NativeAccessor interface {
	As(target any) bool
}

// SystemNamer (for adapters) is a backend naming its store for telemetry
// ([observe.Operation]).
type SystemNamer interface {
	SystemName() string
}

// Wrapper (for adapters) is a backend that wraps another (package faults, a cache). It
// is one type with every optional method, each forwarding to the inside's
// or answering ErrSkip where the inside lacks it; [CapabilitiesOf] keeps
// only what the inside has too.
type Wrapper interface {
	Unwrap() Backend
}

// CapabilityDeclarer (for adapters) is a backend declaring what presence cannot say.
type CapabilityDeclarer interface {
	// Capabilities returns shown, what the backend's optional interfaces
	// show, with AutoIncrement set if the backend has it (no method says
	// so) and any feature its store lacks at run time withheld (DynamoDB
	// without streams, say). A feature whose interface is absent stays
	// false whatever it returns.
	Capabilities(shown Capabilities) Capabilities
}

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
	// CreateWithFeed: CreateTable [WithChangeFeed] creates the table and
	// its feed in one step, so no write goes unrecorded ([FeedCreator]);
	// without it the Client enables the feed right after the creation.
	// Never without ChangeFeed.
	CreateWithFeed bool
	// IndexedWrite: a row write and its index entries (SPEC §16) go to
	// the store in one call and commit together ([IndexWriter]); without
	// it the Client puts the entries, then writes the row. With
	// AutoIncrement it is also what lets a table with an auto-increment
	// key column be indexed (the call assigns the key and stores the
	// entries under it); without it such an index is refused.
	IndexedWrite bool
}

// optionals lists each optional interface with its Capabilities field:
// adding a capability with a method is a line here, the interface, and
// the Client's use of it (through optional).
var optionals = [...]struct {
	has   func(Backend) bool
	field func(*Capabilities) *bool
}{
	{implements[BatchReader], func(c *Capabilities) *bool { return &c.BatchRead }},
	{implements[BatchWriter], func(c *Capabilities) *bool { return &c.BatchWrite }},
	{implements[RangeScanner], func(c *Capabilities) *bool { return &c.LendingScan }},
	{implements[AtomicWriter], func(c *Capabilities) *bool { return &c.AtomicWrite }},
	{implements[ChangeFeeder], func(c *Capabilities) *bool { return &c.ChangeFeed }},
	{implements[FeedCreator], func(c *Capabilities) *bool { return &c.CreateWithFeed }},
	{implements[IndexWriter], func(c *Capabilities) *bool { return &c.IndexedWrite }},
}

func implements[I any](b Backend) bool {
	_, ok := b.(I)
	return ok
}

// CapabilitiesOf returns b's capabilities: those its optional interfaces
// show (a [Wrapper]'s: only those the inside has too, and the inside's
// AutoIncrement), as its [CapabilityDeclarer] adjusts them, if it is one.
// [Client.Capabilities] is it, computed once.
func CapabilitiesOf(b Backend) Capabilities {
	var c Capabilities
	for _, o := range optionals {
		*o.field(&c) = o.has(b)
	}
	if w, ok := b.(Wrapper); ok {
		in := CapabilitiesOf(w.Unwrap())
		for _, o := range optionals {
			*o.field(&c) = *o.field(&c) && *o.field(&in)
		}
		c.AutoIncrement = in.AutoIncrement // no method of its own: writes pass through
	}
	if d, ok := b.(CapabilityDeclarer); ok {
		shown := c
		c = d.Capabilities(shown)
		for _, o := range optionals {
			*o.field(&c) = *o.field(&c) && *o.field(&shown)
		}
	}
	c.SecondaryIndex = true                             // kept by the Client on every backend (index.go)
	c.CreateWithFeed = c.CreateWithFeed && c.ChangeFeed // a feed withheld is not created either
	return c
}

// optional is the Client's one rule for an optional interface I whose
// capability is have (a field of c.caps): I's implementation when the
// backend claims it, else ok false. Not ok, and a call answering ErrSkip,
// mean the same: the caller takes its fallback (batches: a call per row;
// Scan: GetRange pages) or, with none (AtomicWrite, the change feed),
// fails with ErrUnimplemented (c.refuse).
func optional[I any](c *Client, have bool) (impl I, ok bool) {
	if !have {
		return impl, false
	}
	impl, ok = c.b.(I)
	return impl, ok
}

// refuse is the Client's error for an operation the backend lacks the
// capability for (SPEC §13-15: refused, never degraded).
func refuse(op, table, what string) error {
	return &Error{Op: op, Table: table, Code: ErrUnimplemented, Msg: what}
}

// ReadSpec (for adapters) is a read selection (SPEC §8), validated, defaults resolved.
type ReadSpec struct {
	Columns     []string   // the projection, sorted, no key columns; nil: all
	MaxVersions int        // versions per column to return, ≥ 1
	TimeRange   *TimeRange // if non-nil, only versions in [Start, End)
	Filter      Filter     // if non-nil, tested before the projection (SPEC §8)
}

// UpdateTableRequest (for adapters) changes a table's options.
type UpdateTableRequest struct {
	Meta    *TableMeta   // the table as the Client last read it
	Options TableOptions // complete: every field set
}

// GetRowRequest (for adapters) reads one row.
type GetRowRequest struct {
	Meta *TableMeta
	Key  PrimaryKey
	Read ReadSpec
	Now  int64
}

// GetRowResponse (for adapters) is one result of BatchGetRow (Row nil: no such row).
type GetRowResponse struct {
	Row *Row
	Err error
}

// GetRangeRequest (for adapters) reads one page of [Start, End), or (End, Start] walking
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

// GetRangeResponse (for adapters) is one page; Next starts the rest (nil at the end).
type GetRangeResponse struct {
	Rows []Row
	Next PrimaryKey
}

// WriteRequest (for adapters) is one put, update or delete of the row at Key.
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

// WriteResponse (for adapters) is one write's error, or an update's increments.
type WriteResponse struct {
	Update *UpdateResult
	Err    error
}

// SetChangeFeedRequest (for adapters) is a [ChangeFeeder.SetChangeFeed] request.
type SetChangeFeedRequest struct {
	Meta      *TableMeta
	Enabled   bool
	Retention time.Duration // checked, when enabling
	Now       int64
}

// ReadShardRequest (for adapters) is a [ChangeFeeder.ReadShard] request.
type ReadShardRequest struct {
	Meta  *TableMeta
	Shard string
	From  Checkpoint
	Limit int // 1..MaxFeedPage
	Now   int64
}

// ReadShardResponse (for adapters) is one page.
type ReadShardResponse struct {
	Records []ChangeRecord
	Next    Checkpoint
	Ended   bool
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
