package gcpbigtable_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// TestOptimisticSeesInterleavedWrites lands other writes exactly between
// the optimistic path's read and its CheckAndMutateRow, in every state the
// read can find (a revision, no revision but data, nothing), and checks that
// the increment is never computed from a stale read: the row ends at the
// interleaved value + 1. A PutRow leaves no m:rev, so the first cases are
// the ones a predicate on "m:rev is absent" alone would get wrong.
func TestOptimisticSeesInterleavedWrites(t *testing.T) {
	ctx := context.Background()
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "occ", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("occ")
	raw := rawTable(t, b, "occ")
	put := func(k tablekit.PrimaryKey, n int64) func() error {
		return func() error { return tbl.PutRow(ctx, k, []tablekit.Column{{Name: "cnt", Value: tablekit.Integer(n)}}) }
	}
	update := func(k tablekit.PrimaryKey, n int64) func() error {
		return func() error {
			_, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put("cnt", tablekit.Integer(n))})
			return err
		}
	}
	del := func(k tablekit.PrimaryKey) func() error { return func() error { return tbl.DeleteRow(ctx, k) } }

	cases := []struct {
		name  string
		setup func(k tablekit.PrimaryKey) []func() error // before the increment
		// writes land after the optimistic path's first reads, one per read.
		writes func(k tablekit.PrimaryKey) []func() error
		want   int64
	}{
		{"PutRowOverPutRow", // no m:rev, visible data: the stamp catches it
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 5)} },
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 100)} }, 101},
		{"PutRowAfterStamp", // a PutRow right after the stamp removes it again
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 5)} },
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 100), put(k, 200)} }, 201},
		{"PutRowOverRevision",
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 5), update(k, 6)} },
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 100)} }, 101},
		{"UpdateOverRevision",
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 5), update(k, 6)} },
			func(k tablekit.PrimaryKey) []func() error { return []func() error{update(k, 100)} }, 101},
		{"PutRowOverNothing", // no m:rev, nothing visible
			func(k tablekit.PrimaryKey) []func() error { return nil },
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 100)} }, 101},
		{"DeleteBeforeStamp", // the stamp finds an empty row and writes nothing
			func(k tablekit.PrimaryKey) []func() error { return []func() error{put(k, 5)} },
			func(k tablekit.PrimaryKey) []func() error { return []func() error{del(k)} }, 1},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := key2("occ", int64(i))
			for _, w := range tc.setup(k) {
				if err := w(); err != nil {
					t.Fatal(err)
				}
			}
			writes := tc.writes(k)
			reads := 0
			restore := gcpbigtable.SetAfterOptimisticRead(func() {
				if reads < len(writes) {
					if err := writes[reads](); err != nil {
						t.Error(err)
					}
				}
				reads++
			})
			defer restore()
			res, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Increment("cnt", 1)})
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Increments) != 1 || !res.Increments[0].Value.Equal(tablekit.Integer(tc.want)) {
				t.Errorf("increment returned %v, want cnt = %d", res.Increments, tc.want)
			}
			row, found, err := tbl.GetRow(ctx, k)
			if err != nil || !found {
				t.Fatalf("GetRow: %v, found %v", err, found)
			}
			if v, _ := row.Get("cnt"); !v.Equal(tablekit.Integer(tc.want)) || len(row.Columns) != 1 {
				t.Errorf("row = %v, want cnt = %d only", row.Columns, tc.want)
			}
			if reads <= len(writes) {
				t.Errorf("%d optimistic reads for %d interleaved writes: some write did not land in between", reads, len(writes))
			}
			// The increment leaves a revision; a stamp never makes a row
			// out of nothing.
			r, err := raw.ReadRow(ctx, rowKeyOf(k), bigtable.RowFilter(bigtable.FamilyFilter("m")))
			if err != nil || len(r["m"]) != 1 || r["m"][0].Column != "m:rev" {
				t.Errorf("m family after the increment = %v, %v; want m:rev", r["m"], err)
			}
		})
	}
}

// rowKeyOf is the row key of key2(s, n) for an s without 0x00.
func rowKeyOf(k tablekit.PrimaryKey) string {
	s, _ := k[0].Value.Str()
	n, _ := k[1].Value.Int()
	return fmt.Sprintf("%s\x00\x01=%019d", s, n)
}

// TestStampLeavesNoRow checks the stamp's predicate: a row deleted between
// the optimistic read and the stamp stays absent (no row made of m:rev
// alone), and a conditional write then sees it absent.
func TestStampLeavesNoRow(t *testing.T) {
	ctx := context.Background()
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "st", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("st")
	k := key2("s", 1)
	if err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	first := true
	restore := gcpbigtable.SetAfterOptimisticRead(func() {
		if first {
			first = false
			if err := tbl.DeleteRow(ctx, k); err != nil {
				t.Error(err)
			}
		}
	})
	// The condition held at the read (v = 1) but the row is gone by the
	// write: the retry must see it gone and fail the condition.
	cond := tablekit.ColumnFilter{Column: "v", Op: tablekit.Equal, Value: tablekit.Integer(1), FilterIfMissing: true}
	err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(2)}}, tablekit.IfMatch(cond))
	restore()
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("conditional PutRow on a row deleted before its write: %v, want ErrConditionFailed", err)
	}
	r, err := rawTable(t, b, "st").ReadRow(ctx, rowKeyOf(k))
	if err != nil || r != nil {
		t.Errorf("raw row after the failed write = %v, %v; want none", r, err)
	}
}
