package localengine

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/enginekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// The change feed (SPEC §15): each table keeps an in-memory log of change
// records, one shard per period the feed was enabled, appended in the same
// critical section as the write's store (a single-row write's under its
// span's lock and t.feedMu, span.go; an atomic write's under the table's
// lock held alone), so that the feed and the table never disagree; the
// feed's settings take the table's lock alone; its reads (ReadShard,
// DescribeChangeFeed) take it shared, as writers do, and t.feedMu only to
// trim the log and copy a page's record headers, so a busy reader never
// holds writers off for a page. A record leaves the log when its commit
// time is older than the retention (at the Now of later writes and reads),
// or, to bound memory, when the table's log holds more than
// MaxFeedRecords records: the oldest go first, and a reader behind them
// gets tablekit.ErrTrimmed.

// MaxFeedRecords bounds the records one table's feed keeps in memory,
// whatever their age.
const MaxFeedRecords = 1 << 20

// feedLog is a table's change feed; nil when never enabled.
type feedLog struct {
	enabled   bool
	retention time.Duration
	next      int // number of the next shard
	shards    []*shardLog
	count     int // records in every shard
}

type shardLog struct {
	id      string
	parents []string
	ended   bool
	endedAt int64
	first   uint64 // sequence number of recs[0]; records are numbered from 1
	recs    []tablekit.ChangeRecord
}

// record appends the change record of w, just applied, to the open shard
// (the caller holds t.mu alone, or t.mu shared and t.feedMu).
func (t *table) record(w *tablekit.WriteRequest, res *tablekit.UpdateResult) {
	f := t.feed
	if f == nil || !f.enabled {
		return
	}
	s := f.shards[len(f.shards)-1]
	s.recs = append(s.recs, rowmodel.ChangeOf(w, res)) // Shard and Checkpoint are set when read
	f.count++
	f.trim(w.Now)
	// Followers woken (FeedChanged) read the feed under t.mu shared and
	// t.feedMu, so they see the record once this write releases its locks.
	t.wake.Notify()
}

// trim drops records older than the retention at now, and the oldest
// beyond MaxFeedRecords, and shards ended and emptied.
func (f *feedLog) trim(now int64) {
	horizon := now - f.retention.Milliseconds()
	for _, s := range f.shards {
		n := 0
		for n < len(s.recs) && (s.recs[n].CommitTime.UnixMilli() < horizon || f.count-n > MaxFeedRecords) {
			n++
		}
		if n > 0 {
			// Reslice rather than shift: a write trims in O(trimmed), and
			// append's next growth copies only the live records.
			clear(s.recs[:n])
			s.recs = s.recs[n:]
			s.first += uint64(n)
			f.count -= n
		}
	}
	f.shards = slices.DeleteFunc(f.shards, func(s *shardLog) bool {
		return s.ended && len(s.recs) == 0 && s.endedAt < horizon
	})
}

func (f *feedLog) status() *tablekit.ChangeFeedStatus {
	st := &tablekit.ChangeFeedStatus{Enabled: f.enabled, Retention: f.retention}
	for _, s := range f.shards {
		st.Shards = append(st.Shards, tablekit.Shard{ID: s.id, Parents: slices.Clone(s.parents), Ended: s.ended})
	}
	return st
}

// SetChangeFeed implements tablekit.ChangeFeeder.
func (e *Engine) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	t.lock()
	defer t.unlock()
	if _, err := t.current(req.Meta); err != nil {
		return nil, err
	}
	if t.feed == nil {
		t.feed = &feedLog{}
	}
	f := t.feed
	switch {
	case req.Enabled && !f.enabled:
		f.enable(t.meta.Incarnation, req.Retention)
	case req.Enabled:
		f.retention = req.Retention
	case f.enabled:
		s := f.shards[len(f.shards)-1]
		s.ended, s.endedAt = true, req.Now
		f.enabled = false
	}
	f.trim(req.Now)
	t.wake.Notify() // a shard opened or ended
	return f.status(), nil
}

// enable opens a new shard, the child of the last one, and records from
// now on, for retention.
func (f *feedLog) enable(incarnation string, retention time.Duration) {
	var parents []string
	if n := len(f.shards); n > 0 {
		parents = []string{f.shards[n-1].id}
	}
	f.shards = append(f.shards, &shardLog{id: incarnation + "-" + strconv.Itoa(f.next), parents: parents, first: 1})
	f.next++
	f.enabled, f.retention = true, retention
}

// CreateTableWithFeed implements tablekit.FeedCreator: the table is
// published with its feed on, so no write comes before the feed.
func (e *Engine) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	return e.createTable(ctx, meta, feed)
}

// FeedChanged implements tablekit.FeedWaiter: the channel closes at the
// next change record of the table (appended with its write, under the
// write's locks), or when its feed is enabled or disabled.
func (e *Engine) FeedChanged(ctx context.Context, table string) (<-chan struct{}, error) {
	t, err := e.table(ctx, table)
	if err != nil {
		return nil, err
	}
	return t.wake.Wait(), nil
}

// DescribeChangeFeed implements tablekit.ChangeFeeder.
func (e *Engine) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	t, err := e.table(ctx, meta.Name)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if _, err := t.current(meta); err != nil {
		return nil, err
	}
	if t.feed == nil {
		return &tablekit.ChangeFeedStatus{}, nil
	}
	t.feedMu.Lock() // writers sharing t.mu append (and trim) under it
	defer t.feedMu.Unlock()
	return t.feed.status(), nil
}

// ReadShard implements tablekit.ChangeFeeder.
func (e *Engine) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	t, err := e.table(ctx, req.Meta.Name)
	if err != nil {
		return nil, err
	}
	after, err := enginekit.ParseSeqCheckpoint(req)
	if err != nil {
		return nil, err
	}
	// The table's lock shared, as writers hold it, and feedMu, under which
	// they append: a reader keeps writers off only while it trims and
	// copies its page's record headers, never for a whole page's clones.
	t.mu.RLock()
	defer t.mu.RUnlock()
	if _, err := t.current(req.Meta); err != nil {
		return nil, err
	}
	out, first, err := t.readPage(req, after)
	if err != nil {
		return nil, err
	}
	if h := readShardHook.Load(); h != nil {
		(*h)()
	}
	// The records' keys and changes are never modified once logged (a
	// trim only zeroes the log's own copies of the headers): clone them
	// for the caller outside feedMu.
	for i := range out.Records {
		r := &out.Records[i]
		r.Key = slices.Clone(r.Key)
		r.Changes = slices.Clone(r.Changes)
		r.Checkpoint = enginekit.SeqCheckpoint(r.Shard, first+uint64(i))
	}
	if n := len(out.Records); n > 0 {
		out.Next = out.Records[n-1].Checkpoint
	}
	return out, nil
}

// readShardHook, if set (by tests), runs in ReadShard after the page is
// taken from the log, with the locks a reader holds while it copies it.
var readShardHook atomic.Pointer[func()]

// readPage trims the feed and takes a page of req.Shard after record
// after, the records' headers copied (their keys and changes shared, no
// Checkpoint yet), under feedMu (the caller holds t.mu, shared or alone);
// first is the sequence number of the page's first record.
func (t *table) readPage(req *tablekit.ReadShardRequest, after uint64) (_ *tablekit.ReadShardResponse, first uint64, _ error) {
	var s *shardLog
	if t.feed != nil {
		t.feedMu.Lock()
		defer t.feedMu.Unlock()
		t.feed.trim(req.Now)
		for _, x := range t.feed.shards {
			if x.id == req.Shard {
				s = x
			}
		}
	}
	if s == nil {
		return nil, 0, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: no shard %q in the change feed", req.Meta.Name, req.Shard)
	}
	if req.From == "" {
		after = s.first - 1
	}
	if after+1 < s.first {
		return nil, 0, tablekit.WrapError(tablekit.ErrInvalidArgument, tablekit.ErrTrimmed, "table %q: shard %q: records %d to %d were trimmed", req.Meta.Name, req.Shard, after+1, s.first-1)
	}
	end := s.first + uint64(len(s.recs))
	if after >= end { // a checkpoint from the future
		return nil, 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "table %q: shard %q has no record %d", req.Meta.Name, req.Shard, after)
	}
	lo := int(after + 1 - s.first)
	hi := min(len(s.recs), lo+max(req.Limit, 1))
	out := &tablekit.ReadShardResponse{Records: make([]tablekit.ChangeRecord, hi-lo), Next: enginekit.SeqCheckpoint(s.id, after)}
	copy(out.Records, s.recs[lo:hi])
	for i := range out.Records {
		out.Records[i].Shard = s.id
	}
	out.Ended = s.ended && hi == len(s.recs)
	return out, s.first + uint64(lo), nil
}
