// Package oracle is the reference the differential test compares every
// backend with (package conformance): a tablekit.Backend written to be
// obviously correct rather than fast. Each table is a slice of rows sorted
// by key (tablekit.CompareKeys), every call holds one mutex for its whole
// length, and every SPEC rule about a row (what a read returns, whether a
// condition holds, what a write leaves, the change record of a write) is
// package rowmodel's, the same functions every engine and adapter uses.
// What is left here is the little rowmodel does not decide: the order of
// rows and the bounds of a range, table metadata and its staleness,
// auto-increment counters (SPEC §14), atomic writes (SPEC §13) and the
// change-feed log (SPEC §15).
//
// It has no optional method but those whose presence is a SPEC feature
// (AtomicWriter, ChangeFeeder) and declares auto-increment keys: batches
// and scans go through the Client's fallbacks, so no second path needs to
// agree with the first. It is deliberately plain: O(n) inserts, no
// caching, no lock striping. Package localengine is the fast engine; it is
// checked against this one.
package oracle

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/internal/enginekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// Store is an in-memory reference backend. Its zero value is not usable:
// call [New].
type Store struct {
	mu     sync.Mutex
	tables map[string]*table // nil once closed
}

// table is one table: its metadata, its rows in key order, its
// auto-increment counters and its change feed.
type table struct {
	meta tablekit.TableMeta
	rows []*record                // sorted by key, keys distinct
	ai   map[tablekit.Value]int64 // partition key -> greatest auto-increment value seen or assigned
	feed *feed                    // nil until the feed is first enabled
}

// record is a stored row and its key.
type record struct {
	key tablekit.PrimaryKey
	row rowmodel.Row
}

var (
	_ tablekit.Backend            = (*Store)(nil)
	_ tablekit.AtomicWriter       = (*Store)(nil)
	_ tablekit.ChangeFeeder       = (*Store)(nil)
	_ tablekit.CapabilityDeclarer = (*Store)(nil)
)

// New returns an empty store.
func New() *Store { return &Store{tables: map[string]*table{}} }

// Capabilities implements tablekit.CapabilityDeclarer: atomic writes and
// change feeds are shown by their methods; auto-increment key columns have
// none, so the store declares them. No batch calls and no lending scan (the
// Client's fallbacks run).
func (s *Store) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

// SystemName names the store for telemetry.
func (s *Store) SystemName() string { return "tablekit.oracle" }

// Close drops every table; later calls fail with ErrUnavailable.
func (s *Store) Close() error {
	s.mu.Lock()
	s.tables = nil
	s.mu.Unlock()
	return nil
}

// lock takes the store's mutex after checking ctx and that the store is
// open; the caller unlocks when err is nil.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.tables == nil {
		s.mu.Unlock()
		return tablekit.Errorf(tablekit.ErrUnavailable, "the reference store is closed")
	}
	return nil
}

// table returns the table m names if it is the incarnation m was read
// from (the caller holds s.mu).
func (s *Store) table(m *tablekit.TableMeta) (*table, error) {
	t, ok := s.tables[m.Name]
	switch {
	case !ok:
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", m.Name)
	case t.meta.Incarnation != m.Incarnation:
		return nil, driver.Stale("table %q was deleted and created again since the request's metadata was read", m.Name)
	}
	return t, nil
}

// in runs fn on the table m names, under the store's mutex, once ctx, the
// store and m's incarnation are checked.
func in[T any](ctx context.Context, s *Store, m *tablekit.TableMeta, fn func(t *table) (T, error)) (T, error) {
	var zero T
	if err := s.lock(ctx); err != nil {
		return zero, err
	}
	defer s.mu.Unlock()
	t, err := s.table(m)
	if err != nil {
		return zero, err
	}
	return fn(t)
}

// describe returns a copy of t's metadata.
func (t *table) describe() *tablekit.TableMeta {
	m := t.meta
	m.Key = slices.Clone(m.Key)
	return &m
}

// CreateTable implements tablekit.Backend.
func (s *Store) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.tables[meta.Name]; ok {
		return tablekit.Errorf(tablekit.ErrAlreadyExists, "table %q already exists", meta.Name)
	}
	m := *meta
	m.Key = slices.Clone(meta.Key)
	s.tables[meta.Name] = &table{meta: m, ai: map[tablekit.Value]int64{}}
	return nil
}

// DescribeTable implements tablekit.Backend.
func (s *Store) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	t, ok := s.tables[name]
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	return t.describe(), nil
}

// ListTables implements tablekit.Backend.
func (s *Store) ListTables(ctx context.Context) ([]string, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// UpdateTable implements tablekit.Backend.
func (s *Store) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	t, ok := s.tables[req.Meta.Name]
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", req.Meta.Name)
	}
	if err := driver.CheckUpdateTable(&t.meta, req); err != nil {
		return nil, err
	}
	t.meta.Options = req.Options
	t.meta.Generation++
	return t.describe(), nil
}

// DeleteTable implements tablekit.Backend.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.tables[name]; !ok {
		return tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	delete(s.tables, name)
	return nil
}

// find returns the index of key in t.rows, or where it would be inserted,
// and whether it is there.
func (t *table) find(key tablekit.PrimaryKey) (int, bool) {
	return slices.BinarySearchFunc(t.rows, key, func(r *record, k tablekit.PrimaryKey) int { return tablekit.CompareKeys(r.key, k) })
}

// get returns the stored row of key, nil when there is none.
func (t *table) get(key tablekit.PrimaryKey) *rowmodel.Row {
	if i, ok := t.find(key); ok {
		return &t.rows[i].row
	}
	return nil
}

// put stores row under key, or deletes the row of key when row is nil.
func (t *table) put(key tablekit.PrimaryKey, row *rowmodel.Row) {
	i, ok := t.find(key)
	switch {
	case row == nil && ok:
		t.rows = slices.Delete(t.rows, i, i+1)
	case row == nil:
	case ok:
		t.rows[i].row = *row
	default:
		t.rows = slices.Insert(t.rows, i, &record{key: key.Clone(), row: *row})
	}
}

// read returns what a read of spec returns of the stored row rec, under
// the table's current options: the row (its own copy), or false.
func (t *table) read(rec *record, spec *tablekit.ReadSpec, now int64) (tablekit.Row, bool) {
	cols, ok := rowmodel.Read(&rec.row, t.meta.Options, spec, now)
	if !ok {
		return tablekit.Row{}, false
	}
	return tablekit.Row{Key: rec.key.Clone(), Columns: cols}, true
}

// GetRow implements tablekit.Backend.
func (s *Store) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	return in(ctx, s, req.Meta, func(t *table) (*tablekit.Row, error) {
		i, ok := t.find(req.Key)
		if !ok {
			return nil, nil
		}
		row, ok := t.read(t.rows[i], &req.Read, req.Now)
		if !ok {
			return nil, nil
		}
		return &row, nil
	})
}

// inRange reports whether key is in req's range: [Start, End) forward,
// (End, Start] backward.
func inRange(req *tablekit.GetRangeRequest, key tablekit.PrimaryKey) bool {
	lo, hi := tablekit.CompareKeys(key, req.Start), tablekit.CompareKeys(key, req.End)
	if req.Backward {
		return lo <= 0 && hi > 0
	}
	return lo >= 0 && hi < 0
}

// GetRange implements tablekit.Backend. It walks the rows in range in the
// range's direction, from the first (a binary search), keeps those the read
// returns, and stops after req.Limit rows kept or tablekit.MaxScanRows rows
// examined; Next is then the next row in range, if any.
func (s *Store) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	return in(ctx, s, req.Meta, func(t *table) (*tablekit.GetRangeResponse, error) {
		// Forward, the first row >= Start; backward, the last row <= Start.
		i, _ := slices.BinarySearchFunc(t.rows, req.Start, func(r *record, k tablekit.PrimaryKey) int { return tablekit.CompareKeys(r.key, k) })
		step := 1
		if req.Backward {
			i, _ = slices.BinarySearchFunc(t.rows, req.Start, func(r *record, k tablekit.PrimaryKey) int {
				if tablekit.CompareKeys(r.key, k) > 0 {
					return 1
				}
				return -1
			})
			i, step = i-1, -1
		}
		limit := max(req.Limit, 1)
		page := &tablekit.GetRangeResponse{}
		for scanned := 0; i >= 0 && i < len(t.rows) && inRange(req, t.rows[i].key); i += step {
			if len(page.Rows) == limit || scanned == tablekit.MaxScanRows {
				page.Next = t.rows[i].key.Clone()
				break
			}
			scanned++
			if row, ok := t.read(t.rows[i], &req.Read, req.Now); ok {
				page.Rows = append(page.Rows, row)
			}
		}
		return page, nil
	})
}

// Write implements tablekit.Backend.
func (s *Store) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	return in(ctx, s, w.Meta, func(t *table) (*tablekit.UpdateResult, error) {
		w, assigned, err := t.assign(w)
		if err != nil {
			return nil, err
		}
		next, res, err := t.apply(w)
		if err != nil {
			return nil, err
		}
		t.commit(w, next, res)
		return withKey(res, w.Key, assigned), nil
	})
}

// apply returns what w leaves of its row under the table's current
// metadata (the request's may be an older copy of the same incarnation:
// the store's options are the ones that hold), and its result. Nothing is
// stored.
func (t *table) apply(w *tablekit.WriteRequest) (*rowmodel.Row, *tablekit.UpdateResult, error) {
	c := *w
	c.Meta = t.describe()
	return rowmodel.Apply(t.get(w.Key), &c)
}

// commit stores the row w left (nil: none), raises the auto-increment
// counter to its key, and records w in the change feed.
func (t *table) commit(w *tablekit.WriteRequest, next *rowmodel.Row, res *tablekit.UpdateResult) {
	t.put(w.Key, next)
	if next != nil {
		t.saw(w.Key)
	}
	t.record(w, res)
}

// AtomicWrite implements tablekit.AtomicWriter: every write is applied to
// its stored row (the rows are distinct: the Client refuses one row
// twice); when one fails nothing is stored, and the error names it.
func (s *Store) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	name := reqs[0].Meta.Name
	t, ok := s.tables[name]
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrTableNotFound, "table %q does not exist", name)
	}
	for i, w := range reqs {
		if w.Meta.Name != name {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: tablekit.Errorf(tablekit.ErrInvalidArgument,
				"table %q: an atomic write is within one table, %q", w.Meta.Name, name)}
		}
		if _, err := s.table(w.Meta); err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
	}
	var err error
	// The real keys raise the counters first, so that no placeholder is
	// assigned one of them.
	for _, w := range reqs {
		if w.Kind != tablekit.WriteDelete && w.Key.AutoIncrementIndex() < 0 {
			t.saw(w.Key)
		}
	}
	writes := make([]*tablekit.WriteRequest, len(reqs))
	assigned := make([]bool, len(reqs))
	for i, w := range reqs {
		if writes[i], assigned[i], err = t.assign(w); err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
	}
	rows := make([]*rowmodel.Row, len(reqs))
	out := make([]tablekit.WriteResponse, len(reqs))
	for i, w := range writes {
		if rows[i], out[i].Update, err = t.apply(w); err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
	}
	for i, w := range writes {
		t.commit(w, rows[i], out[i].Update)
		out[i].Update = withKey(out[i].Update, w.Key, assigned[i])
	}
	return out, nil
}

// assign returns w with its key's AutoIncrement replaced by the next value
// of its partition key (SPEC §14), and true; or w itself, and false, when
// w is a delete or its key holds no AutoIncrement.
func (t *table) assign(w *tablekit.WriteRequest) (*tablekit.WriteRequest, bool, error) {
	col := w.Key.AutoIncrementIndex()
	if w.Kind == tablekit.WriteDelete || col < 0 {
		return w, false, nil
	}
	if col >= len(t.meta.Key) || !t.meta.Key[col].AutoIncrement {
		return nil, false, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: key %v holds AutoIncrement, but that is not the table's auto-increment column", w.Meta.Name, w.Key)
	}
	p := w.Key[0].Value
	for {
		v := t.ai[p] + 1
		if v <= 0 {
			return nil, false, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: partition key %v has used every auto-increment value", w.Meta.Name, w.Key[:1])
		}
		t.ai[p] = v
		c := *w
		c.Key = w.Key.WithAutoIncrement(v)
		if t.get(c.Key) == nil { // an assigned key is a new row
			return &c, true, nil
		}
	}
}

// saw raises the auto-increment counter of key's partition key to key's
// value in the table's auto-increment column (if it has one).
func (t *table) saw(key tablekit.PrimaryKey) {
	for i, kc := range t.meta.Key {
		if !kc.AutoIncrement || i >= len(key) {
			continue
		}
		if v, ok := key[i].Value.Int(); ok && v > t.ai[key[0].Value] {
			t.ai[key[0].Value] = v
		}
	}
}

// withKey returns res carrying the key a write with AutoIncrement wrote.
func withKey(res *tablekit.UpdateResult, key tablekit.PrimaryKey, assigned bool) *tablekit.UpdateResult {
	if !assigned {
		return res
	}
	if res == nil {
		res = &tablekit.UpdateResult{}
	}
	res.Key = key.Clone()
	return res
}

// The change feed (SPEC §15): one shard per period the feed was enabled,
// each a list of records numbered from 1; a record leaves when its commit
// time is older than the retention at the Now of a later write or read.

// feed is a table's change feed.
type feed struct {
	enabled   bool
	retention time.Duration
	shards    []*shard
	next      int // number of the next shard
}

// shard is one shard's records; first is the number of recs[0].
type shard struct {
	id      string
	parents []string
	ended   bool
	endedAt int64
	first   uint64
	recs    []tablekit.ChangeRecord
}

// record appends w's change record to the open shard, when the feed is on.
func (t *table) record(w *tablekit.WriteRequest, res *tablekit.UpdateResult) {
	if t.feed == nil || !t.feed.enabled {
		return
	}
	s := t.feed.shards[len(t.feed.shards)-1]
	s.recs = append(s.recs, rowmodel.ChangeOf(w, res))
	t.feed.trim(w.Now)
}

// trim drops the records older than the retention at now, and the shards
// that ended before then and hold no record.
func (f *feed) trim(now int64) {
	horizon := now - f.retention.Milliseconds()
	for _, s := range f.shards {
		for len(s.recs) > 0 && s.recs[0].CommitTime.UnixMilli() < horizon {
			s.recs = s.recs[1:]
			s.first++
		}
	}
	f.shards = slices.DeleteFunc(f.shards, func(s *shard) bool { return s.ended && len(s.recs) == 0 && s.endedAt < horizon })
}

// status describes the feed.
func (f *feed) status() *tablekit.ChangeFeedStatus {
	st := &tablekit.ChangeFeedStatus{Enabled: f.enabled, Retention: f.retention}
	for _, s := range f.shards {
		st.Shards = append(st.Shards, tablekit.Shard{ID: s.id, Parents: slices.Clone(s.parents), Ended: s.ended})
	}
	return st
}

// SetChangeFeed implements tablekit.ChangeFeeder.
func (s *Store) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	return in(ctx, s, req.Meta, func(t *table) (*tablekit.ChangeFeedStatus, error) {
		if t.feed == nil {
			t.feed = &feed{}
		}
		f := t.feed
		switch {
		case req.Enabled && !f.enabled:
			var parents []string
			if n := len(f.shards); n > 0 {
				parents = []string{f.shards[n-1].id}
			}
			f.shards = append(f.shards, &shard{id: t.meta.Incarnation + "-" + strconv.Itoa(f.next), parents: parents, first: 1})
			f.next++
			f.enabled, f.retention = true, req.Retention
		case req.Enabled:
			f.retention = req.Retention
		case f.enabled:
			last := f.shards[len(f.shards)-1]
			last.ended, last.endedAt = true, req.Now
			f.enabled = false
		}
		f.trim(req.Now)
		return f.status(), nil
	})
}

// DescribeChangeFeed implements tablekit.ChangeFeeder.
func (s *Store) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	return in(ctx, s, meta, func(t *table) (*tablekit.ChangeFeedStatus, error) {
		if t.feed == nil {
			return &tablekit.ChangeFeedStatus{}, nil
		}
		return t.feed.status(), nil
	})
}

// ReadShard implements tablekit.ChangeFeeder.
func (s *Store) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	after, err := enginekit.ParseSeqCheckpoint(req)
	if err != nil {
		return nil, err
	}
	return in(ctx, s, req.Meta, func(t *table) (*tablekit.ReadShardResponse, error) {
		var sh *shard
		if t.feed != nil {
			t.feed.trim(req.Now)
			for _, x := range t.feed.shards {
				if x.id == req.Shard {
					sh = x
				}
			}
		}
		if sh == nil {
			return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: no shard %q in the change feed", req.Meta.Name, req.Shard)
		}
		if req.From == "" {
			after = sh.first - 1
		}
		end := sh.first + uint64(len(sh.recs)) // the number the next record will have
		switch {
		case after+1 < sh.first:
			return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: shard %q: records %d to %d were trimmed", req.Meta.Name, req.Shard, after+1, sh.first-1)
		case after >= end:
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: shard %q has no record %d", req.Meta.Name, req.Shard, after)
		}
		out := &tablekit.ReadShardResponse{Next: enginekit.SeqCheckpoint(sh.id, after)}
		for seq := after + 1; seq < end && len(out.Records) < max(req.Limit, 1); seq++ {
			r := sh.recs[seq-sh.first]
			r.Key, r.Changes = r.Key.Clone(), slices.Clone(r.Changes)
			r.Shard, r.Checkpoint = sh.id, enginekit.SeqCheckpoint(sh.id, seq)
			out.Records = append(out.Records, r)
			out.Next = r.Checkpoint
		}
		out.Ended = sh.ended && len(out.Records) == int(end-(after+1))
		return out, nil
	})
}
