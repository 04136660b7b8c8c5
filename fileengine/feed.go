package fileengine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/enginekit"
	"github.com/tablekit/tablekit/internal/feedwake"
	"github.com/tablekit/tablekit/internal/wire"
	"github.com/tablekit/tablekit/rowmodel"
)

// The change feed (SPEC §15). A table's feed state is one record, and each
// change record is written in the same pebble batch as the row it
// describes, so after a crash the feed and the table agree:
//
//	's' len(id) id                           the feed state (JSON, feedRecord)
//	'c' len(id) id shard(4 BE) seq(8 BE)     a change record (appendChange)
//
// Sequence numbers are per shard, from 1, reserved under the row's stripe
// (so one row's records are numbered in commit order) and committed
// concurrently: a reader reads only below the lowest number still being
// committed, so that it never skips a record that commits after it read
// past its number. A write that fails leaves a gap, which readers skip.
// Records older than the retention (at the Now of the request) are
// deleted lazily, by ReadShard and SetChangeFeed, with one range deletion.
// The feed uses disk, not memory, and has no cap beyond the retention.

const (
	feedStatePrefix  = 's'
	feedRecordPrefix = 'c'
	feedFormat       = 1
	changeFormat     = 1
)

// feedRecord is the stored feed state.
type feedRecord struct {
	V         int          `json:"v"`
	Enabled   bool         `json:"enabled"`
	Retention int64        `json:"retention_s"`
	Next      uint32       `json:"next"` // number of the next shard
	Shards    []shardState `json:"shards"`
}

type shardState struct {
	N         uint32   `json:"n"`
	Parents   []uint32 `json:"parents,omitempty"`
	Ended     bool     `json:"ended,omitempty"`
	EndedAt   int64    `json:"ended_at,omitempty"`
	TrimmedTo uint64   `json:"trimmed_to,omitempty"` // records up to this one were deleted
}

// fileFeed is a table's feed in memory. Its state changes under the
// table's mu held alone; seq and inflight under mu.
type fileFeed struct {
	st feedRecord

	mu       sync.Mutex
	seq      uint64           // the next sequence number of the open shard
	inflight map[uint64]int   // numbers reserved by writes not yet committed
	lastTrim int64            // the Now of the last trim (under the table's mu alone)
	wake     *feedwake.Signal // the table's: notified as records commit (FeedChanged)
}

func feedStateKey(rows string) []byte {
	return append([]byte{feedStatePrefix, byte(len(rows))}, rows...)
}

func feedShardPrefix(rows string, shard uint32) []byte {
	p := append([]byte{feedRecordPrefix, byte(len(rows))}, rows...)
	return binary.BigEndian.AppendUint32(p, shard)
}

func feedKey(rows string, shard uint32, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(feedShardPrefix(rows, shard), seq)
}

// feedPrefix is the prefix of all of a table's change records.
func feedPrefix(rows string) []byte {
	return append([]byte{feedRecordPrefix, byte(len(rows))}, rows...)
}

func (t *table) shardID(n uint32) string { return t.rows + "-" + strconv.FormatUint(uint64(n), 10) }

// loadFeed reads table t's feed state at Open.
func (e *Engine) loadFeed(t *table) error {
	v, closer, err := e.db.Get(feedStateKey(t.rows))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var st feedRecord
	err = json.Unmarshal(v, &st)
	_ = closer.Close()
	if err != nil || st.V != feedFormat {
		return fmt.Errorf("%w: change feed state of table %q", ErrCorrupt, t.meta.Name)
	}
	f := t.newFeed()
	f.st = st
	if n := len(st.Shards); n > 0 && !st.Shards[n-1].Ended {
		// The next number follows the last record stored.
		last := st.Shards[n-1].N
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: feedShardPrefix(t.rows, last), UpperBound: feedShardPrefix(t.rows, last+1)})
		if err != nil {
			return err
		}
		if it.Last() {
			k := it.Key()
			f.seq = binary.BigEndian.Uint64(k[len(k)-8:]) + 1
		}
		if err := it.Close(); err != nil {
			return err
		}
		f.seq = max(f.seq, st.Shards[n-1].TrimmedTo+1)
	}
	t.feed = f
	return nil
}

// record adds the change record of w, just applied, to b, and reserves its
// sequence number in ticket (the caller holds t.mu shared and the row's
// stripe, and calls ticket.done after committing b).
func (t *table) record(b *pebble.Batch, w *tablekit.WriteRequest, res *tablekit.UpdateResult, tk *feedTickets) {
	f := t.feed
	if f == nil || !f.st.Enabled {
		return
	}
	shard := f.st.Shards[len(f.st.Shards)-1].N
	f.mu.Lock()
	seq := f.seq
	f.seq++
	f.inflight[seq]++
	f.mu.Unlock()
	tk.add(f, seq)
	rec := rowmodel.ChangeOf(w, res)
	_ = b.Set(feedKey(t.rows, shard, seq), appendChange(nil, &rec), nil)
}

// feedTickets are the sequence numbers one commit reserved.
type feedTickets struct {
	f    []*fileFeed
	seqs []uint64
}

func (tk *feedTickets) add(f *fileFeed, seq uint64) {
	tk.f = append(tk.f, f)
	tk.seqs = append(tk.seqs, seq)
}

// done releases the numbers, committed or not, and wakes the feeds'
// followers (FeedChanged): a committed record is now below safe.
func (tk *feedTickets) done() {
	for i, f := range tk.f {
		f.mu.Lock()
		if f.inflight[tk.seqs[i]]--; f.inflight[tk.seqs[i]] <= 0 {
			delete(f.inflight, tk.seqs[i])
		}
		f.mu.Unlock()
		f.wake.Notify()
	}
}

// FeedChanged implements tablekit.FeedWaiter: the channel closes when a
// write that recorded a change to the table's feed has committed (or
// failed), or when the feed is enabled or disabled.
func (e *Engine) FeedChanged(ctx context.Context, table string) (<-chan struct{}, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := e.table(table)
	if err != nil {
		return nil, err
	}
	return t.wake.Wait(), nil
}

// safe returns the number below which every record of the open shard is
// committed (or failed for good).
func (f *fileFeed) safe() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.seq
	for q := range f.inflight {
		s = min(s, q)
	}
	return s
}

// appendChange encodes a change record: format byte, kind byte, varint
// commit time (ms), the key (codec.EncodeKey, length-prefixed), uvarint
// change count, per change: kind byte, uvarint len(name), name, varint
// version, and for a put its value (codec.AppendValue).
func appendChange(dst []byte, r *tablekit.ChangeRecord) []byte {
	dst = append(dst, changeFormat, byte(r.Kind))
	dst = binary.AppendVarint(dst, r.CommitTime.UnixMilli())
	k := codec.EncodeKey(r.Key)
	dst = wire.AppendString(dst, view(k))
	dst = binary.AppendUvarint(dst, uint64(len(r.Changes)))
	for _, c := range r.Changes {
		dst = append(dst, byte(c.Kind))
		dst = wire.AppendString(dst, c.Column)
		dst = binary.AppendVarint(dst, c.Version)
		if c.Kind == tablekit.ChangePut {
			dst = codec.AppendValue(dst, c.Value)
		}
	}
	return dst
}

// decodeChange decodes a record of a table with key schema schema; it
// copies what it keeps of b.
func decodeChange(schema tablekit.KeySchema, b []byte) (tablekit.ChangeRecord, error) {
	d := decoder{s: string(b)}
	var r tablekit.ChangeRecord
	if len(d.s) < 2 || d.s[0] != changeFormat {
		return r, fmt.Errorf("%w: change record of unknown format", ErrCorrupt)
	}
	r.Kind = tablekit.WriteKind(d.s[1])
	d.s = d.s[2:]
	r.CommitTime = time.UnixMilli(d.varint()).UTC()
	k := d.str()
	n := d.uvarint()
	if d.err != nil {
		return r, fmt.Errorf("%w: change record: %v", ErrCorrupt, d.err)
	}
	key, err := codec.DecodeKey(schema, []byte(k))
	if err != nil {
		return r, err
	}
	r.Key = key
	for range n {
		if len(d.s) == 0 {
			d.fail()
			break
		}
		c := tablekit.Change{Kind: tablekit.ChangeKind(d.s[0])}
		d.s = d.s[1:]
		c.Column = d.str()
		c.Version = d.varint()
		if c.Kind == tablekit.ChangePut && d.err == nil {
			v, m, err := codec.DecodeValue(d.s)
			if err != nil {
				return r, err
			}
			c.Value, d.s = v, d.s[m:]
		}
		r.Changes = append(r.Changes, c)
	}
	if d.err != nil || len(d.s) != 0 {
		return r, fmt.Errorf("%w: change record", ErrCorrupt)
	}
	return r, nil
}

func (t *table) feedStatus() *tablekit.ChangeFeedStatus {
	if t.feed == nil {
		return &tablekit.ChangeFeedStatus{}
	}
	st := &tablekit.ChangeFeedStatus{Enabled: t.feed.st.Enabled, Retention: time.Duration(t.feed.st.Retention) * time.Second}
	for _, s := range t.feed.st.Shards {
		sh := tablekit.Shard{ID: t.shardID(s.N), Ended: s.Ended}
		for _, p := range s.Parents {
			sh.Parents = append(sh.Parents, t.shardID(p))
		}
		st.Shards = append(st.Shards, sh)
	}
	return st
}

// trim deletes, in b, the records older than the retention at now, and
// drops ended shards left empty; the caller holds t.mu alone and commits
// b (then the state, which it also writes).
func (e *Engine) trim(b *pebble.Batch, t *table, now int64) error {
	f := t.feed
	horizon := now - f.st.Retention*1000
	keep := f.st.Shards[:0]
	for i, s := range f.st.Shards {
		lo := feedShardPrefix(t.rows, s.N)
		hi := feedShardPrefix(t.rows, s.N+1)
		it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return err
		}
		var cut []byte
		empty := true
		for ok := it.First(); ok; ok = it.Next() {
			v := it.Value()
			// The commit time follows the format and kind bytes.
			ct, n := binary.Varint(v[min(2, len(v)):])
			if n <= 0 || ct >= horizon {
				empty = false
				break
			}
			k := it.Key()
			s.TrimmedTo = binary.BigEndian.Uint64(k[len(k)-8:])
			cut = append(cut[:0], k...)
		}
		if err := it.Close(); err != nil {
			return err
		}
		if cut != nil {
			_ = b.DeleteRange(lo, append(cut, 0), nil)
		}
		f.st.Shards[i] = s
		if s.Ended && empty && s.EndedAt < horizon {
			continue
		}
		keep = append(keep, s)
	}
	f.st.Shards = keep
	return nil
}

// saveFeed adds the feed state to b.
func (t *table) saveFeed(b *pebble.Batch) {
	v, _ := json.Marshal(t.feed.st)
	_ = b.Set(feedStateKey(t.rows), v, nil)
}

// lockTable begins a call on meta's table and holds its mu alone.
func (e *Engine) lockTable(ctx context.Context, m *tablekit.TableMeta) (*table, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	t, err := e.table(m.Name)
	if err == nil {
		t.mu.Lock()
		if err = t.current(m); err != nil {
			t.mu.Unlock()
		}
	}
	if err != nil {
		e.end()
		return nil, err
	}
	return t, nil
}

// SetChangeFeed implements tablekit.ChangeFeeder. It holds the table's
// lock alone, so no write is in flight when a shard opens or ends.
func (e *Engine) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	t, err := e.lockTable(ctx, req.Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	defer t.mu.Unlock()
	old := t.feed
	f := t.newFeed()
	if old != nil {
		f.st = old.st
		f.st.Shards = slices.Clone(old.st.Shards)
		f.seq = old.seq
	}
	switch {
	case req.Enabled && !f.st.Enabled:
		f.enable(req.Retention)
	case req.Enabled:
		f.st.Retention = int64(req.Retention / time.Second)
	case f.st.Enabled:
		s := &f.st.Shards[len(f.st.Shards)-1]
		s.Ended, s.EndedAt = true, req.Now
		f.st.Enabled = false
	}
	t.feed = f
	b := e.db.NewBatch()
	defer b.Close()
	if err := e.trim(b, t, req.Now); err != nil {
		t.feed = old
		return nil, storeError(err, "table %q: change feed", req.Meta.Name)
	}
	t.saveFeed(b)
	if err := e.commit(b); err != nil {
		t.feed = old
		return nil, storeError(err, "table %q: change feed", req.Meta.Name)
	}
	t.wake.Notify() // a shard opened or ended
	return t.feedStatus(), nil
}

// newFeed returns a disabled feed of t, no shard yet, waking t's
// followers.
func (t *table) newFeed() *fileFeed {
	return &fileFeed{st: feedRecord{V: feedFormat}, seq: 1, inflight: map[uint64]int{}, wake: &t.wake}
}

// enable opens a new shard, the child of the last one, and records from
// now on, for retention.
func (f *fileFeed) enable(retention time.Duration) {
	var parents []uint32
	if n := len(f.st.Shards); n > 0 {
		parents = []uint32{f.st.Shards[n-1].N}
	}
	f.st.Shards = append(f.st.Shards, shardState{N: f.st.Next, Parents: parents})
	f.st.Next++
	f.st.Enabled, f.st.Retention, f.seq = true, int64(retention/time.Second), 1
}

// CreateTableWithFeed implements tablekit.FeedCreator: the table's
// metadata and its feed's state are in one pebble batch, so no write comes
// before the feed, also across a crash.
func (e *Engine) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	return e.createTable(ctx, meta, feed)
}

// DescribeChangeFeed implements tablekit.ChangeFeeder.
func (e *Engine) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	t, err := e.using(ctx, meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	defer t.mu.RUnlock()
	return t.feedStatus(), nil
}

// ReadShard implements tablekit.ChangeFeeder. It trims the feed first
// (under the table's lock alone, briefly), then reads under the shared
// lock.
func (e *Engine) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	name := req.Meta.Name
	after, err := enginekit.ParseSeqCheckpoint(req)
	if err != nil {
		return nil, err
	}
	if err := e.trimFeed(ctx, req); err != nil {
		return nil, err
	}
	t, err := e.using(ctx, req.Meta)
	if err != nil {
		return nil, err
	}
	defer e.end()
	defer t.mu.RUnlock()
	f := t.feed
	var s *shardState
	if f != nil {
		for i := range f.st.Shards {
			if t.shardID(f.st.Shards[i].N) == req.Shard {
				s = &f.st.Shards[i]
			}
		}
	}
	if s == nil {
		return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: no shard %q in the change feed", name, req.Shard)
	}
	if req.From == "" {
		after = s.TrimmedTo
	}
	if after < s.TrimmedTo {
		return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: shard %q: records up to %d were trimmed", name, req.Shard, s.TrimmedTo)
	}
	open := !s.Ended
	end := uint64(1<<63 - 1)
	if open {
		end = f.safe()
		f.mu.Lock()
		next := f.seq
		f.mu.Unlock()
		if after >= next {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: shard %q has no record %d", name, req.Shard, after)
		}
	}
	lo := feedKey(t.rows, s.N, after+1)
	hi := feedKey(t.rows, s.N, end)
	if !open {
		hi = feedShardPrefix(t.rows, s.N+1)
	}
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, storeError(err, "table %q: change feed", name)
	}
	defer it.Close()
	id := req.Shard
	out := &tablekit.ReadShardResponse{Next: enginekit.SeqCheckpoint(id, after)}
	limit := max(req.Limit, 1)
	ok := it.First()
	for ; ok && len(out.Records) < limit; ok = it.Next() {
		k := it.Key()
		seq := binary.BigEndian.Uint64(k[len(k)-8:])
		r, err := decodeChange(t.meta.Key, it.Value())
		if err != nil {
			return nil, tablekit.WrapError(tablekit.ErrUnavailable, err, "table %q: change feed shard %q record %d", name, id, seq)
		}
		r.Shard, r.Checkpoint = id, enginekit.SeqCheckpoint(id, seq)
		out.Records = append(out.Records, r)
		out.Next = r.Checkpoint
	}
	if err := it.Error(); err != nil {
		return nil, storeError(err, "table %q: change feed", name)
	}
	out.Ended = s.Ended && !ok
	return out, nil
}

// trimInterval is how often (at requests' Now) ReadShard trims a feed.
const trimInterval = int64(time.Minute / time.Millisecond)

// trimFeed trims the feed of req's table when it was last trimmed more
// than trimInterval before req.Now (checked under the shared lock first,
// so that readers do not stop writers each time).
func (e *Engine) trimFeed(ctx context.Context, req *tablekit.ReadShardRequest) error {
	t, err := e.using(ctx, req.Meta)
	if err != nil {
		return err
	}
	due := t.feed != nil && req.Now-t.feed.lastTrim >= trimInterval
	t.mu.RUnlock()
	e.end()
	if !due {
		return nil
	}
	t, err = e.lockTable(ctx, req.Meta)
	if err != nil {
		return err
	}
	defer e.end()
	defer t.mu.Unlock()
	if t.feed == nil {
		return nil
	}
	t.feed.lastTrim = req.Now
	b := e.db.NewBatch()
	defer b.Close()
	old := slices.Clone(t.feed.st.Shards)
	if err := e.trim(b, t, req.Now); err != nil {
		t.feed.st.Shards = old
		return storeError(err, "table %q: change feed", req.Meta.Name)
	}
	if b.Empty() && len(old) == len(t.feed.st.Shards) {
		return nil
	}
	t.saveFeed(b)
	if err := e.commit(b); err != nil {
		t.feed.st.Shards = old
		return storeError(err, "table %q: change feed", req.Meta.Name)
	}
	return nil
}
