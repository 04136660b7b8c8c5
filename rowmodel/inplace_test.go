package rowmodel

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
)

// Where InPlace says an update replaces cells, and each changed column has
// a cell of a version no later than the change's, Update's row is the
// stored row with exactly those cells replaced; and InPlace says so often
// enough that the check is not empty.
func TestInPlaceMatchesUpdate(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "b", "c"}
	inPlace, fallback := 0, 0
	for n := 0; n < 20000; n++ {
		r, o, now := randomRow(rnd, names)
		if rnd.IntN(4) != 0 { // mostly one version per column, the case InPlace is for
			o.MaxVersions = 1
			r.Cells = slices.CompactFunc(r.Cells, func(a, b tablekit.Column) bool { return a.Name == b.Name })
		}
		var changes []tablekit.Change
		for range 1 + rnd.IntN(3) {
			ch := tablekit.Change{Kind: tablekit.ChangePut, Column: names[rnd.IntN(3)], Value: tablekit.Integer(int64(100 + n)), Version: int64(rnd.IntN(12)) * 1000}
			if rnd.IntN(10) == 0 {
				ch = tablekit.DeleteColumn(ch.Column)
			}
			changes = append(changes, ch)
		}
		if !InPlace(ShapeOf(r.Cells), &o, changes, now) {
			fallback++
			continue
		}
		want := slices.Clone(r.Cells)
		ok := true
		for _, ch := range changes {
			lo, hi := columnSpan(want, ch.Column)
			if hi-lo != 1 || want[lo].Version > ch.Version {
				ok = false // the caller's check: Update applies
				break
			}
			want[lo] = tablekit.Column{Name: ch.Column, Value: ch.Value, Version: ch.Version}
		}
		if !ok {
			fallback++
			continue
		}
		inPlace++
		got, incs, err := Update(&r, changes, o, now)
		if err != nil || len(incs) != 0 || got.Marker != r.Marker || !slices.Equal(got.Cells, want) {
			t.Fatalf("row %v, options %+v, now %d, changes %v: Update %v %v %v, replaced in place %v", r, o, now, changes, got, incs, err, want)
		}
	}
	if inPlace < 1000 || fallback < 1000 {
		t.Fatalf("%d updates in place, %d not: the test does not cover both", inPlace, fallback)
	}
}

// InPlace refuses what it must: several versions kept, a column changed
// twice, a change other than a Put, an expired cell, an invisible version.
func TestInPlaceRefuses(t *testing.T) {
	one := tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}
	put := func(col string, v int64) tablekit.Change {
		return tablekit.Change{Kind: tablekit.ChangePut, Column: col, Value: tablekit.Integer(1), Version: v}
	}
	s := Shape{Oldest: 1000, Versions: 1}
	if !InPlace(s, &one, []tablekit.Change{put("a", 2000), put("b", 2000)}, 5000) {
		t.Fatal("a plain update is refused")
	}
	two := one
	two.MaxVersions = 2
	ttl := tablekit.TableOptions{MaxVersions: 1, TTL: 2e9} // 2 s
	for name, tc := range map[string]struct {
		s       Shape
		opts    *tablekit.TableOptions
		changes []tablekit.Change
	}{
		"MaxVersions 2":    {s, &two, []tablekit.Change{put("a", 2000)}},
		"two versions":     {Shape{Oldest: 1000, Versions: 2}, &one, []tablekit.Change{put("a", 2000)}},
		"no cells":         {Shape{}, &one, []tablekit.Change{put("a", 2000)}},
		"same column":      {s, &one, []tablekit.Change{put("a", 2000), put("a", 3000)}},
		"delete":           {s, &one, []tablekit.Change{tablekit.DeleteColumn("a")}},
		"expired cell":     {s, &ttl, []tablekit.Change{put("a", 4000)}},
		"expired version":  {Shape{Oldest: 4000, Versions: 1}, &ttl, []tablekit.Change{put("a", 1000)}},
		"no change at all": {s, &one, nil},
	} {
		if InPlace(tc.s, tc.opts, tc.changes, 5000) {
			t.Errorf("%s: InPlace", name)
		}
	}
}
