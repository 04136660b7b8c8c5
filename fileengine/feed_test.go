package fileengine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// feedKeys reads the shard from from and returns the rows' ids and the
// last checkpoint.
func feedKeys(t *testing.T, tbl *tablekit.Table, shard string, from tablekit.Checkpoint) ([]int64, tablekit.Checkpoint, error) {
	t.Helper()
	var ids []int64
	for r, err := range tbl.ReadShard(ctx, shard, from) {
		if err != nil {
			return ids, from, err
		}
		id, _ := r.Key[0].Value.Int()
		ids = append(ids, id)
		from = r.Checkpoint
	}
	return ids, from, nil
}

// TestFeedReopen: the feed, its state and a reader's checkpoint survive
// closing and opening the store; numbering goes on after the last record.
func TestFeedReopen(t *testing.T) {
	dir := t.TempDir()
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db := tablekit.NewClient(mustOpen(t, dir), tablekit.WithClock(clock))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	st, err := tbl.EnableChangeFeed(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	shard := st.Shards[0].ID
	for i := range 3 {
		if err := tbl.PutRow(ctx, intKey(i), []tablekit.Column{{Name: "c", Value: tablekit.Integer(int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	ids, cp, err := feedKeys(t, tbl, shard, "")
	if err != nil || len(ids) != 3 {
		t.Fatalf("before reopening: %v, %v; want rows 0 1 2", ids, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = tablekit.NewClient(mustOpen(t, dir), tablekit.WithClock(clock))
	defer db.Close()
	tbl = db.Table("t")
	st, err = tbl.ChangeFeed(ctx)
	if err != nil || !st.Enabled || len(st.Shards) != 1 || st.Shards[0].ID != shard {
		t.Fatalf("after reopening: %+v, %v; want the same enabled feed", st, err)
	}
	for i := 3; i < 5; i++ {
		if err := tbl.PutRow(ctx, intKey(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	ids, _, err = feedKeys(t, tbl, shard, cp)
	if err != nil || len(ids) != 2 || ids[0] != 3 || ids[1] != 4 {
		t.Fatalf("from the checkpoint taken before reopening: %v, %v; want rows 3 4", ids, err)
	}
	ids, _, err = feedKeys(t, tbl, shard, "")
	if err != nil || len(ids) != 5 {
		t.Fatalf("whole shard after reopening: %v, %v; want 5 records", ids, err)
	}
}

// TestFeedTrim: records older than the retention are deleted, and a
// reader behind them is told (ErrTrimmed) rather than skipped past them.
func TestFeedTrim(t *testing.T) {
	dir := t.TempDir()
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db := tablekit.NewClient(mustOpen(t, dir), tablekit.WithClock(clock))
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	st, err := tbl.EnableChangeFeed(ctx, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	shard := st.Shards[0].ID
	for i := range 3 {
		if err := tbl.PutRow(ctx, intKey(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	_, _, _ = feedKeys(t, tbl, shard, "") // the first read trims nothing
	clock.Advance(25 * time.Hour)
	if err := tbl.PutRow(ctx, intKey(9), nil); err != nil {
		t.Fatal(err)
	}
	ids, _, err := feedKeys(t, tbl, shard, "")
	if err != nil || len(ids) != 1 || ids[0] != 9 {
		t.Fatalf("after the retention: %v, %v; want only row 9", ids, err)
	}
	_, _, err = feedKeys(t, tbl, shard, tablekit.Checkpoint(shard+"/1"))
	if !errors.Is(err, tablekit.ErrTrimmed) || !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("reading from a trimmed checkpoint: %v, want ErrTrimmed", err)
	}
}

// verifyFeedAgrees checks, after a crash, that the change feed and the
// table agree: the whole feed replayed into an empty local engine gives
// the table's rows, cell for cell (the crash workload writes no row
// twice but its counters, and deletes nothing).
func verifyFeedAgrees(t *testing.T, db *tablekit.Client, cycle int) {
	t.Helper()
	m, err := db.DescribeTable(ctx, crashTable)
	if err != nil {
		t.Fatal(err)
	}
	replay := tablekit.NewClient(localengine.New())
	defer replay.Close()
	m.Options.MaxVersionOffset = tablekit.MaxOptionValue * time.Second // accept every version
	if err := replay.CreateTable(ctx, tablekit.TableMeta{Name: m.Name, Key: m.Key, Options: m.Options}); err != nil {
		t.Fatal(err)
	}
	rt := replay.Table(m.Name)
	n := 0
	err = db.Table(crashTable).FollowChangeFeed(ctx, nil, tablekit.FollowOptions{UntilCaughtUp: true, Parallelism: 1}, func(r tablekit.ChangeRecord) error {
		n++
		_, err := replay.BatchWriteRow(ctx, []tablekit.BatchWrite{r.BatchWrite(m.Name)})
		return err
	})
	if err != nil {
		t.Fatalf("cycle %d: reading the feed: %v", cycle, err)
	}
	lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	var want, got []string
	for row, err := range db.Table(crashTable).Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint(row))
	}
	for row, err := range rt.Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(row))
	}
	if !slices.Equal(want, got) {
		t.Errorf("cycle %d: the table (%d rows) and its feed (%d records, replayed: %d rows) disagree", cycle, len(want), n, len(got))
	}
}
