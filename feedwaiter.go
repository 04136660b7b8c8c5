package tablekit

import "context"

// FeedWaiter is an optional interface of a [ChangeFeeder] backend whose
// change feed can say when it has new records: the embedded engines
// (localengine, fileengine) implement it. [Table.FollowChangeFeed], once
// caught up, waits on it instead of only re-reading after
// [FollowOptions.Poll], so a record reaches the follower about when it
// commits; the poll stays the upper bound of a wait. A backend without it
// is polled, as before.
type FeedWaiter interface {
	// FeedChanged returns a channel that is closed once a change record of
	// the table is committed after the call (and readable by ReadShard).
	// It may also close for no new record: the follower then reads and
	// finds nothing. It never answers ErrSkip; on an error (the table is
	// gone, the backend closed) the follower polls instead.
	FeedChanged(ctx context.Context, table string) (<-chan struct{}, error)
}
