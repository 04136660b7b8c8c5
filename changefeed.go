package tablekit

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/tablekit/tablekit/observe"
)

// This file is SPEC §15, the change feed: a table whose feed is enabled
// records every committed write, one [ChangeRecord] per row written, in
// shards a reader follows from opaque [Checkpoint]s.

// Retention bounds of a change feed, in whole hours (SPEC §15).
const (
	DefaultFeedRetention = 24 * time.Hour
	MinFeedRetention     = 24 * time.Hour
	MaxFeedRetention     = 168 * time.Hour
)

// Checkpoint is an opaque, storable position in a shard ("": its start),
// ASCII, ≤ 256 bytes, valid while its records are retained (SPEC §15).
type Checkpoint string

// ChangeRecord is one committed write of one row (SPEC §15).
type ChangeRecord struct {
	Shard      string
	Checkpoint Checkpoint // resumes Shard after this record
	Key        PrimaryKey
	Kind       WriteKind // WritePut replaces the row; WriteDelete has no Changes
	CommitTime time.Time // the writing client's clock, ms
	Changes    []Change  // as applied, versioned; an increment is its result's put
}

// BatchWrite returns the write that applies r to table, idempotently.
func (r ChangeRecord) BatchWrite(table string) BatchWrite {
	switch r.Kind {
	case WritePut:
		cols := make([]Column, 0, len(r.Changes))
		for _, c := range r.Changes {
			cols = append(cols, Column{Name: c.Column, Value: c.Value, Version: c.Version})
		}
		return BatchPut(table, r.Key, cols)
	case WriteUpdate:
		return BatchUpdate(table, r.Key, r.Changes)
	}
	return BatchDelete(table, r.Key)
}

// Shard is one ordered stream of a feed; reading its Parents to their end
// first keeps per-row order (SPEC §15).
type Shard struct {
	ID      string
	Parents []string
	Ended   bool
}

// ChangeFeedStatus is a table's feed, retained Shards oldest first.
type ChangeFeedStatus struct {
	Enabled   bool
	Retention time.Duration
	Shards    []Shard
}

// ErrTrimmed: records were missed (OTSTrimmedDataAccess); start from a copy.
var ErrTrimmed = errors.New("change feed: records after the checkpoint are no longer retained")

// ErrNoChangeFeed is the [ErrInvalidArgument] of reading the feed of a
// table that has none: its feed was never enabled (or nothing of a disabled
// one is retained). [Table.ListShards] and [Table.FollowChangeFeed] answer
// it, naming the table, rather than an empty list or a silent wait.
var ErrNoChangeFeed = fmt.Errorf("%w: the table has no change feed (enable one with EnableChangeFeed, or create the table WithChangeFeed)", ErrInvalidArgument)

// MaxFeedPage is the most records one ReadShard page returns.
const MaxFeedPage = 1000

// feeder returns the backend's ChangeFeeder, or the refusal SPEC §15 asks
// for when it has none (before any call to it).
func (t *Table) feeder(op string) (ChangeFeeder, error) {
	if err := t.c.checkOpen(op, t.name); err != nil {
		return nil, err
	}
	f, ok := optional[ChangeFeeder](t.c, t.c.caps.ChangeFeed)
	if !ok {
		return nil, refuse(op, t.name, "the backend has no change feed (SPEC §15; Capabilities.ChangeFeed is false)")
	}
	return f, nil
}

// EnableChangeFeed records the table's writes, kept for retention (0:
// default), or sets an enabled feed's retention. No feed: ErrUnimplemented.
func (t *Table) EnableChangeFeed(ctx context.Context, retention time.Duration) (ChangeFeedStatus, error) {
	const op = "EnableChangeFeed"
	retention, err := checkFeedRetention(op, t.name, retention)
	if err != nil {
		return ChangeFeedStatus{}, err
	}
	return t.setFeed(ctx, op, true, retention)
}

// DisableChangeFeed stops recording; retained records stay readable.
func (t *Table) DisableChangeFeed(ctx context.Context) error {
	_, err := t.setFeed(ctx, "DisableChangeFeed", false, 0)
	return err
}

func (t *Table) setFeed(ctx context.Context, op string, on bool, retention time.Duration) (ChangeFeedStatus, error) {
	st, err := feedCall(ctx, t, op, func(ctx context.Context, f ChangeFeeder, m *TableMeta) (*ChangeFeedStatus, error) {
		return f.SetChangeFeed(ctx, &SetChangeFeedRequest{Meta: m, Enabled: on, Retention: retention, Now: t.c.now()})
	})
	if err != nil {
		return ChangeFeedStatus{}, err
	}
	return *st, nil
}

// ChangeFeed returns the table's feed status.
func (t *Table) ChangeFeed(ctx context.Context) (ChangeFeedStatus, error) {
	st, err := feedCall(ctx, t, "ChangeFeed", func(ctx context.Context, f ChangeFeeder, m *TableMeta) (*ChangeFeedStatus, error) {
		return f.DescribeChangeFeed(ctx, m)
	})
	if err != nil {
		return ChangeFeedStatus{}, err
	}
	return *st, nil
}

// feedCall is one observed change-feed call op: refused before any call
// where the backend has no feed, retried on stale metadata, its error
// given the op and table.
func feedCall[T any](ctx context.Context, t *Table, op string, call func(context.Context, ChangeFeeder, *TableMeta) (*T, error)) (_ *T, err error) {
	ctx, ost := t.c.begin(ctx, op, t.name)
	defer func() { ost.end(observe.Outcome{Err: err}) }()
	f, err := t.feeder(op)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *T
	err = t.c.run(ctx, t.name, func(m *TableMeta) error {
		var err error
		out, err = call(ctx, f, m)
		return err
	})
	if err != nil {
		return nil, t.c.backendErr(err, op, t.name)
	}
	return out, nil
}

// ListShards returns the feed's retained shards, oldest first;
// [ErrNoChangeFeed] if the table has no feed (never enabled, or disabled
// with nothing retained).
func (t *Table) ListShards(ctx context.Context) ([]Shard, error) {
	st, err := t.ChangeFeed(ctx)
	if err != nil {
		return nil, err
	}
	if !st.Enabled && len(st.Shards) == 0 {
		return nil, &Error{Op: "ListShards", Table: t.name, Code: ErrNoChangeFeed}
	}
	return st.Shards, nil
}

// ReadShard yields shard's records after from, in commit order, to the
// last one committed so far (it does not wait); an error ends it.
func (t *Table) ReadShard(ctx context.Context, shard string, from Checkpoint) iter.Seq2[ChangeRecord, error] {
	return func(yield func(ChangeRecord, error) bool) {
		for {
			page, err := t.readPage(ctx, shard, from)
			if err != nil {
				yield(ChangeRecord{}, err)
				return
			}
			for _, r := range page.Records {
				if !yield(r, nil) {
					return
				}
			}
			if page.Ended || len(page.Records) == 0 {
				return
			}
			from = page.Next
		}
	}
}

func (t *Table) readPage(ctx context.Context, shard string, from Checkpoint) (*ReadShardResponse, error) {
	page, err := feedCall(ctx, t, "ReadShard", func(ctx context.Context, f ChangeFeeder, m *TableMeta) (*ReadShardResponse, error) {
		return f.ReadShard(ctx, &ReadShardRequest{Meta: m, Shard: shard, From: from, Limit: MaxFeedPage, Now: t.c.now()})
	})
	if err != nil {
		return nil, err
	}
	if page.Next == "" {
		page.Next = from
	}
	return page, nil
}

// FollowOptions tune [Table.FollowChangeFeed].
type FollowOptions struct {
	Parallelism   int           // shards read at once (0: 4)
	Poll          time.Duration // a caught-up shard is read again at most Poll after its previous round of reads began (0: 200 ms; a FeedWaiter backend wakes it at its next commit)
	UntilCaughtUp bool          // return nil once caught up, not at ctx's end
}

// FeedPosition maps shard ID to checkpoint (JSON-able); absent: the start.
type FeedPosition map[string]Checkpoint

// FollowChangeFeed calls fn with each record after pos, shards after their
// parents, in order one at a time per shard (shards concurrently), at least
// once; it returns ctx's or fn's error, or nil when UntilCaughtUp;
// [ErrNoChangeFeed] at once if the table has no feed.
func (t *Table) FollowChangeFeed(ctx context.Context, pos FeedPosition, opts FollowOptions, fn func(ChangeRecord) error) error {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 4
	}
	if opts.Poll <= 0 {
		opts.Poll = 200 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		cur      = FeedPosition{}
		finished = map[string]bool{} // shards read to their end
		firstErr error
	)
	for k, v := range pos {
		cur[k] = v
	}
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	// readShard reads one shard until it is caught up (or ended, which it
	// reports).
	readShard := func(id string) (ended bool) {
		mu.Lock()
		from := cur[id]
		mu.Unlock()
		for {
			page, err := t.readPage(ctx, id, from)
			if err != nil {
				fail(err)
				return false
			}
			for _, r := range page.Records {
				if err := fn(r); err != nil {
					fail(err)
					return false
				}
			}
			from = page.Next
			mu.Lock()
			cur[id] = from
			mu.Unlock()
			if page.Ended {
				return true
			}
			if len(page.Records) == 0 {
				return false
			}
		}
	}
	waiter, _ := optional[FeedWaiter](t.c, t.c.caps.ChangeFeed) // feedwaiter.go; no capability of its own
	for {
		// The poll counts from the round's start, not its end: a round
		// that listed and read the shards for a while waits only what is
		// left of Poll, so a caught-up shard is read every Poll (a backend
		// spacing its reads, as DynamoDB's 5 a second, keeps its own
		// pace), not every Poll plus a round.
		round := time.Now()
		// The backend's signal is taken before the shards are read, so a
		// record committed after their reads wakes the wait below.
		var wake <-chan struct{}
		if waiter != nil {
			if ch, err := waiter.FeedChanged(ctx, t.name); err == nil {
				wake = ch
			}
		}
		shards, err := t.ListShards(ctx)
		if err != nil {
			fail(err)
			break
		}
		known := map[string]bool{}
		for _, s := range shards {
			known[s.ID] = true
		}
		var ready []Shard
		for _, s := range shards {
			if finished[s.ID] {
				continue
			}
			ok := true
			for _, p := range s.Parents {
				if known[p] && !finished[p] {
					ok = false
				}
			}
			if ok {
				ready = append(ready, s)
			}
		}
		sem := make(chan struct{}, opts.Parallelism)
		var wg sync.WaitGroup
		progressed := false
		for _, s := range ready {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if readShard(s.ID) {
					mu.Lock()
					finished[s.ID] = true
					progressed = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		mu.Lock()
		err = firstErr
		mu.Unlock()
		if err != nil {
			break
		}
		if progressed { // children may be ready now
			continue
		}
		if opts.UntilCaughtUp {
			return nil
		}
		tm := time.NewTimer(opts.Poll - time.Since(round))
		select {
		case <-ctx.Done():
			tm.Stop()
			fail(ctx.Err())
		case <-tm.C:
		case <-wake: // nil without a FeedWaiter: the poll alone
			tm.Stop()
		}
		if ctx.Err() != nil {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if firstErr == nil {
		return ctx.Err()
	}
	return firstErr
}
