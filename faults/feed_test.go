package faults_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
)

// plain is a backend with only the required methods: the local engine
// seen through the Backend interface alone.
type plain struct{ tablekit.Backend }

// The wrapper forwards the change feed of a backend that has one, and
// has none (refused before any call) over a backend without one.
func TestWrapChangeFeed(t *testing.T) {
	ctx := context.Background()
	inj := faults.New(1)
	for _, tc := range []struct {
		name string
		b    tablekit.Backend
		feed bool
	}{{"local", localengine.New(), true}, {"plain", plain{localengine.New()}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tablekit.NewClient(inj.Wrap(tc.b))
			defer db.Close()
			if got := db.Capabilities().ChangeFeed; got != tc.feed {
				t.Fatalf("Capabilities().ChangeFeed = %v, want %v", got, tc.feed)
			}
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
				t.Fatal(err)
			}
			tbl := db.Table("t")
			_, err := tbl.EnableChangeFeed(ctx, 0)
			if !tc.feed {
				if !errors.Is(err, tablekit.ErrUnimplemented) {
					t.Fatalf("EnableChangeFeed over a backend without a feed: %v, want ErrUnimplemented", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			putOneRecorded(ctx, t, tbl)
		})
	}
}

// feedOnly is the local engine with a change feed but neither
// CreateTableWithFeed nor FeedChanged, as DynamoDB is.
type feedOnly struct {
	tablekit.Backend
	tablekit.ChangeFeeder
}

// The wrapper claims CreateWithFeed only over a tablekit.FeedCreator and
// forwards CreateTableWithFeed and FeedChanged to it; over a backend
// without them they answer ErrSkip, and CreateTable WithChangeFeed still
// works, through CreateTable and SetChangeFeed.
func TestWrapCreateWithFeed(t *testing.T) {
	ctx := context.Background()
	inj := faults.New(1)
	e := localengine.New() // one engine behind both of feedOnly's interfaces
	for _, tc := range []struct {
		name    string
		b       tablekit.Backend
		creator bool
	}{{"local", localengine.New(), true}, {"feedOnly", feedOnly{e, e}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			w := inj.Wrap(tc.b)
			if got := tablekit.CapabilitiesOf(w).CreateWithFeed; got != tc.creator {
				t.Fatalf("CapabilitiesOf(wrapper).CreateWithFeed = %v, want %v", got, tc.creator)
			}
			meta := &tablekit.TableMeta{Name: "direct", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}, Incarnation: "d", Generation: 1}
			err := w.(tablekit.FeedCreator).CreateTableWithFeed(ctx, meta, &tablekit.SetChangeFeedRequest{Meta: meta, Enabled: true, Retention: tablekit.DefaultFeedRetention})
			if tc.creator && err != nil || !tc.creator && !errors.Is(err, tablekit.ErrSkip) {
				t.Fatalf("CreateTableWithFeed through the wrapper: %v", err)
			}
			_, err = w.(tablekit.FeedWaiter).FeedChanged(ctx, "direct")
			if tc.creator && err != nil || !tc.creator && !errors.Is(err, tablekit.ErrSkip) {
				t.Fatalf("FeedChanged through the wrapper: %v", err)
			}

			db := tablekit.NewClient(w)
			defer db.Close()
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}, tablekit.WithChangeFeed(0)); err != nil {
				t.Fatal(err)
			}
			tbl := db.Table("t")
			putOneRecorded(ctx, t, tbl)
		})
	}
}

// putOneRecorded writes row 1 into tbl, whose feed is on, and requires
// the feed to hold one shard with that one record.
func putOneRecorded(ctx context.Context, t *testing.T, tbl *tablekit.Table) {
	t.Helper()
	if err := tbl.PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	shards, err := tbl.ListShards(ctx)
	if err != nil || len(shards) != 1 {
		t.Fatalf("ListShards: %v, %v", shards, err)
	}
	n := 0
	for _, err := range tbl.ReadShard(ctx, shards[0].ID, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d records of one write through the wrapper, want 1", n)
	}
}
