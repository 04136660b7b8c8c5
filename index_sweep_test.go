package tablekit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// TestIndexSweep: rows that leave an index value (an update, a delete)
// leave their entries; an index read removes them once they are older
// than the grace, and only then; a Client made WithIndexSweep(false), a
// filtered read and a table keeping several versions leave them to
// Reindex.
func TestIndexSweep(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []tablekit.ClientOption
		versions int
		filter   bool
		swept    bool
	}{
		{name: "default", versions: 1, swept: true},
		{name: "off", opts: []tablekit.ClientOption{tablekit.WithIndexSweep(false)}, versions: 1},
		{name: "filtered", versions: 1, filter: true},
		{name: "versions", versions: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := tablekit.NewManualClock(time.Now())
			db := tablekit.NewClient(localengine.New(), append([]tablekit.ClientOption{tablekit.WithClock(clock)}, tc.opts...)...)
			defer db.Close()
			spec := tablekit.IndexSpec{Name: "by_s", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeString}}}
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
				Options: tablekit.TableOptions{MaxVersions: tc.versions}, Indexes: []tablekit.IndexSpec{spec}}); err != nil {
				t.Fatal(err)
			}
			tbl := db.Table("t")
			key := func(i int) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.Integer(int64(i))) }
			for i := range 10 {
				if err := tbl.PutRow(ctx, key(i), []tablekit.Column{{Name: "s", Value: tablekit.String("pending")}}); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(time.Second) // the updates write newer versions
			for i := range 6 {         // 4 move on, 2 are deleted: 6 stale entries
				var err error
				if i < 4 {
					_, err = tbl.UpdateRow(ctx, key(i), []tablekit.Change{tablekit.Put("s", tablekit.String("done"))})
				} else {
					err = tbl.DeleteRow(ctx, key(i))
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			extra := func() int {
				t.Helper()
				rep, err := db.Reindex(ctx, "t", "by_s", true)
				if err != nil || rep.Missing != 0 {
					t.Fatalf("Reindex verify: %+v, %v", rep, err)
				}
				return rep.Extra
			}
			read := func() {
				t.Helper()
				lo := tablekit.Key("s", tablekit.String("pending")).Add("id", tablekit.InfMin)
				hi := tablekit.Key("s", tablekit.String("pending")).Add("id", tablekit.InfMax)
				opts := []tablekit.RangeOption{}
				if tc.filter {
					opts = append(opts, tablekit.WithFilter(tablekit.SingleColumnValue("s", tablekit.Equal, tablekit.String("pending"))))
				}
				res, err := db.Table("t").Index("by_s").GetRange(ctx, lo, hi, opts...)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range res.Rows {
					got = append(got, fmt.Sprint(r.Key))
				}
				if len(got) != 4 {
					t.Fatalf("index read: %v; want the 4 pending rows 6-9", got)
				}
			}
			want := 6
			if tc.versions > 1 {
				want = 2 // the 4 updated rows' "pending" is an older visible version (its entry is needed); the 2 deleted rows' are extra
			}
			read() // entries younger than the grace: kept
			if n := extra(); n != want {
				t.Fatalf("extra entries after a read within the grace: %d, want %d", n, want)
			}
			clock.Advance(2 * time.Minute)
			read()
			n := extra()
			switch {
			case tc.swept && n != 0:
				t.Fatalf("extra entries after a read past the grace: %d, want 0 (the read sweeps them)", n)
			case !tc.swept && n != want:
				t.Fatalf("extra entries after a read past the grace: %d, want %d (this read does not sweep)", n, want)
			}
			read() // and the index reads the same after the sweep
		})
	}
}
