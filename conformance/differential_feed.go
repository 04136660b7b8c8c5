package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// The differential test checks the change feed too (SPEC §15): every
// table's feed is enabled on both sides when it is created (a backend
// without a feed refuses, and its feed is not compared), and once the
// sequence has run, each row's records on the backend must be those of
// the reference, in the same order (records of different rows have no
// order to compare). Feeds end with their table, so what is compared is
// the feed of each table since it was last created.
//
// A record is "as applied" (SPEC §15): a backend whose feed derives a
// record from the row before and after the write (DynamoDB Streams'
// images) may leave out a change that changed nothing, or add the
// deletion of a version MaxVersions dropped. So a row's records that are
// not the reference's word for word must match them in number and commit
// time, and applying each side's records in order must give, after every
// record, the same cells visible under the table's options at the
// record's commit time (so the kinds may differ only where that holds: an
// update of no change that a backend records as the row's put or
// deletion). The reference drops records older than its
// retention by the test's clock, which moves days; a backend whose feed
// keeps them by its own clock (moto's) may have more of a row's oldest
// records, older than that: they are applied to both sides first.

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
// returns each row's records in order.
func feedByRow(ctx context.Context, c *tablekit.Client, table string) (map[string][]tablekit.ChangeRecord, int, error) {
	rows := map[string][]tablekit.ChangeRecord{}
	n := 0
	err := c.Table(table).FollowChangeFeed(ctx, nil, tablekit.FollowOptions{UntilCaughtUp: true, Parallelism: 1}, func(r tablekit.ChangeRecord) error {
		k := fmtKey(r.Key)
		rows[k] = append(rows[k], r)
		n++
		return nil
	})
	return rows, n, err
}

// fmtRecords formats records exactly.
func fmtRecords(recs []tablekit.ChangeRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmtRecord(r)
	}
	return out
}

// sameEffect reports whether two sequences of one row's records have the
// same commit times and leave the same visible cells after
// each record (see above); why says where they part.
func sameEffect(want, got []tablekit.ChangeRecord, opts tablekit.TableOptions, horizon int64) (why string, same bool) {
	extra := len(got) - len(want)
	if extra < 0 || (extra > 0 && got[extra-1].CommitTime.UnixMilli() >= horizon) {
		return fmt.Sprintf("%d records, want %d", len(got), len(want)), false
	}
	all := tablekit.TableOptions{MaxVersions: math.MaxInt32, TTL: tablekit.NoExpiry}
	meta := &tablekit.TableMeta{Options: all, Generation: math.MaxInt64}
	apply := func(cur *rowmodel.Row, r tablekit.ChangeRecord) *rowmodel.Row {
		w := &tablekit.WriteRequest{Meta: meta, Key: r.Key, Kind: r.Kind, Now: r.CommitTime.UnixMilli(), Changes: r.Changes}
		if r.Kind == tablekit.WritePut {
			w.Changes = nil
			for _, c := range r.Changes {
				w.Columns = append(w.Columns, tablekit.Column{Name: c.Column, Value: c.Value, Version: c.Version})
			}
		}
		next, _, err := rowmodel.Apply(cur, w)
		if err != nil {
			return cur
		}
		return next
	}
	var ws, gs *rowmodel.Row
	for _, g := range got[:extra] {
		gs = apply(gs, g)
	}
	got = got[extra:]
	if gs != nil {
		c := *gs
		c.Cells = slices.Clone(gs.Cells)
		ws = &c
	}
	for i := range want {
		w, g := want[i], got[i]
		if !w.CommitTime.Equal(g.CommitTime) {
			return fmt.Sprintf("record %d is %s, want %s", i, fmtRecord(g), fmtRecord(w)), false
		}
		ws, gs = apply(ws, w), apply(gs, g)
		now := w.CommitTime.UnixMilli()
		a, b := fmt.Sprint(rowmodel.Visible(ws, opts, now)), fmt.Sprint(rowmodel.Visible(gs, opts, now))
		if a != b {
			return fmt.Sprintf("after record %d (%s; reference %s) the row's visible cells are %s, want %s", i, fmtRecord(g), fmtRecord(w), b, a), false
		}
	}
	return "", true
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
		meta, err := d.ref.clients[0].DescribeTable(ctx, tb.name)
		if err != nil {
			return fmt.Errorf("differential: describing %s: %w", tb.short, err)
		}
		var diffs []string
		for _, k := range keys {
			ws, gs := fmtRecords(want[k]), fmtRecords(got[k])
			if slices.Equal(ws, gs) {
				continue
			}
			if why, same := sameEffect(want[k], got[k], meta.Options, d.now()-tablekit.DefaultFeedRetention.Milliseconds()); !same {
				diffs = append(diffs, fmt.Sprintf("row %s: %s; reference\n    %s\n  backend\n    %s", k, why,
					strings.Join(ws, "\n    "), strings.Join(gs, "\n    ")))
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
