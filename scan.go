package tablekit

import (
	"context"
	"errors"
	"iter"
	"math"
	"slices"
)

// Scan is [Table.Rows] lending rows: a Row is valid until the next
// iteration; never modify it, [Row.Clone] one to keep (see [ScanPoison]).
func (t *Table) Scan(ctx context.Context, start, end PrimaryKey, opts ...RangeOption) iter.Seq2[Row, error] {
	s, ok := optional[RangeScanner](t.c, t.c.caps.LendingScan)
	if !ok {
		rows := t.Rows(ctx, start, end, opts...)
		return func(yield func(Row, error) bool) {
			for r, err := range rows {
				if !yieldScanned(yield, r, err) {
					return
				}
			}
		}
	}
	return func(yield func(Row, error) bool) {
		ctx, st := t.c.begin(ctx, "Scan", t.name) // observe.go
		yield, done := st.observeRows(yield)
		defer done()
		cur, o, err := t.newCursor(ctx, start, end, opts, true)
		if err != nil {
			yield(Row{}, annotate(err, "GetRange", t.name))
			return
		}
		defer cur.release()
		page, remaining := o.streamSizes()
		s := s // this iteration's: ErrSkip turns it off
		for s != nil && !cur.done && remaining > 0 {
			n, stop, err := cur.scan(ctx, s, min(page, remaining), yield)
			switch {
			case stop:
				return
			case errors.Is(err, ErrSkip):
				s = nil // the backend lends no rows after all: read pages
			case err != nil:
				yield(Row{}, err)
				return
			default:
				remaining -= n
			}
		}
		yieldPages(ctx, page, remaining, func() bool { return cur.done }, cur.next,
			func(r Row, err error) bool { return yieldScanned(yield, r, err) })
	}
}

// scanPage is the state of the page a RangeScanner is showing: the
// cursor holds it, with its row callback made once, so that a page costs
// no allocation.
type scanPage struct {
	rc    *rangeCursor
	ctx   context.Context
	yield func(Row, error) bool
	fn    func(Row) bool // pass, bound to this page state
	want  int            // rows the page passes on at most
	n     int            // rows passed on
	skip  PrimaryKey     // the resume key, dropped if it comes first
	more  bool           // the page ended on a row past want: the next page starts at it
	stop  bool           // yield or ctx ended the loop
}

// pass is the RangeScanner's callback: it drops the resume key, stops one
// row past want (the next page starts there) and yields the rest.
func (p *scanPage) pass(r Row) bool {
	if p.skip != nil {
		k := p.skip
		p.skip = nil
		if CompareKeys(r.Key, k) == 0 {
			return true
		}
	}
	if p.n == p.want {
		// One row more than wanted (the resume key was gone): the next page
		// starts at it. The backend lends the key; the cursor keeps it.
		p.rc.req.Start, p.more = r.Key.Clone(), true
		return false
	}
	if err := p.ctx.Err(); err != nil {
		p.yield(Row{}, err)
		p.stop = true
		return false
	}
	p.n++
	if !yieldScanned(p.yield, r, nil) {
		p.stop = true
		return false
	}
	return true
}

// scan is next for a RangeScanner: it passes at most want rows of one
// backend page to yield and returns how many it passed, and stop when
// yield or ctx ended the loop (ctx's error then was yielded).
func (rc *rangeCursor) scan(ctx context.Context, s RangeScanner, want int, yield func(Row, error) bool) (n int, stop bool, err error) {
	if rc.done {
		return 0, false, nil
	}
	limit := min(want, MaxPageRows)
	if rc.skip != nil {
		limit++ // the resume key itself, dropped below
	}
	rc.req.Limit = limit
	rc.req.Now = rc.c.now()
	p := &rc.page
	if p.fn == nil {
		p.fn = p.pass // once per cursor: a method value is an allocation
	}
	*p = scanPage{rc: rc, fn: p.fn, ctx: ctx, yield: yield, want: want, skip: rc.skip}
	next, err := s.ScanRange(ctx, &rc.req, p.fn)
	if err != nil && p.n == 0 && !p.stop && isStale(err) {
		// As in next: go on with the table's new metadata if the key schema
		// still fits and no row of the page was passed on yet.
		err = rc.c.retryStale(ctx, rc.table, rc.req.Meta, err, func(fresh *TableMeta) bool {
			return p.n == 0 && !p.stop && rc.sameKey(fresh)
		}, func(m *TableMeta) error {
			rc.req.Meta = m
			p.skip = rc.skip
			next, err = s.ScanRange(ctx, &rc.req, p.fn)
			return err
		})
	}
	n, stop = p.n, p.stop
	p.ctx, p.yield = nil, nil // the loop's, not the cursor's
	if stop {
		return n, true, nil
	}
	if err != nil {
		if n == 0 && errors.Is(err, ErrSkip) {
			return 0, false, ErrSkip // Scan reads pages instead
		}
		return n, false, rc.c.backendErr(err, "GetRange", rc.table)
	}
	rc.skip = nil
	switch {
	case p.more:
	case next == nil:
		rc.done = true
	default:
		rc.req.Start = next
	}
	return n, false, nil
}

// ScanPoison is what a kept [Table.Scan] row reads as under -race or tag
// tablekit_scancheck, which also panic if the loop changed a row.
const ScanPoison = "tablekit: Row used after its Scan iteration"

// yieldScanned yields r (and err). In a checking build it yields a copy
// and poisons the copy once yield returns.
func yieldScanned(yield func(Row, error) bool, r Row, err error) bool {
	if !scanCheck || err != nil {
		return yield(r, err)
	}
	c := r.Clone()
	ok := yield(c, nil)
	if !c.Key.Equal(r.Key) || !slices.Equal(c.Columns, r.Columns) {
		panic("tablekit: a Row that Table.Scan yielded was modified: Scan's rows are read-only (Clone one to change it)")
	}
	poison := Column{Name: ScanPoison, Value: String(ScanPoison), Version: -1}
	for i := range c.Key {
		c.Key[i] = KeyPart{Name: ScanPoison, Value: String(ScanPoison)}
	}
	for i := range c.Columns {
		c.Columns[i] = poison
	}
	return ok
}

// Clone returns a copy of r that shares no slice with it.
func (r Row) Clone() Row {
	out := Row{Key: r.Key.Clone()}
	if r.Columns != nil {
		out.Columns = append([]Column(nil), r.Columns...)
	}
	return out
}

// streamSizes returns the page size and the number of rows a streaming
// read (Rows, Scan) uses: PageSize, default 1000; Limit, default all.
func (o *readOptions) streamSizes() (page, remaining int) {
	page, remaining = 1000, math.MaxInt
	if o.pageSize > 0 {
		page = o.pageSize
	}
	if o.limit > 0 {
		remaining = o.limit
	}
	return page, remaining
}
