package tablekit

import "context"

// Backend is what an adapter implements: a store of SPEC.md tables. The
// [Client] validates every request once, fills in defaults and versions, and
// hands the backend requests that are already well formed; a backend's job
// is to apply them with SPEC's semantics, atomically per row. The conformance
// package proves that it does.
//
// Every request carries Now, the client clock's time in milliseconds, taken
// once per operation. Backends use it, not a clock of their own, for
// visibility (TTL), the version of increments, and anything else that reads
// time, so that a test's ManualClock governs every backend alike.
//
// Errors: return context errors as they are; anything else as an *Error (see
// [Errorf], [WrapError]) with a portable Code and the native error in Err.
type Backend interface {
	TableAdmin
	RowReader
	RowWriter
	// Close releases the backend's resources. It leaves nothing running.
	Close() error
}

// TableAdmin manages tables.
type TableAdmin interface {
	// CreateTable creates a table; meta is complete (defaults filled).
	CreateTable(ctx context.Context, meta *TableMeta) error
	// DescribeTable returns the table's meta exactly as created or updated.
	DescribeTable(ctx context.Context, table string) (*TableMeta, error)
	// ListTables returns every table's name (order need not be sorted).
	ListTables(ctx context.Context) ([]string, error)
	// UpdateTable replaces the table's options; opts is complete.
	UpdateTable(ctx context.Context, table string, opts TableOptions) error
	// DeleteTable removes a table and its rows.
	DeleteTable(ctx context.Context, table string) error
}

// RowReader reads rows.
type RowReader interface {
	// GetRow returns the row, or nil when it does not exist (or fails the filter).
	GetRow(ctx context.Context, req *GetRowRequest) (*Row, error)
	// GetRange returns one page of a range. It may return fewer rows than
	// req.Limit; Next is nil when the range is exhausted.
	GetRange(ctx context.Context, req *GetRangeRequest) (*RangePage, error)
	// BatchGetRow returns one result per request, in order. The error return
	// is for a failure of the whole call.
	BatchGetRow(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResult, error)
}

// RowWriter writes rows.
type RowWriter interface {
	PutRow(ctx context.Context, req *PutRowRequest) error
	UpdateRow(ctx context.Context, req *UpdateRowRequest) (*UpdateResult, error)
	DeleteRow(ctx context.Context, req *DeleteRowRequest) error
	// BatchWriteRow applies each write independently and returns one result
	// per write, in order. The error return is for a failure of the whole call.
	BatchWriteRow(ctx context.Context, reqs []*WriteRequest) ([]WriteResult, error)
}

// ReadSpec is a resolved read selection (SPEC §8): the client has validated
// it and turned defaults into values.
type ReadSpec struct {
	// Columns is the projection; nil means every column. Key columns always
	// come back and never appear here.
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

// GetRowRequest reads one row.
type GetRowRequest struct {
	Meta *TableMeta
	Key  PrimaryKey
	Read ReadSpec
	Now  int64
}

// GetRowResult is one result of BatchGetRow: Row is nil when the row does not
// exist; Err is that row's own error.
type GetRowResult struct {
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

// RangePage is one page of a range. Next, when non-nil, is the inclusive
// start key of the rest of the range.
type RangePage struct {
	Rows []Row
	Next PrimaryKey
}

// PutRowRequest replaces a row. Every column has its version set.
type PutRowRequest struct {
	Meta      *TableMeta
	Key       PrimaryKey
	Columns   []Column
	Condition Condition
	Now       int64
}

// UpdateRowRequest changes a row. Put changes have their version set;
// increments are written at Now.
type UpdateRowRequest struct {
	Meta      *TableMeta
	Key       PrimaryKey
	Changes   []Change
	Condition Condition
	Now       int64
}

// UpdateResult reports what an UpdateRow did: the new value of each
// incremented column, in the order the increments were given.
type UpdateResult struct {
	Increments []Column
}

// DeleteRowRequest deletes a row.
type DeleteRowRequest struct {
	Meta      *TableMeta
	Key       PrimaryKey
	Condition Condition
	Now       int64
}

// WriteRequest is one write of a batch: exactly one of Put, Update, Delete is set.
type WriteRequest struct {
	Put    *PutRowRequest
	Update *UpdateRowRequest
	Delete *DeleteRowRequest
}

// Meta returns the table of the write.
func (w *WriteRequest) Meta() *TableMeta {
	switch {
	case w.Put != nil:
		return w.Put.Meta
	case w.Update != nil:
		return w.Update.Meta
	case w.Delete != nil:
		return w.Delete.Meta
	}
	return nil
}

// Key returns the row key of the write.
func (w *WriteRequest) Key() PrimaryKey {
	switch {
	case w.Put != nil:
		return w.Put.Key
	case w.Update != nil:
		return w.Update.Key
	case w.Delete != nil:
		return w.Delete.Key
	}
	return nil
}

// Condition returns the condition of the write.
func (w *WriteRequest) Condition() Condition {
	switch {
	case w.Put != nil:
		return w.Put.Condition
	case w.Update != nil:
		return w.Update.Condition
	case w.Delete != nil:
		return w.Delete.Condition
	}
	return Condition{}
}

// Now returns the write's Now.
func (w *WriteRequest) Now() int64 {
	switch {
	case w.Put != nil:
		return w.Put.Now
	case w.Update != nil:
		return w.Update.Now
	case w.Delete != nil:
		return w.Delete.Now
	}
	return 0
}

// WriteResult is one result of BatchWriteRow: Err is that row's own error;
// Update holds an update's increments.
type WriteResult struct {
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
