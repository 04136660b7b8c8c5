package gcpbigtable

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// A write takes one of three paths (the package doc explains why each is
// atomic and loses no update):
//
//   - blind: no condition, and a change set whose effect does not depend on
//     the row (PutRow, DeleteRow, UpdateRow with only Put and DeleteColumn).
//     One MutateRow.
//   - existence: the same writes under a row-existence condition without a
//     column filter. One CheckAndMutateRow whose predicate is "the row
//     exists" (existsFilter).
//   - optimistic: everything else (column conditions, Increment,
//     DeleteVersion). Read the visible row and its revision, compute the new
//     row with rowmodel, then CheckAndMutateRow on "the revision is still
//     the one read"; retry on a lost race.
//
// Every mutation that changes a row also sets a new m:rev, which is what
// makes the optimistic path's predicate mean "the row is unchanged".

type path int

const (
	pathBlind path = iota
	pathExistence
	pathOptimistic
)

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

// setCells sets every cell, encoding the values into one buffer.
func setCells(m *bigtable.Mutation, cells []tablekit.Column) {
	n := 0
	for _, c := range cells {
		n += c.Value.Size() + 24
	}
	buf := make([]byte, 0, n)
	for _, c := range cells {
		start := len(buf)
		buf = appendValue(buf, c.Value)
		m.Set(famCells, c.Name, bigtable.Timestamp(c.Version*1000), buf[start:len(buf):len(buf)])
	}
}

// hasRepeats reports whether a column name appears twice (several
// versions, which MaxVersions may trim).
func hasRepeats(cells []tablekit.Column) bool {
	if len(cells) <= 16 {
		for i := range cells {
			for j := i + 1; j < len(cells); j++ {
				if cells[i].Name == cells[j].Name {
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

// blindMutation is the mutation of a blind or existence-path write (nil
// for a delete, which is DeleteRow).
func (b *Backend) blindMutation(w *tablekit.WriteRequest) *bigtable.Mutation {
	m := bigtable.NewMutation()
	switch {
	case w.Delete != nil:
		m.DeleteRow()
		return m
	case w.Put != nil:
		req := w.Put
		m.DeleteRow()
		cells := req.Columns
		if len(cells) == 0 {
			m.Set(famMeta, qualMarker, 0, []byte("1"))
		} else if hasRepeats(cells) {
			// rowmodel.Put drops versions that MaxVersions hides already,
			// so they are never stored.
			cells = rowmodel.Put(cells, req.Meta.Options, req.Now).Cells
		}
		setCells(m, cells)
	case w.Update != nil:
		for _, ch := range w.Update.Changes {
			switch ch.Kind {
			case tablekit.ChangePut:
				setCell(m, tablekit.Column{Name: ch.Column, Value: ch.Value, Version: ch.Version})
			case tablekit.ChangeDeleteColumn:
				m.DeleteCellsInColumn(famCells, ch.Column)
			}
		}
	}
	m.Set(famMeta, qualRev, 0, b.newRev())
	return m
}

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
		if err := tbl.Apply(ctx, key, b.blindMutation(w)); err != nil {
			return nil, wrap(ctx, err, "writing key %v", w.Key())
		}
		return updateResult(w, nil), nil
	case pathExistence:
		return b.writeIfExists(ctx, tbl, key, w)
	}
	return b.writeOptimistic(ctx, tbl, key, w)
}

func updateResult(w *tablekit.WriteRequest, incs []tablekit.Column) *tablekit.UpdateResult {
	if w.Update == nil {
		return nil
	}
	return &tablekit.UpdateResult{Increments: incs}
}

func condition(w *tablekit.WriteRequest) tablekit.Condition {
	switch {
	case w.Put != nil:
		return w.Put.Condition
	case w.Update != nil:
		return w.Update.Condition
	case w.Delete != nil:
		return w.Delete.Condition
	}
	return tablekit.Condition{}
}

func now(w *tablekit.WriteRequest) int64 {
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

// writeIfExists is the existence path: one CheckAndMutateRow.
func (b *Backend) writeIfExists(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	meta := w.Meta()
	cond := condition(w)
	m := b.blindMutation(w)
	var cm *bigtable.Mutation
	if cond.Row == tablekit.ExpectExist {
		cm = bigtable.NewCondMutation(existsFilter(meta.Options, now(w)), m, nil)
	} else {
		cm = bigtable.NewCondMutation(existsFilter(meta.Options, now(w)), nil, m)
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

// writeOptimistic is the optimistic path: read, compute with rowmodel,
// CheckAndMutateRow on the revision, retry when another write got there first.
func (b *Backend) writeOptimistic(ctx context.Context, tbl *bigtable.Table, key string, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	meta := w.Meta()
	opts := meta.Options
	t := now(w)
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
			if cur, err = decodeRow(r); err != nil {
				return nil, err
			}
		}
		old := &rowmodel.Row{Cells: cur.cells, Marker: cur.marker}
		next, res, err := rowmodel.Apply(old, w)
		if err != nil {
			return nil, err
		}
		m := b.rewrite(w, old, next)
		var cm *bigtable.Mutation
		var want bool
		if cur.rev != nil {
			pred := bigtable.ChainFilters(bigtable.FamilyFilter(famMeta), bigtable.ColumnFilter(qualRev),
				bigtable.ValueRangeFilter(cur.rev, append(append([]byte(nil), cur.rev...), 0)))
			cm, want = bigtable.NewCondMutation(pred, m, nil), true
		} else {
			pred := bigtable.ChainFilters(bigtable.FamilyFilter(famMeta), bigtable.ColumnFilter(qualRev))
			cm, want = bigtable.NewCondMutation(pred, nil, m), false
		}
		var matched bool
		if err := tbl.Apply(ctx, key, cm, bigtable.GetCondMutationResult(&matched)); err != nil {
			return nil, wrap(ctx, err, "writing key %v", w.Key())
		}
		if matched == want {
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
// columns it touches, with rewriteColumn.
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
			m.Set(famMeta, qualMarker, 0, []byte("1"))
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
	m.Set(famMeta, qualRev, 0, b.newRev())
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
func (b *Backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResult, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	out := make([]tablekit.WriteResult, len(reqs))
	keys := make([]string, len(reqs))
	wave := make([]int, len(reqs))
	seen := make(map[string]int, len(reqs))
	waves := 1
	for i, w := range reqs {
		k, err := rowKey(w.Key())
		if err != nil {
			out[i].Err = err
			wave[i] = -1
			continue
		}
		keys[i] = k
		id := w.Meta().Name + "\x00" + k
		wave[i] = seen[id]
		seen[id]++
		waves = max(waves, wave[i]+1)
	}
	for wv := range waves {
		if err := b.batchWave(ctx, reqs, keys, wave, wv, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *Backend) batchWave(ctx context.Context, reqs []*tablekit.WriteRequest, keys []string, wave []int, wv int, out []tablekit.WriteResult) error {
	type bulk struct {
		table string
		idx   []int
		keys  []string
		muts  []*bigtable.Mutation
	}
	var bulks []*bulk
	byTable := map[string]*bulk{}
	var single []int
	for i, w := range reqs {
		if wave[i] != wv {
			continue
		}
		if choosePath(w) != pathBlind {
			single = append(single, i)
			continue
		}
		name := w.Meta().Name
		g := byTable[name]
		if g == nil {
			g = &bulk{table: name}
			byTable[name] = g
			bulks = append(bulks, g)
		}
		g.idx = append(g.idx, i)
		g.keys = append(g.keys, keys[i])
		g.muts = append(g.muts, b.blindMutation(w))
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
