package tsemu

import (
	"context"
	"time"

	"github.com/tablekit/tablekit"
)

// A caught-up GetStreamRecord waits for the next record.
//
// Tablestore answers a GetStreamRecord at the end of a shard at once, with
// no record; its readers poll again (tablekit's follower after
// FollowOptions.Poll, 200 ms), so a record committed meanwhile waits up to
// that long. When the Backend says when its feed has new records
// (tablekit.FeedWaiter: the local and file engines), the emulator instead
// holds such a call open up to Options.StreamWait (default
// DefaultStreamWait) and answers as soon as a record commits: a follower
// reading the emulator then sees a record about when it commits, and a
// caught-up shard costs at most one call per StreamWait plus the reader's
// poll. The answer is the one the call would have had at that moment (a
// page of records, or none after the wait), so a client cannot tell the
// wait from a slow answer; no Tablestore client relies on an immediate
// empty answer. Close ends the waits at once.

// DefaultStreamWait is how long a GetStreamRecord of a caught-up shard
// waits for a record when Options.StreamWait is zero.
const DefaultStreamWait = 100 * time.Millisecond

// streamWait returns how long a caught-up GetStreamRecord waits, and the
// Backend's signal of new records (nil: it answers at once).
func (s *Server) streamWait() (time.Duration, tablekit.FeedWaiter) {
	w, ok := s.backend.(tablekit.FeedWaiter)
	if !ok || s.opts.StreamWait < 0 {
		return 0, nil
	}
	if s.opts.StreamWait == 0 {
		return DefaultStreamWait, w
	}
	return s.opts.StreamWait, w
}

// shardPageWait is shardPage, which, when the shard is caught up (no
// record, not ended) and the Backend is a FeedWaiter, waits for a record
// up to streamWait, ctx's end or the server's Close, and reads again.
func (s *Server) shardPageWait(ctx context.Context, m *tablekit.TableMeta, shard string, from tablekit.Checkpoint, limit int) (*tablekit.ReadShardResponse, error) {
	wait, waiter := s.streamWait()
	if waiter == nil {
		return s.shardPage(ctx, m, shard, from, limit)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		// The signal is taken before the read, so a record committed
		// after the read closes it.
		changed, werr := waiter.FeedChanged(ctx, m.Name)
		page, err := s.shardPage(ctx, m, shard, from, limit)
		if err != nil || werr != nil || len(page.Records) > 0 || page.Ended {
			return page, err
		}
		select {
		case <-changed:
		case <-deadline.C:
			return page, nil
		case <-ctx.Done():
			return page, nil
		case <-s.closing:
			return page, nil
		}
	}
}
