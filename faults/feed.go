package faults

import (
	"context"

	"github.com/tablekit/tablekit"
)

// The change feed (tablekit.ChangeFeeder) is forwarded unchanged, without
// faults: a wrapper over a backend without one answers tablekit.ErrSkip,
// and its capabilities say ChangeFeed false.

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
