package tablekit

import (
	"context"
	"encoding/binary"
	"iter"
	"slices"
	"sync"

	"github.com/tablekit/tablekit/internal/wire"
)

// RangeResult is one GetRange answer; [ResumeFrom](Next) yields the rest.
type RangeResult struct {
	Rows []Row
	Next []byte // nil when the range is exhausted (never after Limit rows)
}

// rangeCursor walks a range through backend pages.
type rangeCursor struct {
	c       *Client
	table   string
	req     GetRangeRequest
	skip    PrimaryKey // resume after this key (exclusive); nil when none
	done    bool
	lastKey PrimaryKey
	opts    readOptions // what the cursor was made with (here to share its allocation)
	page    scanPage    // Scan's per-page state (scan.go)

	// keys holds the cursor's copies of start and end (with clone), so
	// that they share the cursor's allocation.
	keys [2 * MaxKeyColumns]KeyPart
}

// newCursor validates a range read and returns its cursor, which the
// caller releases when the read is over. With clone, the cursor keeps
// copies of start and end (an iterator outlives the call that made it); a
// single GetRange call needs none.
func (t *Table) newCursor(ctx context.Context, start, end PrimaryKey, opts []RangeOption, clone bool) (*rangeCursor, *readOptions, error) {
	m, err := t.c.tableMeta(ctx, t.name)
	if err != nil {
		return nil, nil, err
	}
	cur := cursorPool.Get().(*rangeCursor)
	fn := cur.page.fn
	*cur = rangeCursor{c: t.c, table: t.name}
	cur.page.fn = fn // bound to cur.page: still this cursor's
	if err := cur.init(m, start, end, opts, clone); err != nil {
		cur.release()
		return nil, nil, err
	}
	return cur, &cur.opts, nil
}

// cursorPool holds released cursors: a range read, Scan's above all,
// should not cost the garbage collector a cursor per call.
var cursorPool = sync.Pool{New: func() any { return new(rangeCursor) }}

// release clears rc of everything it refers to and returns it to the pool.
// Neither rc nor the options newCursor returned may be used after.
func (rc *rangeCursor) release() {
	fn := rc.page.fn
	*rc = rangeCursor{}
	rc.page.fn = fn
	cursorPool.Put(rc)
}

// init is newCursor's validation, for table m.
func (rc *rangeCursor) init(m *TableMeta, start, end PrimaryKey, opts []RangeOption, clone bool) error {
	o := &rc.opts
	for _, opt := range opts {
		if opt != nil {
			opt.applyRange(o)
		}
	}
	if err := checkKey(m, start, true); err != nil {
		return err
	}
	if err := checkKey(m, end, true); err != nil {
		return err
	}
	c := CompareKeys(start, end)
	if !o.backward && c >= 0 {
		return invalid("forward range needs start %v below end %v", start, end)
	}
	if o.backward && c <= 0 {
		return invalid("backward range needs start %v above end %v", start, end)
	}
	if o.limit < 0 {
		return invalid("Limit %d must be at least 1", o.limit)
	}
	if o.pageSize < 0 || o.pageSize > MaxPageRows {
		return invalid("PageSize %d must be 1-%d", o.pageSize, MaxPageRows)
	}
	spec, verr := resolveRead(m, o)
	if verr != nil {
		return verr
	}
	if clone {
		// checkKey bounded both keys by MaxKeyColumns.
		n := copy(rc.keys[:], start)
		start = rc.keys[:n:n]
		k := copy(rc.keys[n:], end)
		end = rc.keys[n : n+k : n+k]
	}
	rc.req = GetRangeRequest{Meta: m, Start: start, End: end, Backward: o.backward, Read: spec}
	if o.token != nil {
		tk, err := decodeCanonicalToken(o.token)
		if err != nil {
			return err
		}
		if tk.table != rc.table || tk.backward != o.backward {
			return invalid("resume token belongs to another table or direction")
		}
		if err := checkKey(m, tk.key, false); err != nil {
			return invalid("resume token does not match the table's key schema")
		}
		inRange := CompareKeys(tk.key, start) >= 0 && CompareKeys(tk.key, end) < 0
		if o.backward {
			inRange = CompareKeys(tk.key, start) <= 0 && CompareKeys(tk.key, end) > 0
		}
		if !inRange {
			return invalid("resume token key %v lies outside the range", tk.key)
		}
		rc.req.Start = tk.key
		if tk.exclusive {
			rc.skip = tk.key
		}
	}
	return nil
}

// sameKey reports whether fresh has the key schema of the cursor's
// table, so that the range's bounds and resume key still fit it.
func (rc *rangeCursor) sameKey(fresh *TableMeta) bool {
	return slices.Equal(fresh.Key, rc.req.Meta.Key)
}

// next fetches one backend page of at most want rows and returns its rows
// (after dropping the resume key).
func (rc *rangeCursor) next(ctx context.Context, want int) ([]Row, error) {
	if rc.done {
		return nil, nil
	}
	// When resuming after a key, one more row is asked for: the resume key
	// itself, dropped below. It may take the limit to MaxPageRows+1.
	limit := min(want, MaxPageRows)
	if rc.skip != nil {
		limit++
	}
	rc.req.Limit = limit
	rc.req.Now = rc.c.now()
	page, err := rc.c.b.GetRange(ctx, &rc.req)
	if err != nil && isStale(err) {
		// The table was re-created or its options changed: go on with the
		// new metadata if the key schema (and so the bounds) still fits.
		err = rc.c.retryStale(ctx, rc.table, rc.req.Meta, err, rc.sameKey, func(m *TableMeta) error {
			rc.req.Meta = m
			page, err = rc.c.b.GetRange(ctx, &rc.req)
			return err
		})
	}
	if err != nil {
		return nil, rc.c.backendErr(err, "GetRange", rc.table)
	}
	rows := page.Rows
	if rc.skip != nil {
		if len(rows) > 0 && CompareKeys(rows[0].Key, rc.skip) == 0 {
			rows = rows[1:]
		}
		rc.skip = nil
	}
	if len(rows) > want {
		rows = rows[:want]
		rc.skip = rows[len(rows)-1].Key
		rc.req.Start = rc.skip
	} else if page.Next == nil {
		rc.done = true
	} else {
		rc.req.Start = page.Next
	}
	if len(rows) > 0 {
		rc.lastKey = rows[len(rows)-1].Key
	}
	return rows, nil
}

// GetRange reads from start toward end (exclusive) until Limit rows passed
// the filter or the range ends (bound a selective filter with ctx).
func (t *Table) GetRange(ctx context.Context, start, end PrimaryKey, opts ...RangeOption) (res RangeResult, err error) {
	const op = "GetRange"
	ctx, st := t.c.begin(ctx, op, t.name)
	size := 0 // of res.Rows: MaxPageSize's count, and the observer's Bytes
	if st != nil {
		defer func() {
			if err != nil {
				size = 0 // no rows
			}
			st.endRows(len(res.Rows), size, err)
		}()
	}
	cur, o, err := t.newCursor(ctx, start, end, opts, false)
	if err != nil {
		return RangeResult{}, annotate(err, op, t.name)
	}
	defer cur.release()
	want := MaxPageRows
	if o.limit > 0 {
		want = min(o.limit, MaxPageRows)
	}
	page := want // rows asked of the backend at a time: PageSize, if given
	if o.pageSize > 0 {
		page = o.pageSize
	}
	for !cur.done && len(res.Rows) < want && size < MaxPageSize {
		rows, err := cur.next(ctx, min(want-len(res.Rows), page))
		if err != nil {
			return RangeResult{}, err
		}
		n := 0 // the rows to keep: up to the one that reaches MaxPageSize
		for n < len(rows) {
			size += rows[n].Size()
			n++
			if size >= MaxPageSize {
				break
			}
		}
		switch {
		case n == 0:
		case res.Rows == nil: // the backend's page is ours: keep it rather than copy it
			res.Rows = rows[:n:n]
		default:
			res.Rows = append(res.Rows, rows[:n]...)
		}
	}
	if len(res.Rows) > 0 && (len(res.Rows) >= want || size >= MaxPageSize) {
		res.Next = encodeToken(token{table: t.name, backward: o.backward, exclusive: true, key: res.Rows[len(res.Rows)-1].Key})
	}
	return res, nil
}

// Rows streams the range (up to [Limit] rows) in pages of [PageSize],
// memory bounded by one page; it stops at and yields the first error.
func (t *Table) Rows(ctx context.Context, start, end PrimaryKey, opts ...RangeOption) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		ctx, st := t.c.begin(ctx, "Rows", t.name)
		yield, done := st.observeRows(yield)
		defer done()
		cur, o, err := t.newCursor(ctx, start, end, opts, true)
		if err != nil {
			yield(Row{}, annotate(err, "GetRange", t.name))
			return
		}
		defer cur.release()
		page, remaining := o.streamSizes()
		yieldPages(ctx, page, remaining, func() bool { return cur.done }, cur.next, yield)
	}
}

// token is the decoded form of a resume token.
type token struct {
	table     string
	backward  bool
	exclusive bool
	key       PrimaryKey
}

const tokenVersion = 1

// tokenSize is the length of encodeToken(t).
func tokenSize(t token) int {
	n := 2 + wire.StringLen(t.table) + 1
	for _, p := range t.key {
		n += wire.StringLen(p.Name) + 1
		if p.Value.typ == TypeInteger {
			n += 8
		} else {
			n += wire.StringLen(p.Value.str)
		}
	}
	return n
}

func encodeToken(t token) []byte {
	b := append(make([]byte, 0, tokenSize(t)), tokenVersion, 0)
	if t.backward {
		b[1] |= 1
	}
	if t.exclusive {
		b[1] |= 2
	}
	b = wire.AppendString(b, t.table)
	b = append(b, byte(len(t.key)))
	for _, p := range t.key {
		b = wire.AppendString(b, p.Name)
		b = append(b, byte(p.Value.typ))
		switch p.Value.typ {
		case TypeInteger:
			b = binary.BigEndian.AppendUint64(b, p.Value.num)
		default:
			b = wire.AppendString(b, p.Value.str)
		}
	}
	return b
}

func decodeToken(b []byte) (token, error) {
	bad := invalid("resume token is malformed")
	var t token
	if len(b) < 3 || b[0] != tokenVersion || b[1]&^3 != 0 {
		return t, bad
	}
	t.backward, t.exclusive = b[1]&1 != 0, b[1]&2 != 0
	b = b[2:]
	all := string(b) // one copy: the decoded strings are substrings of it
	str := func() (string, bool) {
		s, k := wire.String(all[len(all)-len(b):])
		if k <= 0 {
			return "", false
		}
		b = b[k:]
		return s, true
	}
	var ok bool
	if t.table, ok = str(); !ok || len(b) < 1 {
		return t, bad
	}
	n := int(b[0])
	b = b[1:]
	if n < 1 || n > MaxKeyColumns {
		return t, bad
	}
	for range n {
		name, ok := str()
		if !ok || len(b) < 1 {
			return t, bad
		}
		typ := Type(b[0])
		b = b[1:]
		v := Value{typ: typ}
		switch typ {
		case TypeInteger:
			if len(b) < 8 {
				return t, bad
			}
			v.num = binary.BigEndian.Uint64(b)
			b = b[8:]
		case TypeString, TypeBinary:
			if v.str, ok = str(); !ok {
				return t, bad
			}
		default:
			return t, bad
		}
		t.key = append(t.key, KeyPart{Name: name, Value: v})
	}
	if len(b) != 0 {
		return t, bad
	}
	return t, nil
}

// decodeCanonicalToken accepts only the bytes encodeToken produces.
func decodeCanonicalToken(b []byte) (token, error) {
	t, err := decodeToken(b)
	if err != nil {
		return t, err
	}
	if string(encodeToken(t)) != string(b) {
		return token{}, invalid("resume token is malformed")
	}
	return t, nil
}

// yieldPages yields the rows of the pages next reads (at most page rows
// each, remaining in all) until done, the caller stops, ctx ends or a read
// fails; it yields the first error and stops. Rows and IndexTable.Rows
// share it.
func yieldPages(ctx context.Context, page, remaining int, done func() bool, next func(context.Context, int) ([]Row, error), yield func(Row, error) bool) {
	for !done() && remaining > 0 {
		rows, err := next(ctx, min(page, remaining))
		if err != nil {
			yield(Row{}, err)
			return
		}
		for _, r := range rows {
			if err := ctx.Err(); err != nil {
				yield(Row{}, err)
				return
			}
			remaining--
			if !yield(r, nil) {
				return
			}
		}
	}
}
