package tablekit_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// A caught-up follower of an engine that is a FeedWaiter gets a record
// when it commits, not after its poll: with a poll of an hour, each of
// three writes made after the follower caught up reaches it within
// seconds (were it polling, none would). Both embedded engines, and the
// local one wrapped by package faults, which forwards FeedChanged.
func TestFollowWakesOnCommit(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) tablekit.Backend{
		"local": func(t *testing.T) tablekit.Backend { return localengine.New() },
		"local through faults": func(t *testing.T) tablekit.Backend {
			return faults.New(1).Wrap(localengine.New())
		},
		"file": func(t *testing.T) tablekit.Backend {
			e, err := fileengine.Open(filepath.Join(t.TempDir(), "db"), &fileengine.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	} {
		t.Run(name, func(t *testing.T) {
			b := open(t)
			if _, ok := b.(tablekit.FeedWaiter); !ok {
				t.Fatalf("%T is not a FeedWaiter", b)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			db := tablekit.NewClient(b)
			defer db.Close()
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
				t.Fatal(err)
			}
			tb := db.Table("t")
			if _, err := tb.EnableChangeFeed(ctx, 0); err != nil {
				t.Fatal(err)
			}
			got := make(chan int64, 10)
			done := make(chan error, 1)
			fctx, stop := context.WithCancel(ctx)
			go func() {
				done <- tb.FollowChangeFeed(fctx, nil, tablekit.FollowOptions{Poll: time.Hour}, func(r tablekit.ChangeRecord) error {
					id, _ := r.Key[0].Value.Int()
					got <- id
					return nil
				})
			}()
			for i := int64(1); i <= 3; i++ {
				time.Sleep(50 * time.Millisecond) // the follower is caught up, waiting
				if err := tb.PutRow(ctx, tablekit.Key("id", tablekit.Integer(i)), []tablekit.Column{{Name: "v", Value: tablekit.Integer(i)}}); err != nil {
					t.Fatal(err)
				}
				select {
				case id := <-got:
					if id != i {
						t.Fatalf("record of row %d, want %d", id, i)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("write %d: the follower was not woken (it polls every hour)", i)
				}
			}
			stop()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("FollowChangeFeed: %v", err)
			}
		})
	}
}
