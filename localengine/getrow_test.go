package localengine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// getCells, with its shortcuts (a whole row decoded straight into the
// result, also for a projection naming every column), returns what
// rowmodel.Read of the stored row returns, for projections naming every
// column, more, fewer, and none, under TTLs and versions that hide cells.
func TestGetCellsMatchesRead(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	all := []string{"a", "b", "c", "d"}
	key := tablekit.Key("k", tablekit.String("row"))
	shortcut := 0
	for n := 0; n < 20000; n++ {
		var r rowmodel.Row
		for range 1 + rnd.IntN(6) {
			r.Cells = append(r.Cells, tablekit.Column{Name: all[rnd.IntN(3)], Value: tablekit.Integer(int64(n)), Version: int64(1+rnd.IntN(9)) * 1000})
		}
		rowmodel.SortCells(r.Cells)
		r.Cells = slices.CompactFunc(r.Cells, func(a, b tablekit.Column) bool { return a.Name == b.Name && a.Version == b.Version })
		opts := tablekit.TableOptions{MaxVersions: 1 + rnd.IntN(2), TTL: tablekit.NoExpiry}
		now := int64(10000)
		if rnd.IntN(3) == 0 {
			opts.TTL = 5e9 // 5 s: versions below 5000 are expired
		}
		spec := tablekit.ReadSpec{MaxVersions: 1 + rnd.IntN(2)}
		if rnd.IntN(5) != 0 {
			spec.Columns = []string{}
			for _, c := range all {
				if rnd.IntN(4) != 0 {
					spec.Columns = append(spec.Columns, c)
				}
			}
		}
		ent := pack(key, &r)
		got, gotOK := getCells(&ent, opts, &spec, now)
		want, wantOK := rowmodel.Read(&r, opts, &spec, now)
		if gotOK != wantOK || !slices.Equal(got, want) {
			t.Fatalf("row %v, options %+v, spec %+v: getCells %v %v, Read %v %v", r, opts, spec, got, gotOK, want, wantOK)
		}
		if spec.Columns != nil && len(spec.Columns) < len(all) && rowmodel.Covers(spec.Columns, r.Cells) {
			shortcut++
		}
	}
	if shortcut < 1000 {
		t.Fatalf("only %d reads of a projection covering the row", shortcut)
	}
}
