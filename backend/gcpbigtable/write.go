package gcpbigtable

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/keycodec"
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

func choosePath(w *tablekit.WriteRequest) path {
	var cond tablekit.Condition
	switch {
	case w.Put != nil:
		cond = w.Put.Condition
	case w.Delete != nil:
		cond = w.Delete.Condition
	case w.Update != nil:
		cond = w.Update.Condition
		for _, ch := range w.Update.Changes {
			if ch.Kind == tablekit.ChangeIncrement || ch.Kind == tablekit.ChangeDeleteVersion {
				return pathOptimistic
			}
		}
		if cond.Column == nil {
			if cols, ok := deletedOnly(w.Update.Changes); ok {
				// It may leave no c cell: never the plain paths, which
				// would leave a row of m:rev alone.
				if cond.Row == tablekit.Ignore && len(cols) <= maxGuardedColumns {
					return pathGuarded
				}
				return pathOptimistic
			}
		}
	}
	switch {
	case cond.Column != nil:
		return pathOptimistic
	case cond.Row != tablekit.Ignore:
		return pathExistence
	}
	return pathBlind
}

func setCell(m *bigtable.Mutation, c tablekit.Column) {
	m.Set(famCells, c.Name, bigtable.Timestamp(c.Version*1000), encodeValue(c.Value))
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
		m.Set(famCells, c.Name, bigtable.Timestamp(c.Version*1000), buf[start:len(buf):len(buf)])
	}
	return buf
}

// hasRepeats reports whether a column name appears twice (several
// versions, which MaxVersions may trim). Names are never empty (SPEC §1).
func hasRepeats(cells []tablekit.Column) bool {
	if len(cells) <= 32 {
		for i := range cells {
			a := cells[i].Name
			for j := i + 1; j < len(cells); j++ {
				// The length and last byte settle almost every pair
				// without a call to compare the strings.
				if b := cells[j].Name; len(a) == len(b) && a[len(a)-1] == b[len(b)-1] && a == b {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(cells))
	for _, c := range cells {
		if _, ok := seen[c.Name]; ok {
			return true
		}
		seen[c.Name] = struct{}{}
	}
	return false
}

// putCells returns the cells a PutRow stores: its columns, minus versions
// MaxVersions already hides (rowmodel.Put drops them), so they are never
// stored. Only a column given more than once can have such versions.
func putCells(req *tablekit.PutRowRequest) []tablekit.Column {
	cells := req.Columns
	if len(cells) > req.Meta.Options.MaxVersions && hasRepeats(cells) {
		cells = rowmodel.Put(cells, req.Meta.Options, req.Now).Cells
	}
	return cells
}

// blindMutation is the mutation of a blind or existence-path write. A put
// or delete starts with DeleteRow, which also removes m:rev, and writes no
// new one; an update sets a fresh m:rev. Values (and the revision) are
// encoded into buf, which it returns grown (see setCells).
func (b *Backend) blindMutation(w *tablekit.WriteRequest, buf []byte) (*bigtable.Mutation, []byte) {
	m := bigtable.NewMutation()
	switch {
	case w.Delete != nil:
		m.DeleteRow()
	case w.Put != nil:
		m.DeleteRow()
		cells := putCells(w.Put)
		if len(cells) == 0 {
			m.Set(famMeta, qualMarker, 0, markerValue)
		}
		buf = setCells(m, cells, buf)
	case w.Update != nil:
		for _, ch := range w.Update.Changes {
			switch ch.Kind {
			case tablekit.ChangePut:
				start := len(buf)
				buf = appendValue(buf, ch.Value)
				m.Set(famCells, ch.Column, bigtable.Timestamp(ch.Version*1000), buf[start:len(buf):len(buf)])
			case tablekit.ChangeDeleteColumn:
				m.DeleteCellsInColumn(famCells, ch.Column)
			}
		}
		var rev []byte
		rev, buf = b.appendRev(buf)
		m.Set(famMeta, qualRev, 0, rev)
	}
	return m, buf
}

// mutationSize bounds the bytes blindMutation encodes into its buffer for w.
func mutationSize(w *tablekit.WriteRequest) int {
	switch {
	case w.Put != nil:
		return cellsSize(w.Put.Columns)
	case w.Update != nil:
		n := revLen
		for i := range w.Update.Changes {
			if ch := &w.Update.Changes[i]; ch.Kind == tablekit.ChangePut {
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

// writeOne applies one write and returns its result.
func (b *Backend) writeOne(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	meta := w.Meta()
	key, err := rowKey(w.Key())
	if err != nil {
		return nil, err
	}
	tbl := b.table(meta.Name)
	switch choosePath(w) {
	case pathBlind:
		m, _ := b.blindMutation(w, make([]byte, 0, mutationSize(w)))
		if err := tbl.Apply(ctx, key, m); err != nil {
			return nil, wrap(ctx, err, "writing key %v", w.Key())
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
	cols, _ := deletedOnly(w.Update.Changes)
	m, _ := b.blindMutation(w, make([]byte, 0, mutationSize(w)))
	gone := bigtable.NewMutation()
	gone.DeleteRow()
	if err := tbl.Apply(ctx, key, bigtable.NewCondMutation(keptFilter(cols), m, gone)); err != nil {
		return nil, wrap(ctx, err, "writing key %v", w.Key())
	}
	return updateResult(w, nil), nil
}

func updateResult(w *tablekit.WriteRequest, incs []tablekit.Column) *tablekit.UpdateResult {
	if w.Update == nil {
		return nil
	}
	return &tablekit.UpdateResult{Increments: incs}
}

// writeIfExists is the existence path: one CheckAndMutateRow.
func (b *Backend) writeIfExists(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	meta := w.Meta()
	cond := w.Condition()
	m, _ := b.blindMutation(w, make([]byte, 0, mutationSize(w)))
	var cm *bigtable.Mutation
	if cond.Row == tablekit.ExpectExist {
		cm = bigtable.NewCondMutation(existsFilter(meta.Options, w.Now()), m, nil)
	} else {
		cm = bigtable.NewCondMutation(existsFilter(meta.Options, w.Now()), nil, m)
	}
	var matched bool
	if err := tbl.Apply(ctx, key, cm, bigtable.GetCondMutationResult(&matched)); err != nil {
		return nil, wrap(ctx, err, "writing key %v", w.Key())
	}
	if matched != (cond.Row == tablekit.ExpectExist) {
		if cond.Row == tablekit.ExpectExist {
			return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "row existence: expected the row %v to exist", w.Key())
		}
		return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "row existence: expected the row %v not to exist", w.Key())
	}
	return updateResult(w, nil), nil
}

// afterOptimisticRead, when set (by tests), runs after every read of the
// optimistic path, before the write that relies on it: a test uses it to
// land a concurrent write exactly there.
var afterOptimisticRead atomic.Pointer[func()]

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
func (b *Backend) writeOptimistic(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	meta := w.Meta()
	opts := meta.Options
	t := w.Now()
	read := bigtable.RowFilter(visibleFilter(opts, t))
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := tbl.ReadRow(ctx, key, read)
		if err != nil {
			return nil, wrap(ctx, err, "reading key %v", w.Key())
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
			old := &rowmodel.Row{Cells: cur.cells, Marker: cur.marker}
			next, r, err := rowmodel.Apply(old, w)
			if err != nil {
				return nil, err
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
			return nil, wrap(ctx, err, "writing key %v", w.Key())
		}
		if !stamping && matched == want {
			return res, nil
		}
		if attempt >= 2 {
			// Contended row: back off a little, with jitter.
			d := time.Duration(rand.Int64N(int64(min(attempt, 20)) * int64(time.Millisecond)))
			timer := time.NewTimer(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
	}
}

// rewrite is the mutation that turns the stored row into next. A put
// replaces the whole row (DeleteRow, then its cells); a delete, or an
// update that leaves nothing, deletes the row. An update rewrites only the
// columns it touches, with rewriteColumn. Whatever leaves a row sets a
// fresh m:rev.
func (b *Backend) rewrite(w *tablekit.WriteRequest, old, next *rowmodel.Row) *bigtable.Mutation {
	m := bigtable.NewMutation()
	if next == nil {
		m.DeleteRow()
		return m
	}
	if w.Put != nil {
		m.DeleteRow()
		for _, c := range next.Cells {
			setCell(m, c)
		}
		if next.Marker {
			m.Set(famMeta, qualMarker, 0, markerValue)
		}
	} else {
		opts := w.Update.Meta.Options
		done := make(map[string]bool, len(w.Update.Changes))
		for _, ch := range w.Update.Changes {
			if !done[ch.Column] {
				done[ch.Column] = true
				rewriteColumn(m, ch.Column, columnCells(old.Cells, ch.Column), columnCells(next.Cells, ch.Column), ttlStart(opts, w.Update.Now))
			}
		}
	}
	rev, _ := b.appendRev(nil)
	m.Set(famMeta, qualRev, 0, rev)
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
			ts := bigtable.Timestamp(o.Version * 1000)
			m.DeleteTimestampRange(famCells, name, ts, ts+1000)
		}
	}
	h := ttlTS
	if len(vis) > 0 {
		h = vis[len(vis)-1].Version * 1000
	}
	lo := int64(0)
	for i := len(keep) - 1; i >= 0; i-- { // oldest first
		ts := keep[i].Version * 1000
		if ts >= h {
			break
		}
		if ts > lo {
			m.DeleteTimestampRange(famCells, name, bigtable.Timestamp(lo), bigtable.Timestamp(ts))
		}
		lo = ts + 1000
	}
	if h > lo {
		m.DeleteTimestampRange(famCells, name, bigtable.Timestamp(lo), bigtable.Timestamp(h))
	}
}

// PutRow implements tablekit.Backend.
func (b *Backend) PutRow(ctx context.Context, req *tablekit.PutRowRequest) error {
	_, err := b.writeOne(ctx, &tablekit.WriteRequest{Put: req})
	return err
}

// UpdateRow implements tablekit.Backend.
func (b *Backend) UpdateRow(ctx context.Context, req *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	return b.writeOne(ctx, &tablekit.WriteRequest{Update: req})
}

// DeleteRow implements tablekit.Backend.
func (b *Backend) DeleteRow(ctx context.Context, req *tablekit.DeleteRowRequest) error {
	_, err := b.writeOne(ctx, &tablekit.WriteRequest{Delete: req})
	return err
}

// BatchWriteRow implements tablekit.Backend. Blind writes go through
// ApplyBulk, one MutateRows call per table; the others run as single-row
// calls in parallel (at most Config.Concurrency at once). Writes to a row
// that appears more than once are applied in request order: the batch runs
// in waves, each holding at most one write per row.
//
// The per-row work is kept to what the mutations need: the row keys share
// one string, the cell values of a wave one buffer, and a row is told apart
// from the others without building a string for it.
func (b *Backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResult, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	out := make([]tablekit.WriteResult, len(reqs))
	keys := batchRowKeys(reqs, out)
	wave := make([]int, len(reqs))
	type rowID struct{ table, key string }
	seen := make(map[rowID]int, len(reqs))
	waves := 1
	for i, w := range reqs {
		if out[i].Err != nil {
			wave[i] = -1
			continue
		}
		id := rowID{w.Meta().Name, keys[i]}
		n := seen[id]
		seen[id] = n + 1
		wave[i] = n
		waves = max(waves, n+1)
	}
	for wv := range waves {
		if err := b.batchWave(ctx, reqs, keys, wave, wv, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// batchRowKeys returns the row key of every write, all substrings of one
// string; a key over Bigtable's limit gets its error in out instead (and
// the key "").
func batchRowKeys(reqs []*tablekit.WriteRequest, out []tablekit.WriteResult) []string {
	ends := make([]int, len(reqs))
	total := 0
	for i, w := range reqs {
		n, err := rowKeySize(w.Key())
		if err != nil {
			out[i].Err = err
		}
		total += n
		ends[i] = total
	}
	buf := make([]byte, 0, total)
	for i, w := range reqs {
		if out[i].Err == nil {
			buf = keycodec.Append(buf, w.Key())
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

func (b *Backend) batchWave(ctx context.Context, reqs []*tablekit.WriteRequest, keys []string, wave []int, wv int, out []tablekit.WriteResult) error {
	type bulk struct {
		table string
		idx   []int
		keys  []string
		muts  []*bigtable.Mutation
	}
	// First pass: which writes go in bulk, and how many value bytes they
	// encode, so one buffer holds them all.
	nBulk, size := 0, 0
	var single []int
	for i, w := range reqs {
		if wave[i] != wv {
			continue
		}
		if choosePath(w) != pathBlind {
			single = append(single, i)
			continue
		}
		nBulk++
		size += mutationSize(w)
	}
	buf := make([]byte, 0, size)
	var bulks []*bulk
	var byTable map[string]*bulk // only when the wave spans several tables
	var last *bulk
	for i, w := range reqs {
		if wave[i] != wv || choosePath(w) != pathBlind {
			continue
		}
		name := w.Meta().Name
		g := last
		switch {
		case g != nil && g.table == name:
		case len(bulks) == 0:
			g = &bulk{table: name, idx: make([]int, 0, nBulk), keys: make([]string, 0, nBulk), muts: make([]*bigtable.Mutation, 0, nBulk)}
			bulks = append(bulks, g)
		default:
			if byTable == nil {
				byTable = make(map[string]*bulk)
				for _, x := range bulks {
					byTable[x.table] = x
				}
			}
			if g = byTable[name]; g == nil {
				g = &bulk{table: name}
				byTable[name] = g
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
	var wg sync.WaitGroup
	for gi, g := range bulks {
		apply := func() {
			errs, err := b.table(g.table).ApplyBulk(ctx, g.keys, g.muts)
			if err != nil {
				werr := wrap(ctx, err, "writing %d rows", len(g.keys))
				for _, i := range g.idx {
					out[i].Err = werr
				}
				return
			}
			for j, i := range g.idx {
				if errs != nil && errs[j] != nil {
					out[i].Err = wrap(ctx, errs[j], "writing key %v", reqs[i].Key())
					continue
				}
				out[i].Update = updateResult(reqs[i], nil)
			}
		}
		if gi == len(bulks)-1 && len(single) == 0 {
			apply() // the last (often only) call runs on this goroutine
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			apply()
		}()
	}
	sem := make(chan struct{}, b.cfg.Concurrency)
	for _, i := range single {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].Update, out[i].Err = b.writeOne(ctx, reqs[i])
		}()
	}
	wg.Wait()
	return ctx.Err()
}
