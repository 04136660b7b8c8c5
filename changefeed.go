package tablekit

import (
	"context"
	"errors"
	"iter"
	"sync"
	"time"

	"github.com/tablekit/tablekit/observe"
)

// This file is SPEC §15, the change feed: a table whose feed is enabled
// records every committed write, one [ChangeRecord] per row written, in
// shards a reader follows from opaque [Checkpoint]s.

// Retention bounds of a change feed (SPEC §15): a feed keeps its records
// at least DefaultFeedRetention; Tablestore's Stream allows 1-168 h, and
// SPEC requires at least 24 h, so 24-168 h in whole hours is portable.
const (
	DefaultFeedRetention = 24 * time.Hour
	MinFeedRetention     = 24 * time.Hour
	MaxFeedRetention     = 168 * time.Hour
)

// Checkpoint is a position in one shard of a change feed: reading from it
// returns the records after it. The empty Checkpoint is the start of the
// shard (its oldest retained record). A checkpoint is opaque printable
// ASCII of at most 256 bytes, safe to store in a file or a table; it stays
// valid across restarts of the reader and of the backend's process (for
// backends that persist, as the file engine does) for as long as the
// records after it are retained, and it is meaningful only to the table
// and shard it came from. Its format may change between major versions.
type Checkpoint string

// ChangeRecord is one committed write of one row (SPEC §15).
type ChangeRecord struct {
	// Shard is the shard the record was read from; Checkpoint resumes the
	// shard after this record.
	Shard      string
	Checkpoint Checkpoint
	// Key is the row's key, Kind the write: WritePut (the row was
	// replaced by Changes' cells), WriteUpdate or WriteDelete (the row was
	// deleted; no Changes).
	Key  PrimaryKey
	Kind WriteKind
	// CommitTime is when the write committed, at the writing client's
	// clock (milliseconds).
	CommitTime time.Time
	// Changes are the cell changes as applied, in order: ChangePut with
	// its Version (an increment appears as the put of its result),
	// ChangeDeleteVersion with its Version, ChangeDeleteColumn. Never
	// ChangeIncrement.
	Changes []Change
}

// BatchWrite returns the write that applies r to table: applying it twice
// leaves the table as applying it once does, since every put carries its
// version (SPEC §5).
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

// Shard is one ordered stream of a change feed. A shard that Ended takes
// no more records; its children (shards that name it in Parents) follow
// it, so a reader that reads a shard's parents to their end first keeps
// per-row order (SPEC §15).
type Shard struct {
	ID      string
	Parents []string
	Ended   bool
}

// ChangeFeedStatus is a table's change feed: whether it records writes,
// how long it keeps records, and its retained shards, oldest first.
type ChangeFeedStatus struct {
	Enabled   bool
	Retention time.Duration
	Shards    []Shard
}

// ChangeFeeder is implemented by a backend with a change feed (SPEC §15,
// [Capabilities].ChangeFeed). A backend that has one records, from the
// SetChangeFeed that enables it until the one that disables it, one
// record per row of every committed Write and BatchWriteRow (and atomic
// write), in the same atomic step as the row itself.
type ChangeFeeder interface {
	// SetChangeFeed enables (req.Enabled, keeping records req.Retention)
	// or disables the feed of req.Meta's table and returns its status.
	// Disabling ends the open shard; enabling a disabled feed opens a new
	// shard whose parent is the last one.
	SetChangeFeed(ctx context.Context, req *SetChangeFeedRequest) (*ChangeFeedStatus, error)
	// DescribeChangeFeed returns the status of meta's table's feed (not
	// enabled and no shards when it never was).
	DescribeChangeFeed(ctx context.Context, meta *TableMeta) (*ChangeFeedStatus, error)
	// ReadShard returns up to req.Limit records after req.From, in order,
	// with the checkpoint after them (req.From when there are none), and
	// Ended when the shard ended and Next is past its last record. A
	// checkpoint older than the retention fails with ErrInvalidArgument
	// wrapping ErrTrimmed.
	ReadShard(ctx context.Context, req *ReadShardRequest) (*ReadShardResponse, error)
}

// ErrTrimmed is matched by the error of a read from a checkpoint whose
// records the feed no longer retains (Tablestore's OTSTrimmedDataAccess):
// records were missed, and the reader must start over from a copy.
var ErrTrimmed = errors.New("change feed: records after the checkpoint are no longer retained")

// SetChangeFeedRequest enables or disables a table's feed.
type SetChangeFeedRequest struct {
	Meta      *TableMeta
	Enabled   bool
	Retention time.Duration // when enabling: MinFeedRetention..MaxFeedRetention, whole hours
	Now       int64
}

// ReadShardRequest reads records of one shard after From.
type ReadShardRequest struct {
	Meta  *TableMeta
	Shard string
	From  Checkpoint
	Limit int // 1..MaxFeedPage
	Now   int64
}

// ReadShardResponse is one page of a shard.
type ReadShardResponse struct {
	Records []ChangeRecord
	Next    Checkpoint
	Ended   bool
}

// MaxFeedPage is the most records one ReadShard page returns.
const MaxFeedPage = 1000

// feeder returns the backend's ChangeFeeder, or the refusal SPEC §15 asks
// for when it has none (before any call to it).
func (t *Table) feeder(op string) (ChangeFeeder, error) {
	if err := t.c.checkOpen(op, t.name); err != nil {
		return nil, err
	}
	f, ok := t.c.b.(ChangeFeeder)
	if !ok || !CapabilitiesOf(t.c.b).ChangeFeed {
		return nil, &Error{Op: op, Table: t.name, Code: ErrUnimplemented, Msg: "the backend has no change feed (Capabilities.ChangeFeed is false)"}
	}
	return f, nil
}

// EnableChangeFeed makes the table record its writes (SPEC §15), keeping
// records for retention (0: DefaultFeedRetention; else whole hours in
// MinFeedRetention..MaxFeedRetention). Enabling an enabled feed sets its
// retention. A backend without a feed refuses with ErrUnimplemented.
func (t *Table) EnableChangeFeed(ctx context.Context, retention time.Duration) (ChangeFeedStatus, error) {
	const op = "EnableChangeFeed"
	if retention == 0 {
		retention = DefaultFeedRetention
	}
	if retention < MinFeedRetention || retention > MaxFeedRetention || retention%time.Hour != 0 {
		return ChangeFeedStatus{}, &Error{Op: op, Table: t.name, Code: ErrInvalidArgument,
			Msg: "change feed retention " + retention.String() + ": must be whole hours from 24h to 168h"}
	}
	return t.setFeed(ctx, op, true, retention)
}

// DisableChangeFeed stops recording the table's writes and ends its open
// shard; records already retained may still be read.
func (t *Table) DisableChangeFeed(ctx context.Context) error {
	_, err := t.setFeed(ctx, "DisableChangeFeed", false, 0)
	return err
}

func (t *Table) setFeed(ctx context.Context, op string, on bool, retention time.Duration) (_ ChangeFeedStatus, err error) {
	ctx, ost := t.c.begin(ctx, op, t.name)
	defer func() { ost.end(observe.Outcome{Err: err}) }()
	f, err := t.feeder(op)
	if err != nil {
		return ChangeFeedStatus{}, err
	}
	var st *ChangeFeedStatus
	err = t.c.run(ctx, t.name, func(m *TableMeta) error {
		var err error
		st, err = f.SetChangeFeed(ctx, &SetChangeFeedRequest{Meta: m, Enabled: on, Retention: retention, Now: t.c.now()})
		return err
	})
	if err != nil {
		return ChangeFeedStatus{}, t.c.backendErr(err, op, t.name)
	}
	return *st, nil
}

// ChangeFeed returns the table's feed status: enabled or not, its
// retention, and its shards.
func (t *Table) ChangeFeed(ctx context.Context) (_ ChangeFeedStatus, err error) {
	const op = "ChangeFeed"
	ctx, ost := t.c.begin(ctx, op, t.name)
	defer func() { ost.end(observe.Outcome{Err: err}) }()
	f, err := t.feeder(op)
	if err != nil {
		return ChangeFeedStatus{}, err
	}
	var st *ChangeFeedStatus
	err = t.c.run(ctx, t.name, func(m *TableMeta) error {
		var err error
		st, err = f.DescribeChangeFeed(ctx, m)
		return err
	})
	if err != nil {
		return ChangeFeedStatus{}, t.c.backendErr(err, op, t.name)
	}
	return *st, nil
}

// ListShards returns the feed's retained shards, oldest first.
func (t *Table) ListShards(ctx context.Context) ([]Shard, error) {
	st, err := t.ChangeFeed(ctx)
	return st.Shards, err
}

// ReadShard yields the records of shard after from, in commit order, until
// it has read every record committed so far (it does not wait for more:
// see [Table.FollowChangeFeed]). Each record carries the checkpoint that
// resumes after it. An error ends the sequence.
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
			if len(page.Records) == 0 {
				return
			}
			from = page.Next
		}
	}
}

func (t *Table) readPage(ctx context.Context, shard string, from Checkpoint) (_ *ReadShardResponse, err error) {
	const op = "ReadShard"
	ctx, ost := t.c.begin(ctx, op, t.name)
	defer func() { ost.end(observe.Outcome{Err: err}) }()
	f, err := t.feeder(op)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var page *ReadShardResponse
	err = t.c.run(ctx, t.name, func(m *TableMeta) error {
		var err error
		page, err = f.ReadShard(ctx, &ReadShardRequest{Meta: m, Shard: shard, From: from, Limit: MaxFeedPage, Now: t.c.now()})
		return err
	})
	if err != nil {
		return nil, t.c.backendErr(err, op, t.name)
	}
	if page.Next == "" {
		page.Next = from
	}
	return page, nil
}

// FollowOptions tune [Table.FollowChangeFeed].
type FollowOptions struct {
	// Parallelism is how many shards are read at once (0: 4).
	Parallelism int
	// Poll is how long to wait before reading a caught-up shard again
	// (0: 200 ms).
	Poll time.Duration
	// UntilCaughtUp returns (nil) once every shard has been read to the
	// last record committed before that read, instead of following the
	// feed until ctx ends.
	UntilCaughtUp bool
}

// FeedPosition is where a reader is in each shard of a feed: a map from
// shard ID to checkpoint, serializable as JSON; a shard absent is read
// from its start.
type FeedPosition map[string]Checkpoint

// FollowChangeFeed reads every shard of the feed from pos, each shard
// after its parents, up to opts.Parallelism shards at once, and calls fn
// with each record: the calls for one shard are in order, one at a time;
// calls for different shards may run concurrently. A record fn has seen
// may be seen again after a restart from an older position (at least
// once). It returns when ctx ends (ctx's error), when fn fails (its error)
// or, with UntilCaughtUp, when every shard is caught up (nil).
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
	for {
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
		tm := time.NewTimer(opts.Poll)
		select {
		case <-ctx.Done():
			tm.Stop()
			fail(ctx.Err())
		case <-tm.C:
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
