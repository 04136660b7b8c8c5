package gcpbigtable_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// TestProjections reads rows projected on no column (Columns(), and
// Columns of the key column alone), on one column, on several (as column
// ranges) and on more than 16 (a regex), by GetRow, BatchGetRow and
// GetRange, and checks every answer against the local engine's: the
// server's selection is the answer of a projected read without filter or
// time range (exact), so it must select exactly SPEC's columns, and an
// empty projection still finds the row.
func TestProjections(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	meta := tablekit.TableMeta{Name: "proj", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}, Options: tablekit.TableOptions{MaxVersions: 2}}
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	var writes []tablekit.BatchWrite
	for i := range 6 {
		var cols []tablekit.Column
		for j, n := range names {
			if (i+j)%3 != 0 { // rows hold different subsets
				cols = append(cols, tablekit.Column{Name: n, Value: tablekit.Integer(int64(i*100 + j))})
			}
		}
		if i == 5 {
			cols = nil // key-only
		}
		writes = append(writes, tablekit.BatchPut(meta.Name, tablekit.Key("k", tablekit.String(fmt.Sprint("r", i))), cols))
	}
	bt, ref := againstLocal(t, clock, meta, writes)
	projections := [][]string{{}, {"k"}, {"c03"}, {"c03", "zz"}, {"c01", "c07", "c01", "c19"}, names[:16], names, append([]string{"zz"}, names...)}
	for _, p := range projections {
		opt := tablekit.Columns(p...)
		for i := range 6 {
			key := tablekit.Key("k", tablekit.String(fmt.Sprint("r", i)))
			got, gf, err := bt.Table(meta.Name).GetRow(ctx, key, opt)
			if err != nil {
				t.Fatal(err)
			}
			want, wf, _ := ref.Table(meta.Name).GetRow(ctx, key, opt)
			if gf != wf || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("GetRow %v Columns%q: got %v %v, want %v %v", key, p, gf, got, wf, want)
			}
		}
		lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
		got, err := bt.Table(meta.Name).GetRange(ctx, lo, hi, opt, tablekit.MaxVersions(2))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ref.Table(meta.Name).GetRange(ctx, lo, hi, opt, tablekit.MaxVersions(2))
		if fmt.Sprint(got.Rows) != fmt.Sprint(want.Rows) {
			t.Errorf("GetRange Columns%q:\n got %v\nwant %v", p, got.Rows, want.Rows)
		}
		var gets []tablekit.BatchGet
		for i := range 7 {
			gets = append(gets, tablekit.BatchGet{Table: meta.Name, Key: tablekit.Key("k", tablekit.String(fmt.Sprint("r", i))), Options: []tablekit.ReadOption{opt}})
		}
		gb, err := bt.BatchGetRow(ctx, gets)
		if err != nil {
			t.Fatal(err)
		}
		wb, _ := ref.BatchGetRow(ctx, gets)
		if fmt.Sprint(gb) != fmt.Sprint(wb) {
			t.Errorf("BatchGetRow Columns%q:\n got %v\nwant %v", p, gb, wb)
		}
	}
}
