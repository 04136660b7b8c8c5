package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tablekit/tablekit"
)

// The differential test checks the change feed too (SPEC §15): every
// table's feed is enabled on both sides when it is created (a backend
// without a feed refuses, and its feed is not compared), and once the
// sequence has run, each row's records on the backend must be those of
// the reference, in the same order (records of different rows have no
// order to compare). Feeds end with their table, so what is compared is
// the feed of each table since it was last created.

// enableFeed enables table's feed through c; a backend without one
// refuses, which is not an error here.
func enableFeed(ctx context.Context, c *tablekit.Client, table string) error {
	_, err := c.Table(table).EnableChangeFeed(ctx, 0)
	if errors.Is(err, tablekit.ErrUnimplemented) {
		return nil
	}
	return err
}

// feedByRow reads table's whole feed through c, parents first, and
// returns each row's records, formatted, in order.
func feedByRow(ctx context.Context, c *tablekit.Client, table string) (map[string][]string, int, error) {
	rows := map[string][]string{}
	n := 0
	err := c.Table(table).FollowChangeFeed(ctx, nil, tablekit.FollowOptions{UntilCaughtUp: true, Parallelism: 1}, func(r tablekit.ChangeRecord) error {
		k := fmtKey(r.Key)
		rows[k] = append(rows[k], fmtRecord(r))
		n++
		return nil
	})
	return rows, n, err
}

// compareFeeds compares every table's feed on the two sides, when the
// backend under test has one.
func (d *differ) compareFeeds(ctx context.Context, sutHasFeed bool) error {
	if !sutHasFeed {
		return nil
	}
	for _, tb := range d.tables {
		want, nw, err := feedByRow(ctx, d.ref.clients[0], tb.name)
		if err != nil {
			return fmt.Errorf("differential: reading the reference's change feed of %s: %w", tb.short, err)
		}
		got, ng, err := feedByRow(ctx, d.sut.clients[0], tb.name)
		if err != nil {
			return fmt.Errorf("differential: reading the backend's change feed of %s: %w", tb.short, err)
		}
		keys := make([]string, 0, len(want)+len(got))
		for k := range want {
			keys = append(keys, k)
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var diffs []string
		for _, k := range keys {
			if !slices.Equal(want[k], got[k]) {
				diffs = append(diffs, fmt.Sprintf("row %s: reference\n    %s\n  backend\n    %s", k,
					strings.Join(want[k], "\n    "), strings.Join(got[k], "\n    ")))
			}
		}
		if len(diffs) > 0 {
			return fmt.Errorf("differential: change feed of %s: %d records on the reference, %d on the backend; %d rows differ, the first:\n  %s",
				tb.short, nw, ng, len(diffs), diffs[0])
		}
		d.t.Logf("differential: change feed of %s: %d records agree", tb.short, nw)
	}
	return nil
}
