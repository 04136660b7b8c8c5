package tsemu

import (
	"context"
	"time"

	"github.com/tablekit/tablekit"
)

// This file holds every call the emulator makes on its Backend directly.
// Everything else goes through the server's tablekit.Client (s.client),
// which applies SPEC's checks, the stale-metadata retry and the error
// wording once for every program; a call here bypasses all of that, so
// each one says why the Client's API does not serve it. Together they are
// the specification of what the Client lacks: a page-level read (one
// Backend page and its inclusive next key, for a range and for a feed
// shard) and a feed retention below SPEC §15's minimum.
//
// The Client does serve, and the emulator uses it for: single-row reads,
// including a transaction's view of a row (txnView reads every version
// with tablekit.MaxVersions), BatchGetRow, every write (PutRow, UpdateRow,
// DeleteRow, BatchWriteRow, atomic batches and transaction commits through
// Client.AtomicWrite), the table calls, and a feed's status
// (Table.ChangeFeed).

// rangePage reads one page of a range, GetRangeRequest as given.
//
// Why not Table.GetRange, Rows or Scan:
//   - Tablestore's next_start_primary_key is the inclusive key of the next
//     stored row, which GetRangeResponse.Next is; the Client answers an
//     opaque token meaning "after the last row returned", from which that
//     key cannot be had without reading on. The recorded traffic
//     (TestRecordedService) compares the key field by field.
//   - The service answers one page of what it scanned: with a filter, a
//     page may hold no row and still a next key. Table.GetRange reads on,
//     page after page, until Limit rows pass the filter, so one GetRange
//     with a selective filter would become an unbounded scan.
//   - A transaction's GetRange (readRange) merges its own writes into
//     exactly the span the page covers, from Start to Next.
//
// The checks the Client would make (key schema and INF bounds, direction
// order, limit, projection, filter, version selection) are made before,
// by decodeKey, decodeRead and getRange, with the service's messages.
func (s *Server) rangePage(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	return s.backend.GetRange(ctx, req)
}

// feeder returns the Backend's change feed, if it has one (a type
// assertion, not a call: the Stream API is refused before any read when
// it is false).
func (s *Server) feeder() (tablekit.ChangeFeeder, bool) {
	f, ok := s.backend.(tablekit.ChangeFeeder)
	return f, ok && tablekit.CapabilitiesOf(s.backend).ChangeFeed
}

// shardPage reads one page of at most limit records of shard after from.
//
// Why not Table.ReadShard or FollowChangeFeed: GetStreamRecord answers one
// page of at most its limit records and, past an ended shard's end, no
// next iterator. Table.ReadShard is an iterator that reads to the last
// record committed (pages of MaxFeedPage) and does not say whether the
// shard ended; the Client's page read (readPage, which FollowChangeFeed
// uses) is private and takes no limit.
func (s *Server) shardPage(ctx context.Context, m *tablekit.TableMeta, shard string, from tablekit.Checkpoint, limit int) (*tablekit.ReadShardResponse, error) {
	f, _ := s.feeder()
	return f.ReadShard(ctx, &tablekit.ReadShardRequest{Meta: m, Shard: shard, From: from, Limit: limit, Now: s.clock.Now().UnixMilli()})
}

// setFeed enables m's feed for retention, or disables it.
//
// Why not Table.EnableChangeFeed and DisableChangeFeed: Tablestore's
// expiration_time is 1 to 168 hours, SPEC §15's retention (which the
// Client enforces) 24 to 168; a stream of 1 to 23 hours is the service's
// and cannot be asked of the Client. The retention is checked by
// checkStreamSpec before this call.
func (s *Server) setFeed(ctx context.Context, m *tablekit.TableMeta, enable bool, retention time.Duration, now time.Time) error {
	f, _ := s.feeder()
	_, err := f.SetChangeFeed(ctx, &tablekit.SetChangeFeedRequest{Meta: m, Enabled: enable, Retention: retention, Now: now.UnixMilli()})
	return err
}
