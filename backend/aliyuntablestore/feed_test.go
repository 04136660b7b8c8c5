package aliyuntablestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// feedUsers opens the adapter on a fresh tsemu server, creates the users
// table and enables its feed.
func feedUsers(t *testing.T) (*tablekit.Table, tablekit.Shard) {
	t.Helper()
	srv := newServer(t)
	db := tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil))
	ctx := context.Background()
	if err := db.CreateTable(ctx, usersMeta); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table(usersMeta.Name)
	st, err := tbl.EnableChangeFeed(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Enabled || st.Retention != tablekit.DefaultFeedRetention || len(st.Shards) != 1 || st.Shards[0].Ended {
		t.Fatalf("EnableChangeFeed: %+v", st)
	}
	return tbl, st.Shards[0]
}

func readKeys(t *testing.T, tbl *tablekit.Table, shard string, from tablekit.Checkpoint) ([]string, []tablekit.ChangeRecord) {
	t.Helper()
	var keys []string
	var recs []tablekit.ChangeRecord
	for r, err := range tbl.ReadShard(context.Background(), shard, from) {
		if err != nil {
			t.Fatalf("ReadShard from %.40q: %v", from, err)
		}
		s, _ := r.Key[0].Value.Str()
		keys, recs = append(keys, s), append(recs, r)
	}
	return keys, recs
}

// TestFeedCheckpointsAcrossPages: records of 1.5 MiB make tsemu cut its
// pages at two records (4 MiB), so a checkpoint "K:ITERATOR" may count
// more records than a page of its iterator holds; resuming from each
// checkpoint, the records of the page's position and beyond, returns
// exactly the records after it.
func TestFeedCheckpointsAcrossPages(t *testing.T) {
	tbl, shard := feedUsers(t)
	ctx := context.Background()
	big := tablekit.String(strings.Repeat("x", 3<<19))
	const n = 5
	var want []string
	for i := range n {
		k := fmt.Sprintf("r%d", i)
		if err := tbl.PutRow(ctx, userKey(k), []tablekit.Column{{Name: "v", Value: big}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, k)
	}
	keys, recs := readKeys(t, tbl, shard.ID, "")
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Fatalf("records %v, want %v", keys, want)
	}
	// The first page holds two records: the first's checkpoint counts one
	// record after the page's iterator, the second's is the next page's.
	k0, it0, _ := strings.Cut(string(recs[0].Checkpoint), ":")
	k1, _, _ := strings.Cut(string(recs[1].Checkpoint), ":")
	if k0 != "1" || k1 != "0" {
		t.Fatalf("checkpoints %q, %q: want 1:IT and 0:NEXT (pages of two records)", recs[0].Checkpoint, recs[1].Checkpoint)
	}
	for i, r := range recs {
		got, _ := readKeys(t, tbl, shard.ID, r.Checkpoint)
		if strings.Join(got, ",") != strings.Join(want[i+1:], ",") {
			t.Errorf("after record %d: %v, want %v", i, got, want[i+1:])
		}
	}
	// Counts past the first page's records, from its iterator.
	for k := 2; k <= n; k++ {
		got, _ := readKeys(t, tbl, shard.ID, tablekit.Checkpoint(fmt.Sprintf("%d:%s", k, it0)))
		if strings.Join(got, ",") != strings.Join(want[k:], ",") {
			t.Errorf("%d records after the first iterator: %v, want %v", k, got, want[k:])
		}
	}
}

// TestFeedBadCheckpointsAndShards: malformed or foreign checkpoints and
// shards are ErrInvalidArgument naming the table (ErrTrimmed for a shard
// that is not there), never a panic.
func TestFeedBadCheckpointsAndShards(t *testing.T) {
	tbl, shard := feedUsers(t)
	ctx := context.Background()
	if err := tbl.PutRow(ctx, userKey("a"), []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	_, recs := readKeys(t, tbl, shard.ID, "")
	_, it, _ := strings.Cut(string(recs[0].Checkpoint), ":")
	first := func(shard string, from tablekit.Checkpoint) error {
		for _, err := range tbl.ReadShard(ctx, shard, from) {
			return err
		}
		return nil
	}
	for _, cp := range []string{"x", "1:", ":" + it, "-1:" + it, "01:" + it, "1:a b", "1:\x00", "99999999999:" + it,
		"0:" + strings.Repeat("A", 5000), "0:AAAA", "0:" + it + "A"} {
		err := first(shard.ID, tablekit.Checkpoint(cp))
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), `"users"`) {
			t.Errorf("checkpoint %.40q: %v, want ErrInvalidArgument naming the table", cp, err)
		}
	}
	for _, s := range []string{"nope", "nope/0", "/", shard.ID + "x"} {
		err := first(s, "")
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !errors.Is(err, tablekit.ErrTrimmed) {
			t.Errorf("shard %q: %v, want ErrInvalidArgument and ErrTrimmed", s, err)
		}
	}
}
