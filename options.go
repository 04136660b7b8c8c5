package tablekit

import (
	"fmt"
	"slices"
	"strconv"
)

// ChangeKind is the kind of one UpdateRow change.
type ChangeKind uint8

// The changes of SPEC §8.
const (
	ChangePut           ChangeKind = iota + 1 // write a cell
	ChangeDeleteVersion                       // delete one version of a column
	ChangeDeleteColumn                        // delete every version of a column
	ChangeIncrement                           // add to the latest Integer version
)

// String returns the change's name.
func (k ChangeKind) String() string {
	switch k {
	case ChangePut:
		return "Put"
	case ChangeDeleteVersion:
		return "DeleteVersion"
	case ChangeDeleteColumn:
		return "DeleteColumn"
	case ChangeIncrement:
		return "Increment"
	}
	return "ChangeKind(?)"
}

// Change is one change of an UpdateRow. Build it with [Put], [PutAt],
// [DeleteVersion], [DeleteColumn] or [Increment].
type Change struct {
	Kind    ChangeKind
	Column  string
	Value   Value // Put
	Version int64 // Put (0 = now), DeleteVersion
	Delta   int64 // Increment
}

// String formats c as the call that builds it: `Increment("n", 2)`.
func (c Change) String() string {
	name := strconv.Quote(c.Column)
	switch c.Kind {
	case ChangePut:
		if c.Version != 0 {
			return fmt.Sprintf("PutAt(%s, %#v, %d)", name, c.Value, c.Version)
		}
		return fmt.Sprintf("Put(%s, %#v)", name, c.Value)
	case ChangeDeleteVersion:
		return fmt.Sprintf("DeleteVersion(%s, %d)", name, c.Version)
	case ChangeDeleteColumn:
		return fmt.Sprintf("DeleteColumn(%s)", name)
	case ChangeIncrement:
		return fmt.Sprintf("Increment(%s, %d)", name, c.Delta)
	}
	return fmt.Sprintf("Change(kind %d, %s)", c.Kind, name)
}

// Put writes value as a new version of column at now (a second write of it in
// the same millisecond replaces the first; [PutAt] or two rows keep both).
func Put(column string, value Value) Change {
	return Change{Kind: ChangePut, Column: column, Value: value}
}

// PutAt writes value as version of column (milliseconds).
func PutAt(column string, value Value, version int64) Change {
	return Change{Kind: ChangePut, Column: column, Value: value, Version: version}
}

// DeleteVersion deletes one version of column.
func DeleteVersion(column string, version int64) Change {
	return Change{Kind: ChangeDeleteVersion, Column: column, Version: version}
}

// DeleteColumn deletes every version of column.
func DeleteColumn(column string) Change {
	return Change{Kind: ChangeDeleteColumn, Column: column}
}

// Increment adds delta to the column's latest visible Integer (absent: 0),
// written at max(now, its version) so concurrent increments lose nothing.
func Increment(column string, delta int64) Change {
	return Change{Kind: ChangeIncrement, Column: column, Delta: delta}
}

// WriteOption sets a write's condition; [Condition], [RowExistence] and
// [IfMatch] combine, filters ANDed (contradicting rows: ErrInvalidArgument).
type WriteOption interface {
	applyWrite(*Condition)
}

// conflictingRow marks contradicting row expectations; checkCondition refuses it.
const conflictingRow RowExistence = 255

func (c Condition) applyWrite(dst *Condition) {
	c.Row.applyWrite(dst)
	if c.Column != nil {
		ifMatch{c.Column}.applyWrite(dst)
	}
}

func (r RowExistence) applyWrite(dst *Condition) {
	switch {
	case r == Ignore || r == dst.Row:
	case dst.Row == Ignore:
		dst.Row = r
	default:
		dst.Row = conflictingRow
	}
}

type ifMatch struct{ f Filter }

func (m ifMatch) applyWrite(dst *Condition) {
	switch {
	case m.f == nil:
	case dst.Column == nil:
		dst.Column = m.f
	default:
		dst.Column = And(dst.Column, m.f)
	}
}

// IfMatch makes the write conditional on the row's visible data passing f
// (a missing row too: see [Filter]).
func IfMatch(f Filter) WriteOption { return ifMatch{f} }

type returnKey struct{ dst *PrimaryKey }

func (returnKey) applyWrite(*Condition) {}

// ReturnKey sets *dst to the full key a successful put or update wrote.
func ReturnKey(dst *PrimaryKey) WriteOption { return returnKey{dst} }

// returnKeyOf returns the last ReturnKey's dst in opts, or nil.
func returnKeyOf(opts []WriteOption) *PrimaryKey {
	var dst *PrimaryKey
	for _, o := range opts {
		if r, ok := o.(returnKey); ok {
			dst = r.dst
		}
	}
	return dst
}

// setReturnKey gives *dst (if any) the key a write wrote: the backend's
// (with the value assigned for AutoIncrement), else the request's.
func setReturnKey(dst *PrimaryKey, written, req PrimaryKey) {
	if dst != nil {
		if written == nil {
			written = req
		}
		*dst = written.Clone()
	}
}

func writeCondition(opts []WriteOption) Condition {
	var c Condition
	for _, o := range opts {
		if o != nil {
			o.applyWrite(&c)
		}
	}
	return c
}

// readOptions are the options a read collects before they are resolved into a ReadSpec.
type readOptions struct {
	columns     []string
	maxVersions int
	timeRange   *TimeRange
	filter      Filter
	// range only
	limit    int
	backward bool
	token    []byte
	pageSize int
}

// ReadOption sets an option of GetRow, BatchGetRow and GetRange.
type ReadOption interface {
	RangeOption
	applyRead(*readOptions)
}

// RangeOption sets an option of GetRange and Rows. Every ReadOption is one.
type RangeOption interface {
	applyRange(*readOptions)
}

type readOpt func(*readOptions)

func (f readOpt) applyRead(o *readOptions)  { f(o) }
func (f readOpt) applyRange(o *readOptions) { f(o) }

type rangeOpt func(*readOptions)

func (f rangeOpt) applyRange(o *readOptions) { f(o) }

// Columns returns only the named attribute columns, copied (and key columns;
// a row with none of them is still found; no names: keys only).
func Columns(names ...string) ReadOption {
	names = append(make([]string, 0, len(names)), names...) // non-nil: Columns() returns no attribute columns
	slices.Sort(names)
	names = slices.Compact(names)
	return readOpt(func(o *readOptions) { o.columns = names })
}

// MaxVersions returns up to n versions of each column, newest first. Zero
// means the default: 1, or every version in the time range given by [Versions].
func MaxVersions(n int) ReadOption {
	return readOpt(func(o *readOptions) { o.maxVersions = n })
}

// Versions selects versions in [start, end) ms (with MaxVersions: newest n).
func Versions(start, end int64) ReadOption {
	return readOpt(func(o *readOptions) { o.timeRange = &TimeRange{Start: start, End: end} })
}

// WithFilter returns only rows that pass f.
func WithFilter(f Filter) ReadOption {
	return readOpt(func(o *readOptions) { o.filter = f })
}

// Limit returns at most n rows from GetRange (0 or over MaxPageRows:
// MaxPageRows), or stops Rows after n rows (0: no limit).
func Limit(n int) RangeOption {
	return rangeOpt(func(o *readOptions) { o.limit = n })
}

// Backward walks the range down from start, which must be above end.
func Backward() RangeOption {
	return rangeOpt(func(o *readOptions) { o.backward = true })
}

// ResumeFrom continues a GetRange from the token of an earlier answer over
// the same table, direction and end.
func ResumeFrom(token []byte) RangeOption {
	return rangeOpt(func(o *readOptions) { o.token = token })
}

// PageSize sets how many rows each backend call of GetRange and Rows asks
// for, 1..MaxPageRows (default 1000; GetRange: Limit); never the rows
// returned.
func PageSize(n int) RangeOption {
	return rangeOpt(func(o *readOptions) { o.pageSize = n })
}

// BatchGet is one read of a BatchGetRow.
type BatchGet struct {
	Table   string
	Key     PrimaryKey
	Options []ReadOption
}

// BatchWrite is one write of a batch: [BatchPut], [BatchUpdate] or
// [BatchDelete].
type BatchWrite struct {
	Table     string
	Key       PrimaryKey
	Kind      WriteKind
	Columns   []Column // WritePut
	Changes   []Change // WriteUpdate
	Condition Condition
	returnKey *PrimaryKey // ReturnKey's
}

// WriteKind is the kind of a [BatchWrite] and of a backend's [WriteRequest].
type WriteKind uint8

// The kinds of write.
const (
	WritePut    WriteKind = iota + 1 // replace the row (PutRow)
	WriteUpdate                      // change the row (UpdateRow)
	WriteDelete                      // delete the row (DeleteRow)
)

// String returns "Put", "Update" or "Delete".
func (k WriteKind) String() string {
	switch k {
	case WritePut:
		return "Put"
	case WriteUpdate:
		return "Update"
	case WriteDelete:
		return "Delete"
	}
	return "WriteKind(?)"
}

// BatchPut is a PutRow inside a batch.
func BatchPut(table string, key PrimaryKey, cols []Column, opts ...WriteOption) BatchWrite {
	return BatchWrite{Table: table, Key: key, Kind: WritePut, Columns: cols, Condition: writeCondition(opts), returnKey: returnKeyOf(opts)}
}

// BatchUpdate is an UpdateRow inside a batch.
func BatchUpdate(table string, key PrimaryKey, changes []Change, opts ...WriteOption) BatchWrite {
	return BatchWrite{Table: table, Key: key, Kind: WriteUpdate, Changes: changes, Condition: writeCondition(opts), returnKey: returnKeyOf(opts)}
}

// BatchDelete is a DeleteRow inside a batch.
func BatchDelete(table string, key PrimaryKey, opts ...WriteOption) BatchWrite {
	return BatchWrite{Table: table, Key: key, Kind: WriteDelete, Condition: writeCondition(opts)}
}

// BatchGetResult is one result of BatchGetRow; Found: the row exists.
type BatchGetResult struct {
	Row   Row
	Found bool
	Err   error
}

// BatchWriteResult is one result of BatchWriteRow.
type BatchWriteResult struct {
	Increments []Column   // an update's incremented values
	Key        PrimaryKey // the key written if the write's held AutoIncrement
	Err        error
}
