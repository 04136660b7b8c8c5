package gcpbigtable

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/rowmodel"
)

// A write takes one of three paths (the package doc explains why each is
// atomic and loses no update):
//
//   - blind: no condition, and a change set whose effect does not depend on
//     the row (PutRow, DeleteRow, UpdateRow with only Put and DeleteColumn).
//     One MutateRow.
//   - guarded: a blind UpdateRow whose every column ends deleted. One
//     CheckAndMutateRow that deletes the row instead when it would keep no
//     c cell and no marker (writeGuarded).
//   - existence: the same writes under a row-existence condition without a
//     column filter. One CheckAndMutateRow whose predicate is "the row
//     exists" (existsFilter).
//   - optimistic: everything else (column conditions, Increment,
//     DeleteVersion). Read the visible row and its revision, compute the new
//     row with rowmodel, then CheckAndMutateRow on "the revision is still
//     the one read"; retry on a lost race.
//   - auto: a write whose key holds tablekit.AutoIncrement. A value from
//     the partition's counter, then a put if absent (autoinc.go).
//
// The revision rule that makes the optimistic predicate mean "the row is
// unchanged": a mutation that starts with DeleteRow (every PutRow and
// DeleteRow) removes m:rev, and every other mutation that changes a row
// (an UpdateRow, any optimistic write, a stamp) sets a fresh one. A PutRow
// on the blind or existence path writes none, which saves a cell on the
// commonest write; the optimistic path stamps such a row before it relies
// on the revision (see writeOptimistic).

type path int

const (
	pathBlind path = iota
	pathGuarded
	pathExistence
	pathOptimistic
	pathAuto // a new row whose key holds tablekit.AutoIncrement (autoinc.go)
)

// maxGuardedColumns bounds the columns a guarded write's predicate lists
// (one column range per gap between them); an update that deletes more
// columns takes the optimistic path.
const maxGuardedColumns = 64

// deletedOnly returns, sorted and without repeats, the columns of an
// update whose every touched column ends deleted (no column's last change
// is a Put), so the update may leave the row with no c cell; ok is false
// when some Put survives. Only Put and DeleteColumn are considered (the
// other kinds take the optimistic path).
func deletedOnly(changes []tablekit.Change) (cols []string, ok bool) {
	if n := len(changes); n == 0 || changes[n-1].Kind == tablekit.ChangePut {
		return nil, false // the commonest update, decided without allocating
	}
	last := make(map[string]tablekit.ChangeKind, len(changes))
	for i := len(changes) - 1; i >= 0; i-- {
		ch := &changes[i]
		if _, seen := last[ch.Column]; seen {
			continue
		}
		if ch.Kind == tablekit.ChangePut {
			return nil, false
		}
		last[ch.Column] = ch.Kind
		cols = append(cols, ch.Column)
	}
	slices.Sort(cols)
	return cols, true
}

// choosePath picks w's path from what SPEC says it must read first
// (rowmodel.WriteReads), and, for an update that may leave the row empty,
// from what the store needs besides (no row of bookkeeping alone).
func choosePath(w *tablekit.WriteRequest) path {
	if autoIncrement(w) {
		return pathAuto
	}
	reads := rowmodel.WriteReads(w)
	if reads == rowmodel.ReadsRow {
		return pathOptimistic
	}
	if w.Kind == tablekit.WriteUpdate {
		if cols, ok := deletedOnly(w.Changes); ok {
			// It may leave no c cell: never the plain paths, which
			// would leave a row of m:rev alone.
			if reads == rowmodel.ReadsNothing && len(cols) <= maxGuardedColumns {
				return pathGuarded
			}
			return pathOptimistic
		}
	}
	if reads == rowmodel.ReadsExistence {
		return pathExistence
	}
	return pathBlind
}

func setCell(m *bigtable.Mutation, c tablekit.Column) {
	m.Set(famCells, c.Name, cellTime(c.Version), encodeValue(c.Value))
}

// maxValueLen bounds the length of v's cell encoding (appendValue).
func maxValueLen(v tablekit.Value) int {
	switch v.Type() {
	case tablekit.TypeString, tablekit.TypeBinary:
		return 1 + v.Size()
	case tablekit.TypeInteger:
		return 1 + 20 // -9223372036854775808
	case tablekit.TypeDouble:
		return 1 + 24 // -2.2250738585072014e-308
	case tablekit.TypeBoolean:
		return 1 + 5
	}
	return 1
}

// cellsSize bounds the encoded size of cells' values.
func cellsSize(cells []tablekit.Column) int {
	n := 0
	for i := range cells {
		n += maxValueLen(cells[i].Value)
	}
	return n
}

// setCells sets every cell on m, encoding the values into buf, which it
// returns grown. Each value is a capped slice of buf and buf is only ever
// appended to, so a batch can share one buffer among all its rows (if it
// outgrows its capacity, the values already handed out keep the old array).
func setCells(m *bigtable.Mutation, cells []tablekit.Column, buf []byte) []byte {
	for i := range cells {
		c := &cells[i]
		start := len(buf)
		buf = appendValue(buf, c.Value)
		m.Set(famCells, c.Name, cellTime(c.Version), buf[start:len(buf):len(buf)])
	}
	return buf
}

// blindMutation is the mutation of a blind or existence-path write. A put
// or delete starts with DeleteRow, which also removes m:rev, and writes no
// new one; an update sets a fresh m:rev. A put or update stamps the row
// with the request's generation (stampGen). Values (and the revision and
// stamp) are encoded into buf, which it returns grown (see setCells).
//
// A put stores its cells as given, several versions of a column beyond
// MaxVersions included: reads hide those as they hide any version beyond
// MaxVersions, and the write needs no options that may be stale.
func (b *Backend) blindMutation(w *tablekit.WriteRequest, buf []byte) (*bigtable.Mutation, []byte) {
	m := bigtable.NewMutation()
	switch w.Kind {
	case tablekit.WriteDelete:
		m.DeleteRow()
	case tablekit.WritePut:
		m.DeleteRow()
		if len(w.Columns) == 0 {
			m.Set(famMeta, qualMarker, 0, markerValue)
		}
		buf = setCells(m, w.Columns, buf)
		buf = stampGen(m, w.Meta.Generation, buf)
	case tablekit.WriteUpdate:
		for _, ch := range w.Changes {
			switch ch.Kind {
			case tablekit.ChangePut:
				start := len(buf)
				buf = appendValue(buf, ch.Value)
				m.Set(famCells, ch.Column, cellTime(ch.Version), buf[start:len(buf):len(buf)])
			case tablekit.ChangeDeleteColumn:
				m.DeleteCellsInColumn(famCells, ch.Column)
			}
		}
		var rev []byte
		rev, buf = b.appendRev(buf)
		m.Set(famMeta, qualRev, 0, rev)
		buf = stampGen(m, w.Meta.Generation, buf)
	}
	return m, buf
}

// stampGen sets m:gen, the generation stamp, at timestamp gen ms, holding
// gen in decimal (for cbt), encoded into buf, which it returns grown. The
// stamp a read finds is the newest timestamp of m:gen, so a write never
// lowers it (except a put, which starts with DeleteRow and so replaces
// every cell written under any generation). Generations 1 and below need
// no stamp: no request has an older one, so nothing is stamped on a table
// whose options never changed.
func stampGen(m *bigtable.Mutation, gen int64, buf []byte) []byte {
	if gen <= 1 {
		return buf
	}
	start := len(buf)
	buf = strconv.AppendInt(buf, gen, 10)
	m.Set(famMeta, qualGen, cellTime(gen), buf[start:len(buf):len(buf)])
	return buf
}

// genLen bounds the length of a generation stamp's value.
const genLen = 20

// mutationSize bounds the bytes blindMutation encodes into its buffer for w.
func mutationSize(w *tablekit.WriteRequest) int {
	switch w.Kind {
	case tablekit.WritePut:
		return cellsSize(w.Columns) + genLen
	case tablekit.WriteUpdate:
		n := revLen + genLen
		for i := range w.Changes {
			if ch := &w.Changes[i]; ch.Kind == tablekit.ChangePut {
				n += maxValueLen(ch.Value)
			}
		}
		return n
	}
	return 0
}

// markerValue is the value of m:keyonly. Mutations keep a reference to
// it; nothing writes to it.
var markerValue = []byte("1")

// Write implements tablekit.Backend: one put, update or delete, on the
// cheapest path that is exact and atomic on its row (see the package doc).
func (b *Backend) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if autoIncrement(w) {
		return b.writeAuto(ctx, w, 0)
	}
	key, err := rowKey(w.Key)
	if err != nil {
		return nil, err
	}
	if err := b.raiseCounter(ctx, w); err != nil {
		return nil, err
	}
	tbl := b.table(w.Meta.Name, w.Meta.Incarnation)
	switch choosePath(w) {
	case pathBlind:
		m, _ := b.blindMutation(w, make([]byte, 0, mutationSize(w)))
		if err := tbl.Apply(ctx, key, m); err != nil {
			return nil, wrap(ctx, err, "writing key %v", w.Key)
		}
		return updateResult(w, nil), nil
	case pathGuarded:
		return b.writeGuarded(ctx, tbl, key, w)
	case pathExistence:
		return b.writeIfExists(ctx, tbl, key, w)
	}
	return b.writeOptimistic(ctx, tbl, key, w)
}

// writeGuarded is the guarded path: a blind UpdateRow whose every column
// ends deleted (deletedOnly), which on its own would leave a row holding
// nothing but m:rev when the row had no other data. One CheckAndMutateRow
// whose predicate, keptFilter, passes iff the row holds a c cell in a
// column the update does not touch, or m:keyonly: exactly when the row
// keeps a c cell or the marker after the update. True: the update's own
// mutation. False: DeleteRow, which leaves what the update would have left
// (no c cell: the update deletes every one there is; no marker) minus
// m:rev, that is, no row at all. Both branches are decided and applied
// atomically on the row, so no interleaving of other writes (and no crash
// between two calls) can leave a row of bookkeeping alone; and since a row
// with no c cell and no marker does not exist (SPEC §7), the false branch
// changes nothing a read, condition or filter can see. Removing m:rev also
// keeps the revision rule: an optimistic write that read the old revision
// fails its check and retries, as after any DeleteRow.
func (b *Backend) writeGuarded(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	cols, _ := deletedOnly(w.Changes)
	m, _ := b.blindMutation(w, make([]byte, 0, mutationSize(w)))
	gone := bigtable.NewMutation()
	gone.DeleteRow()
	if err := tbl.Apply(ctx, key, bigtable.NewCondMutation(keptFilter(cols), m, gone)); err != nil {
		return nil, wrap(ctx, err, "writing key %v", w.Key)
	}
	return updateResult(w, nil), nil
}

func updateResult(w *tablekit.WriteRequest, incs []tablekit.Column) *tablekit.UpdateResult {
	if w.Kind != tablekit.WriteUpdate {
		return nil
	}
	return &tablekit.UpdateResult{Increments: incs}
}

// writeIfExists is the existence path: one CheckAndMutateRow.
func (b *Backend) writeIfExists(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	cond := w.Condition
	m, _ := b.blindMutation(w, make([]byte, 0, mutationSize(w)))
	var cm *bigtable.Mutation
	if cond.Row == tablekit.ExpectExist {
		cm = bigtable.NewCondMutation(existsFilter(w.Meta.Options, w.Now), m, nil)
	} else {
		cm = bigtable.NewCondMutation(existsFilter(w.Meta.Options, w.Now), nil, m)
	}
	var matched bool
	if err := tbl.Apply(ctx, key, cm, bigtable.GetCondMutationResult(&matched)); err != nil {
		return nil, wrap(ctx, err, "writing key %v", w.Key)
	}
	if matched != (cond.Row == tablekit.ExpectExist) {
		if cond.Row == tablekit.ExpectExist {
			return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "row existence: expected the row %v to exist", w.Key)
		}
		return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "row existence: expected the row %v not to exist", w.Key)
	}
	return updateResult(w, nil), nil
}

// afterOptimisticRead, when set (by tests), runs after every read of the
// optimistic path, before the write that relies on it: a test uses it to
// land a concurrent write exactly there.
var afterOptimisticRead atomic.Pointer[func()]

// afterConfirmGeneration, when set (by tests), runs after confirmGeneration
// found the request current, before the write it guards: where an
// UpdateTable escapes the check (TestStaleRevealWindow).
var afterConfirmGeneration atomic.Pointer[func()]

// writeOptimistic is the optimistic path: read, compute with rowmodel,
// CheckAndMutateRow on what was read, retry when another write got there
// first. What the check compares depends on the read:
//
//   - The row has an m:rev r: the predicate is "m:rev = r". Every mutation
//     that changes a row either removes m:rev (it starts with DeleteRow) or
//     sets a fresh, never-repeated one, so m:rev = r at the check means no
//     write touched the row since the read, and the new row computed from
//     the read is exact.
//   - No m:rev and nothing visible (no visible cell, no marker): the
//     mutation goes in the false branch of "m:rev, a visible cell or the
//     marker exists", so it applies only if the row is still visibly empty
//     at the check, which is all the computation assumed. (Cells the read
//     could not see are expired, below the TTL bound of this Now; a put or
//     delete starts with DeleteRow, and an update rewrites the columns it
//     touches around them, see rewriteColumn.)
//   - No m:rev but visible data: the row was last written by a PutRow,
//     which leaves no revision, and another PutRow could replace it with
//     different values without leaving a trace a predicate could test. So
//     stamp it first: CheckAndMutateRow "the row has any cell" → set a
//     fresh m:rev (which changes no data, and creates no row), then read
//     again; from there on the first case applies. This costs two more
//     calls once per PutRow that is followed by an optimistic write; in
//     return every PutRow (the commonest write, alone and in batches) stores
//     one cell fewer.
//
// The read also returns the row's generation stamp (m:gen), so that
// rowmodel refuses, with driver.ErrStaleMeta, to rewrite a row written
// under newer options than the request's (SPEC §3): this path is the only
// one that trims versions with the request's options, and the check runs
// on a read the predicate proves current. That error, like a failed
// condition, ends the loop as it is.
func (b *Backend) writeOptimistic(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	opts := w.Meta.Options
	t := w.Now
	read := bigtable.RowFilter(visibleFilter(opts, t))
	lost := 0          // races lost to another write
	confirmed := false // the table's options are known to be the request's (rowmodel.Reveals)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := tbl.ReadRow(ctx, key, read)
		if err != nil {
			return nil, wrap(ctx, err, "reading key %v", w.Key)
		}
		var cur stored
		if r != nil {
			if cur, _, err = decodeRow(nil, r); err != nil {
				return nil, err
			}
		}
		if hook := afterOptimisticRead.Load(); hook != nil {
			(*hook)()
		}
		var cm *bigtable.Mutation
		var want bool // the predicate result that means the write applied
		var res *tablekit.UpdateResult
		stamping := cur.rev == nil && (len(cur.cells) > 0 || cur.marker)
		if stamping {
			// This attempt writes only the stamp; the next read sees it (or
			// whatever replaced it).
			stamp := bigtable.NewMutation()
			rev, _ := b.appendRev(nil)
			stamp.Set(famMeta, qualRev, 0, rev)
			cm = bigtable.NewCondMutation(dataFilter(), stamp, nil)
		} else {
			old := &rowmodel.Row{Cells: cur.cells, Marker: cur.marker, Generation: cur.gen}
			next, r, err := rowmodel.Apply(old, w)
			if err != nil {
				return nil, err
			}
			if !confirmed && rowmodel.Reveals(w, old, next) {
				if err := b.confirmGeneration(ctx, w.Meta); err != nil {
					return nil, err
				}
				confirmed = true
				if hook := afterConfirmGeneration.Load(); hook != nil {
					(*hook)()
				}
			}
			res = r
			m := b.rewrite(w, old, next)
			if cur.rev != nil {
				cm, want = bigtable.NewCondMutation(revFilter(cur.rev), m, nil), true
			} else {
				cm = bigtable.NewCondMutation(occupiedFilter(opts, t), nil, m)
			}
		}
		var matched bool
		if err := tbl.Apply(ctx, key, cm, bigtable.GetCondMutationResult(&matched)); err != nil {
			return nil, wrap(ctx, err, "writing key %v", w.Key)
		}
		if stamping {
			continue // the stamp is expected: read again at once
		}
		if matched == want {
			return res, nil
		}
		// Another write got in between. Retry at once the first time;
		// after that the row is contended: back off, with jitter.
		if lost > 0 {
			if err := optimisticBackoff.Wait(ctx, lost-1); err != nil {
				return nil, err
			}
		}
		lost++
	}
}

// confirmGeneration reads the table's metadata row and refuses, with the
// error that makes the Client read the table again and retry, a request
// whose options are older than the table's (rowmodel.CheckGeneration):
// writeOptimistic calls it before a write that could bring a hidden
// version back into view (rowmodel.Reveals), a DeleteVersion that keeps
// older versions of its column. Only an UpdateTable that lands between
// this read and the CheckAndMutateRow escapes it (two rows, no
// transaction between them).
func (b *Backend) confirmGeneration(ctx context.Context, meta *tablekit.TableMeta) error {
	cur, err := b.readMeta(ctx, meta.Name)
	if err != nil {
		return err
	}
	if cur.Incarnation != meta.Incarnation {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q was deleted and created again since the request's metadata was read", meta.Name)
	}
	return rowmodel.CheckGeneration(meta, cur.Generation)
}

// optimisticBackoff spaces the retries of an optimistic write on a
// contended row: the writes that won are single calls, so a short cap
// keeps a loser from waiting long after the row is free.
var optimisticBackoff = driver.Backoff{Max: 50 * time.Millisecond}

// rewrite is the mutation that turns the stored row into next. A put
// replaces the whole row (DeleteRow, then its cells); a delete, or an
// update that leaves nothing, deletes the row. An update rewrites only the
// columns it touches, with rewriteColumn. Whatever leaves a row sets a
// fresh m:rev and stamps the request's generation (rowmodel set
// next.Generation, never older than the row's).
func (b *Backend) rewrite(w *tablekit.WriteRequest, old, next *rowmodel.Row) *bigtable.Mutation {
	m := bigtable.NewMutation()
	if next == nil {
		m.DeleteRow()
		return m
	}
	if w.Kind == tablekit.WritePut {
		m.DeleteRow()
		for _, c := range next.Cells {
			setCell(m, c)
		}
		if next.Marker {
			m.Set(famMeta, qualMarker, 0, markerValue)
		}
	} else {
		opts := w.Meta.Options
		done := make(map[string]bool, len(w.Changes))
		for _, ch := range w.Changes {
			if !done[ch.Column] {
				done[ch.Column] = true
				rewriteColumn(m, ch.Column, columnCells(old.Cells, ch.Column), columnCells(next.Cells, ch.Column), ttlStart(opts, w.Now))
			}
		}
	}
	rev, _ := b.appendRev(nil)
	m.Set(famMeta, qualRev, 0, rev)
	stampGen(m, next.Generation, nil)
	return m
}

// columnCells returns the cells of one column (cells in stored order).
func columnCells(cells []tablekit.Column, name string) []tablekit.Column {
	lo := 0
	for lo < len(cells) && cells[lo].Name < name {
		lo++
	}
	hi := lo
	for hi < len(cells) && cells[hi].Name == name {
		hi++
	}
	return cells[lo:hi]
}

// rewriteColumn appends the mutations that leave column name holding
// exactly keep, given vis, the cells of it that were visible when the row
// was read (both newest first), and ttlTS, the read's TTL bound in µs.
//
// Bigtable may still hold cells of the column that were invisible: expired
// ones (below ttlTS) and versions beyond MaxVersions (older than every
// visible one). All of them lie below h = the oldest visible timestamp (or
// ttlTS when none was visible), and every stored cell from h up was visible.
// So: set the cells of keep that are new or changed; delete the visible
// cells keep drops one by one; delete [0, h) around keep's cells, so a
// hidden version can never come back into view. Sets go first, and no
// range touches a kept cell, so a column that keeps cells is never empty in
// between (bttest shares a row's column list with concurrent readers and
// races when a column disappears and comes back).
func rewriteColumn(m *bigtable.Mutation, name string, vis, keep []tablekit.Column, ttlTS int64) {
	if len(keep) == 0 {
		if len(vis) > 0 || ttlTS > 0 {
			m.DeleteCellsInColumn(famCells, name)
		}
		return
	}
	has := func(cells []tablekit.Column, c tablekit.Column) (tablekit.Column, bool) {
		for _, x := range cells {
			if x.Version == c.Version {
				return x, true
			}
		}
		return tablekit.Column{}, false
	}
	for _, c := range keep {
		if o, ok := has(vis, c); !ok || !o.Value.Equal(c.Value) {
			setCell(m, c)
		}
	}
	for _, o := range vis {
		if _, ok := has(keep, o); !ok {
			m.DeleteTimestampRange(famCells, name, cellTime(o.Version), cellTime(o.Version+1))
		}
	}
	h := ttlTS
	if len(vis) > 0 {
		h = int64(cellTime(vis[len(vis)-1].Version))
	}
	lo := int64(0)
	for i := len(keep) - 1; i >= 0; i-- { // oldest first
		ts := int64(cellTime(keep[i].Version))
		if ts >= h {
			break
		}
		if ts > lo {
			m.DeleteTimestampRange(famCells, name, bigtable.Timestamp(lo), bigtable.Timestamp(ts))
		}
		lo = int64(cellTime(keep[i].Version + 1))
	}
	if h > lo {
		m.DeleteTimestampRange(famCells, name, bigtable.Timestamp(lo), bigtable.Timestamp(h))
	}
}

// BatchWriteRow implements tablekit.BatchWriter. Blind writes go through
// ApplyBulk, one MutateRows call per table; the others run as single-row
// calls; all of these calls run in parallel, at most Config.Concurrency at
// once. Writes whose key holds tablekit.AutoIncrement take their values
// first, one ReadModifyWriteRow per partition key (batchValues: in request
// order). The Client never puts two writes of one row in one call, so their
// order does not matter.
//
// The per-row work is kept to what the mutations need: the row keys share
// one string and the cell values of the batch one buffer.
func (b *Backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	out := make([]tablekit.WriteResponse, len(reqs))
	keys := batchRowKeys(reqs, out)
	b.raiseCounters(ctx, reqs, out)
	type bulk struct {
		meta *tablekit.TableMeta // the first write's: its Name and Incarnation name the table
		idx  []int
		keys []string
		muts []*bigtable.Mutation
	}
	// First pass: which writes go in bulk, and how many value bytes they
	// encode, so one buffer holds them all.
	nBulk, size := 0, 0
	var single, auto []int
	for i, w := range reqs {
		if out[i].Err != nil {
			continue
		}
		if p := choosePath(w); p != pathBlind {
			single = append(single, i)
			if p == pathAuto {
				auto = append(auto, i)
			}
			continue
		}
		nBulk++
		size += mutationSize(w)
	}
	buf := make([]byte, 0, size)
	var bulks []*bulk
	var last *bulk
	for i, w := range reqs {
		if out[i].Err != nil || choosePath(w) != pathBlind {
			continue
		}
		g := last
		if g == nil || !sameTable(g.meta, w.Meta) {
			g = nil
			for _, x := range bulks {
				if sameTable(x.meta, w.Meta) {
					g = x
					break
				}
			}
			if g == nil {
				g = &bulk{meta: w.Meta}
				if len(bulks) == 0 { // the commonest batch: one table
					g.idx, g.keys, g.muts = make([]int, 0, nBulk), make([]string, 0, nBulk), make([]*bigtable.Mutation, 0, nBulk)
				}
				bulks = append(bulks, g)
			}
		}
		last = g
		var m *bigtable.Mutation
		m, buf = b.blindMutation(w, buf)
		g.idx = append(g.idx, i)
		g.keys = append(g.keys, keys[i])
		g.muts = append(g.muts, m)
	}
	applyBulk := func(ctx context.Context, g *bulk) {
		errs, err := b.table(g.meta.Name, g.meta.Incarnation).ApplyBulk(ctx, g.keys, g.muts)
		if err != nil {
			werr := wrap(ctx, err, "writing %d rows", len(g.keys))
			for _, i := range g.idx {
				out[i].Err = werr
			}
			return
		}
		for j, i := range g.idx {
			if errs != nil && errs[j] != nil {
				out[i].Err = wrap(ctx, errs[j], "writing key %v", reqs[i].Key)
				continue
			}
			out[i].Update = updateResult(reqs[i], nil)
		}
	}
	var vals []int64
	if len(auto) > 0 {
		vals = b.batchValues(ctx, reqs, auto, out)
	}
	err := driver.Parallel(ctx, len(bulks)+len(single), b.cfg.Concurrency, func(ctx context.Context, n int) error {
		if n < len(bulks) {
			applyBulk(ctx, bulks[n])
			return ctx.Err()
		}
		switch i := single[n-len(bulks)]; {
		case vals == nil || !autoIncrement(reqs[i]):
			out[i].Update, out[i].Err = b.Write(ctx, reqs[i])
		case out[i].Err == nil: // else batchValues refused it
			out[i].Update, out[i].Err = b.writeAuto(ctx, reqs[i], vals[i])
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sameTable reports whether two writes' metas name the same Bigtable table.
func sameTable(a, b *tablekit.TableMeta) bool {
	return a == b || (a.Name == b.Name && a.Incarnation == b.Incarnation)
}

// batchRowKeys returns the row key of every write, all substrings of one
// string; a key over Bigtable's limit gets its error in out instead (and
// the key "").
func batchRowKeys(reqs []*tablekit.WriteRequest, out []tablekit.WriteResponse) []string {
	ends := make([]int, len(reqs))
	total := 0
	for i, w := range reqs {
		n, err := rowKeySize(w.Key)
		if err != nil {
			out[i].Err = err
		}
		total += n
		ends[i] = total
	}
	buf := make([]byte, 0, total)
	for i, w := range reqs {
		if out[i].Err == nil {
			buf = codec.AppendKey(buf, w.Key)
		}
	}
	all := string(buf)
	keys := make([]string, len(reqs))
	start := 0
	for i, end := range ends {
		keys[i] = all[start:end]
		start = end
	}
	return keys
}
