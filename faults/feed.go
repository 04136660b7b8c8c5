package faults

import (
	"context"

	"github.com/tablekit/tablekit"
)

// The change feed (tablekit.ChangeFeeder) is forwarded unchanged, without
// faults: a wrapper over a backend without one answers
// tablekit.ErrUnimplemented, and its capabilities say ChangeFeed false;
// CreateTableWithFeed (tablekit.FeedCreator) likewise, ErrSkip without it.

var _ tablekit.ChangeFeeder = (*backend)(nil)

func (w *backend) feeder() (tablekit.ChangeFeeder, error) {
	f, ok := w.b.(tablekit.ChangeFeeder)
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrUnimplemented, "the wrapped backend has no change feed")
	}
	return f, nil
}

// SetChangeFeed is the wrapped backend's.
func (w *backend) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	f, err := w.feeder()
	if err != nil {
		return nil, err
	}
	return f.SetChangeFeed(ctx, req)
}

// DescribeChangeFeed is the wrapped backend's.
func (w *backend) DescribeChangeFeed(ctx context.Context, meta *tablekit.TableMeta) (*tablekit.ChangeFeedStatus, error) {
	f, err := w.feeder()
	if err != nil {
		return nil, err
	}
	return f.DescribeChangeFeed(ctx, meta)
}

// ReadShard is the wrapped backend's.
func (w *backend) ReadShard(ctx context.Context, req *tablekit.ReadShardRequest) (*tablekit.ReadShardResponse, error) {
	f, err := w.feeder()
	if err != nil {
		return nil, err
	}
	return f.ReadShard(ctx, req)
}

var _ tablekit.FeedCreator = (*backend)(nil)

// CreateTableWithFeed is the wrapped backend's, with CreateTable's faults,
// tablekit.ErrSkip where it has none (the Client then creates the table
// and enables its feed).
func (w *backend) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	fc, ok := w.b.(tablekit.FeedCreator)
	if !ok {
		return tablekit.ErrSkip
	}
	_, err := do(ctx, w, OpCreateTable, meta.Name, "", func() (struct{}, error) {
		return struct{}{}, fc.CreateTableWithFeed(ctx, meta, feed)
	})
	return err
}
