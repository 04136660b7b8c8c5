package tablekit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// A change feed: enable it, write, and read every change with its
// checkpoint; a reader that stores the checkpoint resumes after it.
func ExampleTable_FollowChangeFeed() {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	db := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	defer db.Close()
	_ = db.CreateTable(ctx, tablekit.TableMeta{Name: "counters", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}})
	counters := db.Table("counters")
	st, err := counters.EnableChangeFeed(ctx, 48*time.Hour)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("retention:", st.Retention)

	key := tablekit.Key("id", tablekit.String("visits"))
	_ = counters.PutRow(ctx, key, []tablekit.Column{{Name: "n", Value: tablekit.Integer(1)}})
	_, _ = counters.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", 41)})
	_ = counters.DeleteRow(ctx, key)

	pos := tablekit.FeedPosition{} // from the start of every shard; keep it to resume
	opts := tablekit.FollowOptions{UntilCaughtUp: true, Parallelism: 1}
	// One shard at a time (Parallelism 1): fn may then write pos.
	err = counters.FollowChangeFeed(ctx, pos, opts, func(r tablekit.ChangeRecord) error {
		fmt.Println(r.Kind, r.Key, r.Changes)
		pos[r.Shard] = r.Checkpoint
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// retention: 48h0m0s
	// Put (id=String("visits")) [PutAt("n", Integer(1), 1893456000000)]
	// Update (id=String("visits")) [PutAt("n", Integer(42), 1893456000000)]
	// Delete (id=String("visits")) []
	// err: <nil>
}
