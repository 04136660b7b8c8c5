package tablekit

import (
	"context"
	"errors"
	"time"
)

// CreateOption is an option of [Client.CreateTable].
type CreateOption func(*createOptions)

type createOptions struct {
	feed      bool
	retention time.Duration
}

// WithChangeFeed creates the table with its change feed enabled (SPEC §15:
// "a table created with a change feed"), kept for retention (0: the
// default), so that no write is committed unrecorded: on the local and file
// engines the feed is on in the same step as the creation; on a backend
// without that step ([Capabilities.CreateWithFeed], [FeedCreator]) the
// Client enables it right after the
// creation, and a writer in another process that writes into the new table
// before that is not recorded (the backend's package doc says which). No
// feed on the backend: ErrUnimplemented, before anything is created.
func WithChangeFeed(retention time.Duration) CreateOption {
	return func(o *createOptions) { o.feed, o.retention = true, retention }
}

// FeedCreator (for adapters) is [Capabilities.CreateWithFeed] (SPEC §15, "a table
// created with a change feed"), a refinement of a [ChangeFeeder]: a
// backend that creates a table with its change feed enabled in one step,
// atomically, so no write can come between the two.
type FeedCreator interface {
	// CreateTableWithFeed is CreateTable with feed (a checked, enabling
	// SetChangeFeed request of meta) applied in the same step. It may
	// answer ErrSkip, nothing created: the Client then creates the table
	// and enables its feed, as without a FeedCreator.
	CreateTableWithFeed(ctx context.Context, meta *TableMeta, feed *SetChangeFeedRequest) error
}

// checkFeedRetention is the retention rule of EnableChangeFeed and
// WithChangeFeed: 0 is the default, else whole hours from 24h to 168h.
func checkFeedRetention(op, table string, retention time.Duration) (time.Duration, error) {
	if retention == 0 {
		retention = DefaultFeedRetention
	}
	if retention < MinFeedRetention || retention > MaxFeedRetention || retention%time.Hour != 0 {
		return 0, &Error{Op: op, Table: table, Code: ErrInvalidArgument,
			Msg: "change feed retention " + retention.String() + ": must be whole hours from 24h to 168h"}
	}
	return retention, nil
}

// createWithFeed creates m with its change feed on (WithChangeFeed): in
// one step where the backend can, else CreateTable then SetChangeFeed,
// deleting the table again if the feed cannot be enabled.
func (c *Client) createWithFeed(ctx context.Context, op string, m *TableMeta, o createOptions) error {
	f, ok := optional[ChangeFeeder](c, c.caps.ChangeFeed)
	if !ok {
		return refuse(op, m.Name, "the backend has no change feed (Capabilities.ChangeFeed is false)")
	}
	retention, err := checkFeedRetention(op, m.Name, o.retention)
	if err != nil {
		return err
	}
	req := &SetChangeFeedRequest{Meta: m, Enabled: true, Retention: retention, Now: c.now()}
	if fc, ok := optional[FeedCreator](c, c.caps.CreateWithFeed); ok {
		if err := fc.CreateTableWithFeed(ctx, m, req); !errors.Is(err, ErrSkip) {
			return annotate(err, op, m.Name)
		}
	}
	if err := c.b.CreateTable(ctx, m); err != nil {
		return annotate(err, op, m.Name)
	}
	if _, err := f.SetChangeFeed(ctx, req); err != nil {
		_ = c.b.DeleteTable(context.WithoutCancel(ctx), m.Name)
		return annotate(err, op, m.Name)
	}
	return nil
}
