package awsdynamodb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// TestFeedStaleWriter: a client that loaded the table's metadata before
// another enabled the feed writes records of the right kind (a put is a
// Put, an update an Update) at its own commit time (SPEC §15), not the
// stream's clock. Its deletion is a Delete at the stream's clock (a
// DeleteItem carries no attribute: see the package doc).
func TestFeedStaleWriter(t *testing.T) {
	ctx := context.Background()
	b := newMotoBackend(t)
	clock := tablekit.NewManualClock(time.Date(2001, 2, 3, 4, 5, 6, 7e6, time.UTC))
	stale, tb := newTable(t, b, clock, tablekit.TableOptions{})
	defer stale.Close()
	k := pk("a", 1)
	if err := tb.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(0)}}); err != nil {
		t.Fatal(err) // the stale client has read the metadata: feed off
	}
	other := tablekit.NewClient(newMotoBackend(t))
	defer other.Close()
	if _, err := other.Table(tb.Name()).EnableChangeFeed(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := tb.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := tb.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put("w", tablekit.Integer(2))}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := tb.DeleteRow(ctx, k); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := other.Table(tb.Name()).FollowChangeFeed(ctx, nil, tablekit.FollowOptions{UntilCaughtUp: true}, func(r tablekit.ChangeRecord) error {
		when := "stream clock"
		if r.CommitTime.Year() == 2001 {
			when = r.CommitTime.Format("15:04:05.000")
		}
		got = append(got, fmt.Sprintf("%s@%s", r.Kind, when))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "[Put@04:05:06.007 Update@04:05:07.007 Delete@stream clock]"
	if fmt.Sprint(got) != want {
		t.Errorf("records %v, want %s", got, want)
	}
}
