package awsdynamodb

import (
	"context"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
)

// Polling a shard within DynamoDB Streams' limits.
//
// DynamoDB Streams serves at most 5 GetRecords calls per second per shard
// (more are throttled) and expires a shard iterator 15 minutes after it
// was handed out. A follower (tablekit's FollowChangeFeed, `tablekit copy
// --follow`) calls ReadShard again and again from the checkpoint the last
// call returned, so the backend keeps, per shard, the NextShardIterator
// the last read ended with and the checkpoint it belongs to:
//
//   - A read from that checkpoint goes on with that iterator: no
//     GetShardIterator per poll (before, each poll asked for a new
//     iterator, and moto keeps every iterator it hands out, in memory,
//     for ever).
//   - A read from any other checkpoint, or after the iterator's age passed
//     iterMaxAge (14 minutes, a minute short of DynamoDB's 15), or whose
//     GetRecords answers ExpiredIteratorException, asks for a new iterator
//     after the checkpoint: nothing past the checkpoint was delivered, so
//     no record is missed.
//   - Every GetRecords call of a shard waits for its slot: at least
//     getRecordsGap (200 ms, 5 per second) after the shard's previous
//     call, across every reader of the shard in the process.
//   - A read that goes on with a kept iterator makes one GetRecords call
//     when the shard is caught up (the follower's poll is the next);
//     a new iterator gets up to maxEmptyPolls, since an iterator at the
//     trim horizon may answer empty pages before records.
//
// The kept state is one entry per shard read, dropped when the shard
// ends and when it was not used for iterMaxAge.

// getRecordsGap is the least time between two GetRecords calls of one
// shard: DynamoDB Streams serves 5 per second per shard.
const getRecordsGap = 200 * time.Millisecond

// iterMaxAge is how long a kept shard iterator is used: DynamoDB expires
// them after 15 minutes. A variable for the tests.
var iterMaxAge = 14 * time.Minute

// shardPoll is the polling state of one shard (see above).
type shardPoll struct {
	next tablekit.Checkpoint // the checkpoint iter continues from
	iter *string             // nil: none kept
	at   time.Time           // when iter was handed out
	slot time.Time           // when the last GetRecords call was allowed
}

// shardPolls holds the polling state of the shards a Backend read.
type shardPolls struct {
	mu sync.Mutex
	m  map[string]*shardPoll // by native table name and shard
}

// take returns the iterator kept for key when it continues from from and
// is young enough, removing it (a concurrent reader gets its own).
func (p *shardPolls) take(key string, from tablekit.Checkpoint, now time.Time) *string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.m[key]
	if s == nil || s.iter == nil || s.next != from || now.Sub(s.at) >= iterMaxAge {
		return nil
	}
	it := s.iter
	s.iter = nil
	return it
}

// keep records iter, handed out at at, as the one continuing from next;
// ended drops the shard's state.
func (p *shardPolls) keep(key string, next tablekit.Checkpoint, iter *string, at time.Time, ended bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ended {
		delete(p.m, key)
		return
	}
	s := p.state(key, at)
	s.next, s.iter, s.at = next, iter, at
}

// state returns key's state, creating it, and drops the states not used
// since iterMaxAge before now (callers hold mu).
func (p *shardPolls) state(key string, now time.Time) *shardPoll {
	s := p.m[key]
	if s != nil {
		return s
	}
	if p.m == nil {
		p.m = map[string]*shardPoll{}
	}
	for k, o := range p.m {
		if now.Sub(o.slot) > iterMaxAge && now.Sub(o.at) > iterMaxAge {
			delete(p.m, k)
		}
	}
	s = &shardPoll{}
	p.m[key] = s
	return s
}

// wait blocks until key's next GetRecords slot: getRecordsGap after the
// previous one. It returns ctx's error if ctx ends first.
func (p *shardPolls) wait(ctx context.Context, key string) error {
	now := time.Now()
	p.mu.Lock()
	s := p.state(key, now)
	slot := s.slot.Add(getRecordsGap)
	if slot.Before(now) {
		slot = now
	}
	s.slot = slot
	p.mu.Unlock()
	d := slot.Sub(now)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// len returns how many shards have state (tests).
func (p *shardPolls) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}
