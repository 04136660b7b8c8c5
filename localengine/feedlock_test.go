package localengine

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// A change-feed reader does not stop writers: while ReadShard copies its
// page (readShardHook runs there, with the reader's locks held), a write
// to the table completes. When reads took the table's lock alone, the
// write waited for the reader, which here waits for the write: the
// deadlock guard below fires.
func TestFeedReaderDoesNotStopWriters(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(New())
	defer db.Close()
	key := tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: key}, tablekit.WithChangeFeed(0)); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	for i := range int64(3) {
		if err := tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := tbl.ListShards(ctx)
	if err != nil || len(shards) != 1 {
		t.Fatal(shards, err)
	}
	wrote := make(chan error, 1)
	calls := 0
	hook := func() {
		calls++
		if calls > 1 {
			return
		}
		go func() { wrote <- tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(99)), nil) }()
		select {
		case err := <-wrote:
			wrote <- err
		case <-time.After(30 * time.Second): // a deadlock guard, not a timing assertion
			t.Error("a PutRow waited for a change-feed reader to finish its page")
		}
	}
	readShardHook.Store(&hook)
	defer readShardHook.Store(nil)
	n := 0
	for _, err := range tbl.ReadShard(ctx, shards[0].ID, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := <-wrote; err != nil {
		t.Fatalf("the write during the read: %v", err)
	}
	if n < 3 {
		t.Errorf("the reader read %d records, want the 3 written before it", n)
	}
}
