package faults

import (
	"context"

	"github.com/tablekit/tablekit"
)

// The change feed (tablekit.ChangeFeeder) is forwarded unchanged, without
// faults: a wrapper over a backend without one answers tablekit.ErrSkip,
// and its capabilities say ChangeFeed false. CreateTableWithFeed
// (tablekit.FeedCreator) likewise, with CreateTable's faults, and
// FeedChanged (tablekit.FeedWaiter), ErrSkip without it (a follower then
// polls).

// SetChangeFeed is the wrapped backend's.
func (w *backend) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	f, err := inside[tablekit.ChangeFeeder](w)
	if err != nil {
		return nil, err
	}
	return f.SetChangeFeed(ctx, req)
}

// DescribeChangeFeed is the wrapped backend's.
func (w *backend) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	f, err := inside[tablekit.ChangeFeeder](w)
	if err != nil {
		return nil, err
	}
	return f.DescribeChangeFeed(ctx, meta)
}

// ReadShard is the wrapped backend's.
func (w *backend) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	f, err := inside[tablekit.ChangeFeeder](w)
	if err != nil {
		return nil, err
	}
	return f.ReadShard(ctx, req)
}

// CreateTableWithFeed is the wrapped backend's, with CreateTable's faults,
// tablekit.ErrSkip where it has none (the Client then creates the table
// and enables its feed).
func (w *backend) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	fc, err := inside[tablekit.FeedCreator](w)
	if err != nil {
		return err
	}
	_, err = do(ctx, w, OpCreateTable, meta.Name, "", func() (struct{}, error) {
		return struct{}{}, fc.CreateTableWithFeed(ctx, meta, feed)
	})
	return err
}

// FeedChanged is the wrapped backend's, without faults (a fault would only
// make a follower poll).
func (w *backend) FeedChanged(ctx context.Context, table string) (<-chan struct{}, error) {
	fw, err := inside[tablekit.FeedWaiter](w)
	if err != nil {
		return nil, err
	}
	return fw.FeedChanged(ctx, table)
}
