package tablekit

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// maxIndexAttempts bounds the retries of a write whose newest-value guard
// failed because another writer changed an index column (index.go); past
// it the write fails with ErrUnavailable (retryable), never with the
// ErrConditionFailed the caller did not ask for.
const maxIndexAttempts = 32

// guardBackoff waits a little before a guarded write tries again, longer
// after each attempt, so that writers of one row stop colliding.
func guardBackoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(attempt)*int64(time.Millisecond)) + 1)
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func guardExhausted(req *WriteRequest) error {
	return Errorf(ErrUnavailable, "table %q row %v: its index columns kept changing under %d attempts; the write was not applied", req.Meta.Name, req.Key, maxIndexAttempts)
}

// indexPlan is what a write puts before its row: entries, and the guard
// its row write is conditioned on.
type indexPlan struct {
	entries []*WriteRequest
	guard   Filter
	cur     *Row     // the row as read for the guard
	cols    []string // the guarded columns
	// guarded are the indexes of two or more attribute columns, all
	// guarded, of a table keeping several versions; known the index keys
	// (storage, then key) the plan covers for them: put now, or of values
	// read (whose entries exist).
	guarded []*IndexSpec
	known   map[string]bool
	// made are the first entries' allocations, for release.
	made  [MaxIndexes]*entryReq
	nmade int
}

// release gives the plan's entry requests back for reuse: the caller has
// sent them, and a backend keeps no request after its call (Backend).
func (p *indexPlan) release() {
	for i := range p.nmade {
		entryReqs.Put(p.made[i])
		p.made[i] = nil
	}
	p.nmade = 0
	p.entries = nil
}

// IndexWriter (for adapters) is [Capabilities.IndexedWrite] (SPEC §16): a backend that
// takes a row write together with its index entries and commits them in
// one step, so that the entries are never later than the row, for readers
// and across a crash alike, and one call does both.
//
// Auto-increment keys (SPEC §14): implementing IndexWriter on a backend
// with [Capabilities.AutoIncrement] is promising the contract below for a
// req whose key holds [AutoIncrement] too; there is no separate
// capability, and a backend that cannot keep that promise must not
// implement the interface (or must answer ErrSkip for such a write). It is
// what lets a table with an auto-increment key column be indexed: without
// IndexedWrite, CreateTable with indexes and AddIndex refuse such a table
// with ErrUnimplemented.
type IndexWriter interface {
	// WriteIndexed applies req as Write would, and entries (unconditional
	// puts of entry-table rows, of other tables than req's): every entry
	// is visible no later than req's write, and a crash keeps req's write
	// only with its entries. An entry whose table does not exist is
	// skipped (its index was dropped meanwhile). When req fails (its
	// condition, say) it returns req's error; entries may then have been
	// written or not (an extra entry is harmless: reads verify).
	//
	// When req is a put or update whose key holds AutoIncrement (a new
	// row), the backend assigns the value as Write does (SPEC §14) and,
	// in the same step, stores each entry under the key [AssignEntries]
	// gives it for that value (an entry key may hold the placeholder where
	// the row's auto-increment column appears in the index key): the file
	// engine commits row and entries in one pebble batch; the local engine
	// stores the entries under the assigned value, then the row. Should
	// the assigned row turn out to be taken and the value be assigned
	// again, entries stored for the first value are extra entries, which
	// are harmless. The result's Key is the key written, as Write's.
	//
	// It may answer ErrSkip, nothing written: the Client then puts the
	// entries and writes the row after them, as without an IndexWriter,
	// except for a write whose key holds AutoIncrement, which then fails
	// with ErrUnimplemented, nothing written (never the row without its
	// entries).
	WriteIndexed(ctx context.Context, req *WriteRequest, entries []*WriteRequest) (*UpdateResult, error)
}

// AssignEntries (for adapters) returns entries, the index entries an [IndexWriter] takes
// with a write whose key held [AutoIncrement], as they are stored once the
// write is assigned value v: each entry whose key holds the placeholder (a
// key of three parts, the index key's bytes before the auto-increment
// value, AutoIncrement, and the bytes after it) is replaced by a copy
// under the entry key holding v; the others are kept. The slice is new
// when one was replaced; entries and their requests are not changed.
func AssignEntries(entries []*WriteRequest, v int64) []*WriteRequest {
	out, cloned := entries, false
	for i, q := range entries {
		k := q.Key
		if len(k) != 3 || !k[1].Value.IsAutoIncrement() {
			continue
		}
		if !cloned {
			out, cloned = slices.Clone(entries), true
		}
		b := make([]byte, 0, len(k[0].Value.str)+8+len(k[2].Value.str))
		b = append(b, k[0].Value.str...)
		b = appendIndexValue(b, Integer(v))
		b = append(b, k[2].Value.str...)
		cp := *q
		cp.Key = entryChunks(b)
		out[i] = &cp
	}
	return out
}

// entryPutAuto is entryPut of an entry of a write whose key holds
// AutoIncrement: b's 8 bytes at at are the placeholder of the value the
// row write assigns, and the key is the form [AssignEntries] resolves.
func entryPutAuto(storage string, b []byte, at int, now int64) *WriteRequest {
	e := entryPut(storage, nil, now)
	e.Key = PrimaryKey{{Name: entryKey[0].Name, Value: BinaryString(string(b[:at]))}, {Name: entryKey[1].Name, Value: AutoIncrement},
		{Name: entryKey[2].Name, Value: BinaryString(string(b[at+8:]))}}
	return e
}

// isAutoWrite reports whether req creates a row whose key the backend
// assigns (SPEC §14).
func isAutoWrite(req *WriteRequest) bool {
	return req.Kind != WriteDelete && req.Key.AutoIncrementIndex() >= 0
}

// writeAutoIndexed writes req, a new row of an indexed table whose key
// holds AutoIncrement: only an IndexWriter can, in the one step that
// assigns the key (see the index notes, "Auto-increment keys"). The row
// is new, so there is no row to read and no guard. Without one, nothing
// is written and the write fails with ErrUnimplemented.
func (c *Client) writeAutoIndexed(ctx context.Context, req *WriteRequest) (*UpdateResult, error) {
	m := req.Meta
	col := m.Key[req.Key.AutoIncrementIndex()].Name
	iw, ok := optional[IndexWriter](c, c.caps.IndexedWrite)
	if !ok {
		return nil, autoIncrementRefusal(m.Name, col, "the backend cannot commit a row write and its index entries in one step (Capabilities.IndexedWrite is false); nothing was written")
	}
	var plan indexPlan
	if err := c.planIndexes(ctx, req, &plan, 0); err != nil {
		return nil, err
	}
	res, err := iw.WriteIndexed(ctx, req, plan.entries)
	plan.release()
	if errors.Is(err, ErrSkip) {
		return nil, autoIncrementRefusal(m.Name, col, "the backend declined to commit the row write and its index entries in one step (WriteIndexed answered ErrSkip); nothing was written")
	}
	return res, err
}

// applyWrite writes one row, maintaining its table's indexes first.
func (c *Client) applyWrite(ctx context.Context, req *WriteRequest) (*UpdateResult, error) {
	if len(req.Meta.Indexes) == 0 {
		return c.b.Write(ctx, req)
	}
	if isAutoWrite(req) {
		return c.writeAutoIndexed(ctx, req)
	}
	iw, together := optional[IndexWriter](c, c.caps.IndexedWrite)
	var plan indexPlan // on the stack: a put's plan is read only here
	for attempt := 1; ; attempt++ {
		// Entries written with their row in one step are stamped with the
		// row's time (no grace to keep: below); the clock is read again
		// for any other try.
		stamp := int64(0)
		if together && attempt == 1 {
			stamp = req.Now
		}
		plan = indexPlan{}
		if err := c.planIndexes(ctx, req, &plan, stamp); err != nil {
			return nil, err
		}
		w := req
		if plan.guard != nil {
			cp := *req
			cp.Condition.Column = andFilter(req.Condition.Column, plan.guard)
			w = &cp
		}
		var (
			res *UpdateResult
			err error
		)
		if together {
			// Entries and row in one step: no entry put can grow old
			// before its row write (no grace check).
			res, err = iw.WriteIndexed(ctx, w, plan.entries)
			together = !errors.Is(err, ErrSkip)
			if together {
				plan.release()
			} else if stamp != 0 {
				continue // plan again, stamped now, for separate calls
			}
		}
		if !together {
			start := time.Now()
			if err := c.putEntries(ctx, plan.entries); err != nil {
				return nil, err
			}
			if time.Since(start) > c.grace()/2 && attempt < maxIndexAttempts {
				continue // the entries might be old enough to be removed: put them again
			}
			res, err = c.b.Write(ctx, w)
		}
		if err == nil && plan.guard != nil {
			err = c.putRevealed(ctx, req, &plan)
		}
		if err == nil || plan.guard == nil || !errors.Is(err, ErrConditionFailed) {
			return res, err
		}
		if !req.Condition.IsZero() {
			// The caller's condition or the guard failed: if the guarded
			// columns are as read, it was the caller's.
			now, rerr := c.readIndexColumns(ctx, req, plan.cols)
			if rerr != nil {
				return nil, rerr
			}
			if sameNewest(now, plan.cur, plan.cols) {
				return nil, err
			}
		}
		if attempt >= maxIndexAttempts {
			return nil, guardExhausted(req)
		}
		if err := guardBackoff(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

func andFilter(a, b Filter) Filter {
	if a == nil {
		return b
	}
	return And(a, b)
}

// readIndexColumns reads the visible versions of cols of req's row.
func (c *Client) readIndexColumns(ctx context.Context, req *WriteRequest, cols []string) (*Row, error) {
	return c.b.GetRow(ctx, &GetRowRequest{Meta: req.Meta, Key: req.Key, Now: c.now(),
		Read: ReadSpec{Columns: cols, MaxVersions: max(req.Meta.Options.MaxVersions, 1)}})
}

// newest returns the newest visible value of column name in r.
func newest(r *Row, name string) (Value, bool) {
	if r == nil {
		return Value{}, false
	}
	return r.Get(name)
}

func sameNewest(a, b *Row, cols []string) bool {
	for _, name := range cols {
		va, oka := newest(a, name)
		vb, okb := newest(b, name)
		if oka != okb || va != vb {
			return false
		}
	}
	return true
}

// guardFilter passes a row whose newest values of cols are those of cur.
func guardFilter(cur *Row, cols []string) Filter {
	fs := make([]Filter, 0, len(cols))
	for _, name := range cols {
		if v, ok := newest(cur, name); ok {
			fs = append(fs, SingleColumnValue(name, Equal, v).Required())
		} else { // absent: any cell fails one of the two
			fs = append(fs, SingleColumnValue(name, Equal, Boolean(false)), SingleColumnValue(name, Equal, Boolean(true)))
		}
	}
	return And(fs...)
}

// attrColumns returns ix's columns that are not key columns of m (ix's
// own slice, capped, when it has no key column: callers only read it).
func attrColumns(m *TableMeta, ix *IndexSpec) []KeyColumn {
	n := 0
	for _, col := range ix.Columns {
		if !isKeyName(m, col.Name) {
			n++
		}
	}
	if n == len(ix.Columns) {
		return ix.Columns[:n:n]
	}
	out := make([]KeyColumn, 0, n)
	for _, col := range ix.Columns {
		if !isKeyName(m, col.Name) {
			out = append(out, col)
		}
	}
	return out
}

// planIndexes checks req against its table's indexes (types, sizes: before
// anything is written) and fills plan, empty, with the entries to put
// first (and the guard). The entries are stamped with now, or the clock's
// time when now is 0 or the row was read.
func (c *Client) planIndexes(ctx context.Context, req *WriteRequest, plan *indexPlan, now int64) error {
	m := req.Meta
	if req.Kind == WriteDelete {
		return nil
	}
	// Which indexes need the row read, and which columns it guards (a
	// row whose key the write assigns is new: nothing to read).
	if req.Kind == WriteUpdate && !isAutoWrite(req) {
		for i := range m.Indexes {
			ix := &m.Indexes[i]
			attrs := attrColumns(m, ix)
			touched, incr := false, false
			for _, ch := range req.Changes {
				if slices.ContainsFunc(attrs, func(k KeyColumn) bool { return k.Name == ch.Column }) {
					touched = touched || ch.Kind == ChangePut || ch.Kind == ChangeIncrement
					incr = incr || ch.Kind == ChangeIncrement
				}
			}
			if touched && (incr || len(attrs) >= 2) {
				for _, a := range attrs {
					if !slices.Contains(plan.cols, a.Name) {
						plan.cols = append(plan.cols, a.Name)
					}
				}
			}
		}
		if len(plan.cols) > 0 {
			slices.Sort(plan.cols)
			cur, err := c.readIndexColumns(ctx, req, plan.cols)
			if err != nil {
				return err
			}
			plan.cur = cur
			plan.guard = guardFilter(cur, plan.cols)
		}
	}
	if now == 0 || plan.cur != nil || len(plan.cols) > 0 {
		now = c.now()
	}
	for i := range m.Indexes {
		ix := &m.Indexes[i]
		if err := c.planIndex(m, ix, req, plan, now); err != nil {
			return err
		}
	}
	return nil
}

// planIndex adds ix's entries for req to plan.
func (c *Client) planIndex(m *TableMeta, ix *IndexSpec, req *WriteRequest, plan *indexPlan, now int64) error {
	attrs := attrColumns(m, ix)
	read := plan.cur != nil || len(plan.cols) > 0
	guarded := read && len(attrs) > 0 && !slices.ContainsFunc(attrs, func(k KeyColumn) bool { return !slices.Contains(plan.cols, k.Name) })
	// Only a combination of two attribute columns' values, one of them not
	// the newest, can be in no plan (see putRevealed).
	revealing := guarded && len(attrs) >= 2 && m.Options.MaxVersions > 1
	if revealing {
		plan.guarded = append(plan.guarded, ix)
	}
	// vals[j] are column j's values, fresh[j][n] whether vals[j][n] is
	// written by req (not read). Arrays, not slices of them, and room for
	// one value per column (a put's): all on the stack while they fit.
	var (
		vals     [MaxIndexColumns][]Value
		fresh    [MaxIndexColumns][]bool
		oneVal   [MaxIndexColumns][1]Value
		oneFresh [MaxIndexColumns][1]bool
	)
	for j := range ix.Columns {
		vals[j], fresh[j] = oneVal[j][:0], oneFresh[j][:0]
	}
	wrote := false
	for j, col := range ix.Columns {
		if kv, ok := req.Key.Get(col.Name); ok {
			vals[j], fresh[j] = append(vals[j], kv), append(fresh[j], true)
			continue
		}
		add := func(v Value, written bool) error {
			if v.typ != col.Type {
				if !written {
					return nil // a value stored before the index: not indexed
				}
				return invalid("table %q index %q: column %q is %v; the index says %v", m.Name, ix.Name, col.Name, v.typ, col.Type)
			}
			if err := checkKeyValue(col, v, false); err != nil {
				return invalid("table %q index %q: %s", m.Name, ix.Name, err.Msg)
			}
			if k := slices.IndexFunc(vals[j], func(w Value) bool { return w == v }); k >= 0 {
				fresh[j][k] = fresh[j][k] || written
				return nil
			}
			vals[j] = append(vals[j], v)
			fresh[j] = append(fresh[j], written)
			wrote = wrote || written
			return nil
		}
		switch req.Kind {
		case WritePut:
			for _, cell := range req.Columns {
				if cell.Name == col.Name {
					if err := add(cell.Value, true); err != nil {
						return err
					}
				}
			}
		case WriteUpdate:
			base, has := newest(plan.cur, col.Name)
			if guarded && plan.cur != nil {
				for _, cell := range plan.cur.Versions(col.Name) {
					if err := add(cell.Value, false); err != nil {
						return err
					}
				}
			}
			for _, ch := range req.Changes {
				if ch.Column != col.Name {
					continue
				}
				switch ch.Kind {
				case ChangePut:
					base, has = ch.Value, true
					if err := add(ch.Value, true); err != nil {
						return err
					}
				case ChangeDeleteColumn:
					has = false
				case ChangeIncrement:
					n := int64(0)
					if has {
						n, _ = base.Int()
					}
					base, has = Integer(n+ch.Delta), true
					if err := add(base, true); err != nil {
						return err
					}
				}
			}
		}
		if len(vals[j]) == 0 {
			return nil // the row will lack the column (or keeps what it has, whose entries exist)
		}
	}
	// An update writing no value that is not visible already puts no
	// entry (they exist); the plan still knows them.
	none := req.Kind == WriteUpdate && len(attrs) > 0 && !wrote
	if none && !revealing {
		return nil
	}
	// The table's other key columns, in its order (indexKeySchema).
	var tailRoom, keyRoom [128]byte // an index key's bytes, on the stack when short
	tail := tailRoom[:0]
	tailAuto := -1 // where in tail the AutoIncrement placeholder is
	for _, kc := range m.Key {
		if !slices.ContainsFunc(ix.Columns, func(c KeyColumn) bool { return c.Name == kc.Name }) {
			kv, _ := req.Key.Get(kc.Name)
			if kv.IsAutoIncrement() {
				tailAuto = len(tail)
			}
			tail = appendIndexValue(tail, kv)
		}
	}
	// Every combination, one value per column, with at least one written
	// value (the others' entries exist already).
	var idxBuf [MaxIndexColumns]int
	idx := idxBuf[:len(ix.Columns)]
	for {
		written := req.Kind == WritePut || len(attrs) == 0
		b := keyRoom[:0]
		at := -1 // where the AutoIncrement placeholder is (SPEC §14)
		for j, k := range idx {
			if vals[j][k].IsAutoIncrement() {
				at = len(b)
			}
			b = appendIndexValue(b, vals[j][k])
			written = written || fresh[j][k] && !isKeyName(m, ix.Columns[j].Name)
		}
		if tailAuto >= 0 {
			at = len(b) + tailAuto
		}
		b = append(b, tail...)
		if len(b) > MaxIndexKeySize {
			return invalid("table %q index %q: the index key of row %v is %d bytes encoded; the limit is %d", m.Name, ix.Name, req.Key, len(b), MaxIndexKeySize)
		}
		switch {
		case !written || none:
		case at >= 0:
			plan.entries = append(plan.entries, entryPutAuto(ix.Storage, b, at, now))
		default:
			e := newEntryPut(ix.Storage, b, now)
			if plan.nmade < len(plan.made) {
				plan.made[plan.nmade] = e
				plan.nmade++
			}
			if plan.entries == nil { // the first: its slice is in its allocation
				e.self[0] = &e.req
				plan.entries = e.self[:]
			} else {
				plan.entries = append(plan.entries, &e.req)
			}
		}
		if revealing {
			if plan.known == nil {
				plan.known = map[string]bool{}
			}
			plan.known[ix.Storage+"\x00"+string(b)] = true
		}
		j := len(idx) - 1
		for ; j >= 0; j-- {
			idx[j]++
			if idx[j] < len(vals[j]) {
				break
			}
			idx[j] = 0
		}
		if j < 0 {
			return nil
		}
	}
}

// putRevealed is the second half of a guarded write, after its row write:
// the guard compares newest values only, so a value of an index column
// written and then covered by a newer version of the value read (p, then
// x, then p again) passes it, and stays visible under it; the combinations
// of such a value with the values this write put are in no writer's plan
// (see "The guard's blind spot" in index.go). It reads the guarded
// columns again and puts the entries of every combination the plan did
// not cover. An error says the row was written.
func (c *Client) putRevealed(ctx context.Context, req *WriteRequest, plan *indexPlan) error {
	if len(plan.guarded) == 0 {
		return nil
	}
	row, err := c.readIndexColumns(ctx, req, plan.cols)
	if err == nil && row != nil {
		var entries []*WriteRequest
		now := c.now()
		for _, ix := range plan.guarded {
			for _, b := range rowEntries(req.Meta, ix, indexKeySchema(req.Meta, ix), row) {
				if !plan.known[ix.Storage+"\x00"+b] {
					entries = append(entries, entryPut(ix.Storage, []byte(b), now))
				}
			}
		}
		err = c.putEntries(ctx, entries)
	}
	if err != nil {
		return Errorf(ErrUnavailable, "table %q row %v: the write was applied, but putting the index entries of the values it made visible failed (Client.Reindex puts them): %v", req.Meta.Name, req.Key, err)
	}
	return nil
}

// entryReq is an entry's put: the request, its key's pieces and its cells
// in one allocation, and room for a slice of one request (a plan's
// entries when it has only this one).
type entryReq struct {
	req  WriteRequest
	key  [4]KeyPart // len(entryKey)
	cols [2]Column
	self [1]*WriteRequest
}

// entryReqs holds entry requests for reuse (indexPlan.release).
var entryReqs = sync.Pool{New: func() any { return new(entryReq) }}

// newEntryPut is the put of an entry with a new stamp, its allocation
// reused when one was released (every field is set here).
func newEntryPut(storage string, key []byte, now int64) *entryReq {
	e := entryReqs.Get().(*entryReq)
	e.cols = [2]Column{{Name: "n", Value: Integer(randomNonce()), Version: now}, {Name: "t", Value: Integer(now), Version: now}}
	e.req = WriteRequest{Meta: storageMeta(storage), Kind: WritePut, Key: appendEntryChunks(e.key[:0], key), Now: now, Columns: e.cols[:]}
	return e
}

// entryPut is the put of an entry with a new stamp.
func entryPut(storage string, key []byte, now int64) *WriteRequest {
	return &newEntryPut(storage, key, now).req
}

// putEntries puts entries (an entry table that is gone belongs to an index
// dropped meanwhile: skipped).
func (c *Client) putEntries(ctx context.Context, entries []*WriteRequest) error {
	for len(entries) > 0 {
		n := min(len(entries), MaxBatchWrite)
		res, err := c.batchWrite(ctx, entries[:n])
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil && !errors.Is(r.Err, ErrTableNotFound) {
				return r.Err
			}
		}
		entries = entries[n:]
	}
	return nil
}

// indexed reports whether a request of reqs is of an indexed table.
func indexed(reqs []*WriteRequest) bool {
	for _, r := range reqs {
		if len(r.Meta.Indexes) > 0 {
			return true
		}
	}
	return false
}

// batchWriteIndexed is batchWrite of a batch with writes of indexed tables:
// those go one by one (each with its entries first), the rest in one batch.
func (c *Client) batchWriteIndexed(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error) {
	out := make([]WriteResponse, len(reqs))
	var plain []*WriteRequest
	var at []int
	var ix []*WriteRequest
	var ixAt []int
	for i, r := range reqs {
		if len(r.Meta.Indexes) > 0 {
			ix, ixAt = append(ix, r), append(ixAt, i)
		} else {
			plain, at = append(plain, r), append(at, i)
		}
	}
	if len(plain) > 0 {
		res, err := c.batchWrite(ctx, plain)
		if err != nil {
			return nil, err
		}
		for k, r := range res {
			out[at[k]] = r
		}
	}
	res, err := perRow(ctx, ix, func(ctx context.Context, q *WriteRequest, r *WriteResponse) error {
		r.Update, r.Err = c.applyWrite(ctx, q)
		return r.Err
	})
	if err != nil {
		return nil, err
	}
	for k, r := range res {
		out[ixAt[k]] = r
	}
	return out, nil
}

// atomicIndexed is an atomic write of an indexed table: every write's
// entries first, then the writes, all or nothing, each on its guard (the
// store has no transaction spanning the entry tables). A write whose key
// holds AutoIncrement is refused, nothing written: its entries need the
// key the atomic write assigns, and no backend call takes an atomic write
// with entries (IndexWriter takes one row); its real-key writes (updates
// and deletes of rows stored, puts of migrated keys) go as on any table.
func (c *Client) atomicIndexed(ctx context.Context, aw AtomicWriter, reqs []*WriteRequest) ([]WriteResponse, error) {
	for i, req := range reqs {
		if isAutoWrite(req) {
			m := req.Meta
			return nil, &AtomicWriteError{Index: i, Err: autoIncrementRefusal(m.Name, m.Key[req.Key.AutoIncrementIndex()].Name,
				"an atomic write cannot create a row with AutoIncrement in an indexed table (no backend commits an atomic write with its index entries; write the row alone, with PutRow, BatchWriteRow or WriteAll); nothing was written")}
		}
	}
	for attempt := 1; ; attempt++ {
		plans := make([]indexPlan, len(reqs))
		var entries []*WriteRequest
		guarded := make([]*WriteRequest, len(reqs))
		for i, req := range reqs {
			plan := &plans[i]
			if err := c.planIndexes(ctx, req, plan, 0); err != nil {
				return nil, &AtomicWriteError{Index: i, Err: err}
			}
			entries = append(entries, plan.entries...)
			guarded[i] = req
			if plan.guard != nil {
				cp := *req
				cp.Condition.Column = andFilter(req.Condition.Column, plan.guard)
				guarded[i] = &cp
			}
		}
		start := time.Now()
		if err := c.putEntries(ctx, entries); err != nil {
			return nil, err
		}
		if time.Since(start) > c.grace()/2 && attempt < maxIndexAttempts {
			continue
		}
		res, err := aw.AtomicWrite(ctx, guarded)
		if err == nil {
			for i := range plans {
				if plan := &plans[i]; plan.guard != nil {
					if err := c.putRevealed(ctx, reqs[i], plan); err != nil {
						return nil, &AtomicWriteError{Index: i, Err: err}
					}
				}
			}
			return res, nil
		}
		var ae *AtomicWriteError
		if err == nil || !errors.As(err, &ae) || !errors.Is(ae.Err, ErrConditionFailed) ||
			ae.Index < 0 || ae.Index >= len(reqs) || plans[ae.Index].guard == nil {
			return res, err
		}
		if req, plan := reqs[ae.Index], &plans[ae.Index]; !req.Condition.IsZero() {
			now, rerr := c.readIndexColumns(ctx, req, plan.cols)
			if rerr != nil {
				return nil, rerr
			}
			if sameNewest(now, plan.cur, plan.cols) {
				return res, err
			}
		}
		if attempt >= maxIndexAttempts {
			return nil, &AtomicWriteError{Index: ae.Index, Err: guardExhausted(reqs[ae.Index])}
		}
		if err := guardBackoff(ctx, attempt); err != nil {
			return nil, err
		}
	}
}
