package conformance

// The differential test's operations: each runs through one side's
// client and returns a comparable outcome.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tablekit/tablekit"
)

type readSpec struct {
	cols   []string
	hasCol bool
	maxVer int
	tr     *tablekit.TimeRange
	filter tablekit.Filter
}

func (r readSpec) options() []tablekit.ReadOption {
	var o []tablekit.ReadOption
	if r.hasCol {
		o = append(o, tablekit.Columns(r.cols...))
	}
	if r.maxVer != 0 {
		o = append(o, tablekit.MaxVersions(r.maxVer))
	}
	if r.tr != nil {
		o = append(o, tablekit.Versions(r.tr.Start, r.tr.End))
	}
	if r.filter != nil {
		o = append(o, tablekit.WithFilter(r.filter))
	}
	return o
}

func (r readSpec) rangeOptions() []tablekit.RangeOption {
	var o []tablekit.RangeOption
	for _, x := range r.options() {
		o = append(o, x)
	}
	return o
}

func (r readSpec) String() string {
	var parts []string
	if r.hasCol {
		parts = append(parts, fmt.Sprintf("Columns%q", r.cols))
	}
	if r.maxVer != 0 {
		parts = append(parts, fmt.Sprintf("MaxVersions(%d)", r.maxVer))
	}
	if r.tr != nil {
		parts = append(parts, fmt.Sprintf("Versions[%d,%d)", r.tr.Start, r.tr.End))
	}
	if r.filter != nil {
		parts = append(parts, "Filter"+fmtFilter(r.filter))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

type putOp struct {
	through
	tb   *diffTable
	key  tablekit.PrimaryKey
	cols []tablekit.Column
	cond tablekit.Condition
	now  int64
}

func (o *putOp) String() string {
	return fmt.Sprintf("PutRow %s %s %s%s", o.tb.short, shortKey(o.key), fmtPutCols(o.cols), fmtCond(o.cond))
}

func (o *putOp) run(ctx context.Context, s *side) any {
	return writeOutcome{Err: outcomeErr(s.cl().Table(o.tb.name).PutRow(ctx, o.key, o.cols, o.cond))}
}

func (o *putOp) observe(d *differ, ref any) {
	if ref.(writeOutcome).Err.Class == "" {
		o.tb.shadowPut(o.key, o.cols, o.now)
	}
}

type updateOp struct {
	through
	tb      *diffTable
	key     tablekit.PrimaryKey
	changes []tablekit.Change
	cond    tablekit.Condition
	now     int64
}

func (o *updateOp) String() string {
	return fmt.Sprintf("UpdateRow %s %s %s%s", o.tb.short, shortKey(o.key), fmtChanges(o.changes), fmtCond(o.cond))
}

func (o *updateOp) run(ctx context.Context, s *side) any {
	res, err := s.cl().Table(o.tb.name).UpdateRow(ctx, o.key, o.changes, o.cond)
	return writeOutcome{Err: outcomeErr(err), Increments: outcomeCells(res.Increments)}
}

func (o *updateOp) observe(d *differ, ref any) {
	if out := ref.(writeOutcome); out.Err.Class == "" {
		o.tb.shadowUpdate(o.key, o.changes, o.now, out.Increments)
	}
}

type deleteOp struct {
	through
	tb   *diffTable
	key  tablekit.PrimaryKey
	cond tablekit.Condition
}

func (o *deleteOp) String() string {
	return fmt.Sprintf("DeleteRow %s %s%s", o.tb.short, shortKey(o.key), fmtCond(o.cond))
}

func (o *deleteOp) run(ctx context.Context, s *side) any {
	return writeOutcome{Err: outcomeErr(s.cl().Table(o.tb.name).DeleteRow(ctx, o.key, o.cond))}
}

func (o *deleteOp) observe(d *differ, ref any) {
	if ref.(writeOutcome).Err.Class == "" {
		delete(o.tb.rows, shortKey(o.key))
	}
}

type getOp struct {
	through
	tb   *diffTable
	key  tablekit.PrimaryKey
	spec readSpec
}

func (o *getOp) String() string {
	return fmt.Sprintf("GetRow %s %s%s", o.tb.short, shortKey(o.key), o.spec)
}

func (o *getOp) run(ctx context.Context, s *side) any {
	row, found, err := s.cl().Table(o.tb.name).GetRow(ctx, o.key, o.spec.options()...)
	return readOutcome{Err: outcomeErr(err), Found: found, Row: outcomeRow(row)}
}

// rangeOp reads the first page of a range; rangeNextOp follows its token.
type rangeOp struct {
	through
	id         int
	tb         *diffTable
	start, end tablekit.PrimaryKey
	backward   bool
	limit      int
	spec       readSpec
}

func (o *rangeOp) describe() string {
	s := fmt.Sprintf("GetRange %s %s -> %s", o.tb.short, shortKey(o.start), shortKey(o.end))
	if o.backward {
		s += " Backward"
	}
	if o.limit > 0 {
		s += fmt.Sprintf(" Limit(%d)", o.limit)
	}
	return s + o.spec.String()
}

func (o *rangeOp) String() string { return fmt.Sprintf("%s [cursor %d page 1]", o.describe(), o.id) }

func (o *rangeOp) options() []tablekit.RangeOption {
	opts := o.spec.rangeOptions()
	if o.backward {
		opts = append(opts, tablekit.Backward())
	}
	if o.limit > 0 {
		opts = append(opts, tablekit.Limit(o.limit))
	}
	return opts
}

func (o *rangeOp) page(ctx context.Context, s *side, extra ...tablekit.RangeOption) pageOutcome {
	res, err := s.cl().Table(o.tb.name).GetRange(ctx, o.start, o.end, append(o.options(), extra...)...)
	s.tokens[o.id] = res.Next
	return pageOutcome{Err: outcomeErr(err), Rows: outcomeRows(res.Rows), More: res.Next != nil}
}

func (o *rangeOp) run(ctx context.Context, s *side) any { return o.page(ctx, s) }

func (o *rangeOp) observe(d *differ, ref any) {
	d.cursor = nil
	if ref.(pageOutcome).More {
		d.cursor = &cursorState{op: o, page: 1}
	}
}

type rangeNextOp struct {
	r    *rangeOp
	page int
}

func (o *rangeNextOp) client() int   { return o.r.via }
func (o *rangeNextOp) setClient(int) {}

func (o *rangeNextOp) String() string {
	return fmt.Sprintf("%s [cursor %d page %d: ResumeFrom(token)]", o.r.describe(), o.r.id, o.page)
}

func (o *rangeNextOp) run(ctx context.Context, s *side) any {
	tok := s.tokens[o.r.id]
	if tok == nil {
		return pageOutcome{Err: diffErr{Class: "NoResumeToken", Msg: "this side returned no token on the previous page"}}
	}
	return o.r.page(ctx, s, tablekit.ResumeFrom(tok))
}

func (o *rangeNextOp) observe(d *differ, ref any) {
	d.cursor = nil
	if ref.(pageOutcome).More {
		d.cursor = &cursorState{op: o.r, page: o.page}
	}
}

// rowsOp streams a range with the Rows iterator.
type rowsOp struct {
	through
	tb         *diffTable
	start, end tablekit.PrimaryKey
	backward   bool
	limit      int
	pageSize   int
	spec       readSpec
	final      bool // the closing scan of a whole table
}

func (o *rowsOp) String() string {
	s := fmt.Sprintf("Rows %s %s -> %s PageSize(%d)", o.tb.short, shortKey(o.start), shortKey(o.end), o.pageSize)
	if o.final {
		s = "final scan: " + s
	}
	if o.backward {
		s += " Backward"
	}
	if o.limit > 0 {
		s += fmt.Sprintf(" Limit(%d)", o.limit)
	}
	return s + o.spec.String()
}

func (o *rowsOp) run(ctx context.Context, s *side) any {
	opts := append(o.spec.rangeOptions(), tablekit.PageSize(o.pageSize))
	if o.backward {
		opts = append(opts, tablekit.Backward())
	}
	if o.limit > 0 {
		opts = append(opts, tablekit.Limit(o.limit))
	}
	var out rowsOutcome
	for row, err := range s.cl().Table(o.tb.name).Rows(ctx, o.start, o.end, opts...) {
		if err != nil {
			out.Err = outcomeErr(err)
			break
		}
		out.Rows = append(out.Rows, outcomeRow(row))
		if len(out.Rows) > 1000 { // the key space is far smaller: a runaway iterator
			out.Truncated = true
			break
		}
	}
	return out
}

type batchGetEntry struct {
	tb    *diffTable // nil: the missing table
	table string
	key   tablekit.PrimaryKey
	spec  readSpec
}

type batchGetOp struct {
	through
	gets []batchGetEntry
}

func (o *batchGetOp) String() string {
	parts := make([]string, len(o.gets))
	for i, g := range o.gets {
		parts[i] = fmt.Sprintf("%s %s%s", shortName(g.tb), shortKey(g.key), g.spec)
	}
	return "BatchGetRow [" + strings.Join(parts, "; ") + "]"
}

func shortName(tb *diffTable) string {
	if tb == nil {
		return "missing_table"
	}
	return tb.short
}

func (o *batchGetOp) run(ctx context.Context, s *side) any {
	gets := make([]tablekit.BatchGet, len(o.gets))
	for i, g := range o.gets {
		gets[i] = tablekit.BatchGet{Table: g.table, Key: g.key, Options: g.spec.options()}
	}
	res, err := s.cl().BatchGetRow(ctx, gets)
	out := batchGetOutcome{Err: outcomeErr(err)}
	for _, r := range res {
		out.Results = append(out.Results, readOutcome{Err: outcomeErr(r.Err), Found: r.Found, Row: outcomeRow(r.Row)})
	}
	return out
}

type batchWriteEntry struct {
	tb *diffTable // nil: the missing table
	w  tablekit.BatchWrite
}

type batchWriteOp struct {
	through
	writes []batchWriteEntry
	now    int64
	atomic bool // Client.AtomicWrite, not BatchWriteRow
}

func (o *batchWriteOp) String() string {
	parts := make([]string, len(o.writes))
	for i, bw := range o.writes {
		w := bw.w
		switch w.Kind {
		case tablekit.WritePut:
			parts[i] = fmt.Sprintf("Put %s %s %s%s", shortName(bw.tb), shortKey(w.Key), fmtPutCols(w.Columns), fmtCond(w.Condition))
		case tablekit.WriteUpdate:
			parts[i] = fmt.Sprintf("Update %s %s %s%s", shortName(bw.tb), shortKey(w.Key), fmtChanges(w.Changes), fmtCond(w.Condition))
		case tablekit.WriteDelete:
			parts[i] = fmt.Sprintf("Delete %s %s%s", shortName(bw.tb), shortKey(w.Key), fmtCond(w.Condition))
		}
	}
	name := "BatchWriteRow"
	if o.atomic {
		name = "AtomicWrite"
	}
	return name + " [" + strings.Join(parts, "; ") + "]"
}

func (o *batchWriteOp) run(ctx context.Context, s *side) any {
	ws := make([]tablekit.BatchWrite, len(o.writes))
	for i, bw := range o.writes {
		ws[i] = bw.w
	}
	var res []tablekit.BatchWriteResult
	var err error
	if o.atomic {
		res, err = s.cl().AtomicWrite(ctx, ws)
	} else {
		res, err = s.cl().BatchWriteRow(ctx, ws)
	}
	out := batchWriteOutcome{Err: outcomeErr(err)}
	for _, r := range res {
		out.Results = append(out.Results, writeOutcome{Err: outcomeErr(r.Err), Increments: outcomeCells(r.Increments)})
	}
	return out
}

func (o *batchWriteOp) observe(d *differ, ref any) {
	out := ref.(batchWriteOutcome)
	if out.Err.Class != "" {
		return
	}
	for i, bw := range o.writes {
		if bw.tb == nil || out.Results[i].Err.Class != "" {
			continue
		}
		switch bw.w.Kind {
		case tablekit.WritePut:
			bw.tb.shadowPut(bw.w.Key, bw.w.Columns, o.now)
		case tablekit.WriteUpdate:
			bw.tb.shadowUpdate(bw.w.Key, bw.w.Changes, o.now, out.Results[i].Increments)
		case tablekit.WriteDelete:
			delete(bw.tb.rows, shortKey(bw.w.Key))
		}
	}
}

type advanceOp struct{ by time.Duration }

func (o *advanceOp) String() string { return fmt.Sprintf("AdvanceClock %v", o.by) }

func (o *advanceOp) run(context.Context, *side) any { return nil }

func (o *advanceOp) apply(d *differ) { d.clock.Advance(o.by) }

// updateTableOp changes a table's options; first it deletes the rows
// whose hidden versions the new options would show (see the top of the
// file).
type updateTableOp struct {
	through
	tb    *diffTable
	opts  tablekit.TableOptions
	purge []tablekit.PrimaryKey
}

func (o *updateTableOp) String() string {
	s := fmt.Sprintf("UpdateTable %s %+v", o.tb.short, o.opts)
	if len(o.purge) > 0 {
		keys := make([]string, len(o.purge))
		for i, k := range o.purge {
			keys[i] = shortKey(k)
		}
		s = fmt.Sprintf("DeleteRow %s of %s, then %s", strings.Join(keys, " "), o.tb.short, s)
	}
	return s
}

func (o *updateTableOp) run(ctx context.Context, s *side) any {
	var out tableOutcome
	for _, k := range o.purge {
		out.PurgeErrs = append(out.PurgeErrs, outcomeErr(s.cl().Table(o.tb.name).DeleteRow(ctx, k)))
	}
	out.Err = outcomeErr(s.cl().UpdateTable(ctx, o.tb.name, o.opts))
	m, err := s.cl().DescribeTable(ctx, o.tb.name)
	out.DescribeErr = outcomeErr(err)
	out.Options, out.Key = m.Options, m.Key
	return out
}

func (o *updateTableOp) observe(d *differ, ref any) {
	out := ref.(tableOutcome)
	for i, e := range out.PurgeErrs {
		if e.Class == "" {
			delete(o.tb.rows, shortKey(o.purge[i]))
		}
	}
	if out.Err.Class == "" {
		o.tb.gen++
	}
	if out.DescribeErr.Class == "" {
		o.tb.meta.Options = out.Options
		d.cached(o.via, o.tb)
	}
}

// syncOp reads a table's description through one client, which brings
// that client's cache up to date on both sides.
type syncOp struct {
	through
	tb *diffTable
}

func (o *syncOp) String() string { return "DescribeTable " + o.tb.short }

func (o *syncOp) run(ctx context.Context, s *side) any {
	m, err := s.cl().DescribeTable(ctx, o.tb.name)
	return tableOutcome{DescribeErr: outcomeErr(err), Options: m.Options, Key: m.Key}
}

func (o *syncOp) observe(d *differ, ref any) {
	if ref.(tableOutcome).DescribeErr.Class == "" {
		d.cached(o.via, o.tb)
	}
}

// recreateOp drops a table and creates it again under the same name with
// another key schema (and options): every other client's cache is stale.
type recreateOp struct {
	through
	tb     *diffTable
	layout int
	opts   tablekit.TableOptions
}

func (o *recreateOp) meta() tablekit.TableMeta {
	return tablekit.TableMeta{Name: o.tb.name, Key: o.tb.layouts[o.layout].schema, Options: o.opts}
}

func (o *recreateOp) String() string {
	return fmt.Sprintf("DeleteTable %s, CreateTable %s key %v %+v", o.tb.short, o.tb.short, o.tb.layouts[o.layout].schema, o.opts)
}

func (o *recreateOp) run(ctx context.Context, s *side) any {
	var out tableOutcome
	out.PurgeErrs = []diffErr{outcomeErr(s.cl().DeleteTable(ctx, o.tb.name))}
	out.Err = outcomeErr(s.cl().CreateTable(ctx, o.meta()))
	if out.Err.Class == "" {
		_ = enableFeed(ctx, s.cl(), o.tb.name) // differential_feed.go; compared at the end
	}
	m, err := s.cl().DescribeTable(ctx, o.tb.name)
	out.DescribeErr = outcomeErr(err)
	out.Options, out.Key = m.Options, m.Key
	return out
}

func (o *recreateOp) observe(d *differ, ref any) {
	out := ref.(tableOutcome)
	if out.PurgeErrs[0].Class == "" {
		o.tb.rows = map[string]map[string]map[int64]bool{}
		o.tb.gen++
		if d.cursor != nil && d.cursor.op.tb == o.tb {
			d.cursor = nil
		}
	}
	if out.Err.Class == "" {
		o.tb.setLayout(o.layout)
		o.tb.meta.Options = out.Options
	}
	if out.DescribeErr.Class == "" {
		d.cached(o.via, o.tb)
	}
}

// staleWriteOp is a write through a client whose cache is stale: its
// outcome counts a refusal as ErrTableNotFound or ErrInvalidArgument alike
// (SPEC §3 allows either), and then the client reads the table's
// description, which brings its cache up to date on both sides.
type staleWriteOp struct {
	through
	tb      *diffTable
	kind    tablekit.WriteKind
	key     tablekit.PrimaryKey
	cols    []tablekit.Column
	changes []tablekit.Change
	now     int64
}

// staleOutcome is a stale write's outcome and the description read after it.
type staleOutcome struct {
	Err  diffErr
	Sync tableOutcome
}

func (o *staleWriteOp) String() string {
	s := "stale-cache "
	switch o.kind {
	case tablekit.WritePut:
		s += fmt.Sprintf("PutRow %s %s %s", o.tb.short, shortKey(o.key), fmtPutCols(o.cols))
	case tablekit.WriteUpdate:
		s += fmt.Sprintf("UpdateRow %s %s %s", o.tb.short, shortKey(o.key), fmtChanges(o.changes))
	default:
		s += fmt.Sprintf("DeleteRow %s %s", o.tb.short, shortKey(o.key))
	}
	return s + ", then DescribeTable"
}

func (o *staleWriteOp) run(ctx context.Context, s *side) any {
	t := s.cl().Table(o.tb.name)
	var err error
	switch o.kind {
	case tablekit.WritePut:
		err = t.PutRow(ctx, o.key, o.cols)
	case tablekit.WriteUpdate:
		_, err = t.UpdateRow(ctx, o.key, o.changes)
	default:
		err = t.DeleteRow(ctx, o.key)
	}
	out := staleOutcome{Err: outcomeErr(err)}
	if errors.Is(err, tablekit.ErrTableNotFound) || errors.Is(err, tablekit.ErrInvalidArgument) {
		out.Err.Class = "Refused(TableNotFound or InvalidArgument)"
	}
	m, derr := s.cl().DescribeTable(ctx, o.tb.name)
	out.Sync = tableOutcome{DescribeErr: outcomeErr(derr), Options: m.Options, Key: m.Key}
	return out
}

func (o *staleWriteOp) observe(d *differ, ref any) {
	out := ref.(staleOutcome)
	if out.Err.Class == "" {
		switch o.kind {
		case tablekit.WritePut:
			o.tb.shadowPut(o.key, o.cols, o.now)
		case tablekit.WriteUpdate:
			o.tb.shadowUpdate(o.key, o.changes, o.now, nil)
		default:
			delete(o.tb.rows, shortKey(o.key))
		}
	}
	if out.Sync.DescribeErr.Class == "" {
		d.cached(o.via, o.tb)
	}
}
