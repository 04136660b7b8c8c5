package rowmodel

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
)

// Where Covers says a projection keeps every cell, the read with the
// projection returns what the read without it returns; Covers says so
// exactly when Project keeps every cell (sorted names, as a Client sends
// them, and unsorted ones).
func TestCoversMatchesProject(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	all := []string{"a", "b", "c", "d"}
	covered, not := 0, 0
	for n := 0; n < 20000; n++ {
		r, o, now := randomRow(rnd, all[:3])
		var names []string
		for _, c := range all {
			if rnd.IntN(3) != 0 {
				names = append(names, c)
			}
		}
		if rnd.IntN(4) == 0 {
			slices.Reverse(names)
		}
		want := len(Project(slices.Clone(r.Cells), names)) == len(r.Cells)
		if got := Covers(names, r.Cells); got != want {
			t.Fatalf("Covers(%v, %v) = %v, Project keeps all: %v", names, r.Cells, got, want)
		}
		if !want {
			not++
			continue
		}
		covered++
		spec := tablekit.ReadSpec{MaxVersions: 1 + rnd.IntN(3)}
		whole, ok1 := Read(&r, o, &spec, now)
		spec.Columns = names
		proj, ok2 := Read(&r, o, &spec, now)
		if ok1 != ok2 || !slices.Equal(whole, proj) {
			t.Fatalf("row %v, names %v: read %v %v, projected %v %v", r, names, whole, ok1, proj, ok2)
		}
	}
	if covered < 1000 || not < 1000 {
		t.Fatalf("%d covered, %d not", covered, not)
	}
}
