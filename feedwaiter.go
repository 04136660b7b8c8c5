package tablekit

import "context"

// FeedWaiter (for adapters) is an optional interface of a [ChangeFeeder] backend whose
// change feed can say when it has new records: the embedded engines
// (localengine, fileengine) implement it. [Table.FollowChangeFeed], once
// caught up, waits on it instead of only re-reading after
// [FollowOptions.Poll], so a record reaches the follower about when it
// commits; the poll stays the upper bound of a wait. A backend without it
// is polled, as before. It has no [Capabilities] field: it changes how
// soon a follower reads a record, never what it reads.
type FeedWaiter interface {
	// FeedChanged returns a channel that is closed once a change record of
	// the table is committed after the call (and readable by ReadShard).
	// It may also close for no new record: the follower then reads and
	// finds nothing. On an error (ErrSkip from a wrapper whose inside
	// lacks it, the table gone, the backend closed) the follower polls
	// instead.
	FeedChanged(ctx context.Context, table string) (<-chan struct{}, error)
}
