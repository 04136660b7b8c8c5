package rowmodel

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

var opts = tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 2, MaxVersionOffset: 86400 * time.Second}

func latest(t *testing.T, r Row, col string) tablekit.Column {
	t.Helper()
	cols, ok := Read(&r, opts, &tablekit.ReadSpec{MaxVersions: 1}, 1_000_000)
	if !ok {
		t.Fatal("row does not exist")
	}
	for _, c := range cols {
		if c.Name == col {
			return c
		}
	}
	t.Fatalf("no column %q in %v", col, cols)
	return tablekit.Column{}
}

// An increment whose Now was taken before a concurrent increment committed
// must still leave the sum as the latest value: nothing is lost.
func TestIncrementWithAnEarlierNowLosesNothing(t *testing.T) {
	r, _, err := Update(nil, []tablekit.Change{tablekit.Increment("n", 1)}, opts, 1_000_100)
	if err != nil {
		t.Fatal(err)
	}
	r, incs, err := Update(&r, []tablekit.Change{tablekit.Increment("n", 1)}, opts, 1_000_050)
	if err != nil {
		t.Fatal(err)
	}
	if got := latest(t, r, "n"); got.Value != tablekit.Integer(2) || got.Version != 1_000_100 {
		t.Fatalf("latest after two increments: %v@%d, want Integer(2)@1000100", got.Value, got.Version)
	}
	if incs[0].Value != tablekit.Integer(2) || incs[0].Version != 1_000_100 {
		t.Fatalf("returned increment %v", incs)
	}
	// With no later version the increment is written at now.
	r, _, _ = Update(&r, []tablekit.Change{tablekit.Increment("n", 5)}, opts, 1_000_200)
	if got := latest(t, r, "n"); got.Value != tablekit.Integer(7) || got.Version != 1_000_200 {
		t.Fatalf("latest: %v@%d", got.Value, got.Version)
	}
}

func TestIncrementRefusals(t *testing.T) {
	r := Put([]tablekit.Column{{Name: "s", Value: tablekit.String("x"), Version: 10}, {Name: "n", Value: tablekit.Integer(math.MaxInt64), Version: 10}}, opts, 10)
	for _, ch := range []tablekit.Change{tablekit.Increment("s", 1), tablekit.Increment("n", 1)} {
		if _, _, err := Update(&r, []tablekit.Change{ch}, opts, 20); !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("%v: got %v, want ErrInvalidArgument", ch, err)
		}
	}
}

func TestMaxVersionsTrimAndVisibility(t *testing.T) {
	r := Put([]tablekit.Column{
		{Name: "a", Value: tablekit.Integer(1), Version: 1000},
		{Name: "a", Value: tablekit.Integer(2), Version: 2000},
		{Name: "a", Value: tablekit.Integer(3), Version: 3000},
	}, opts, 3000)
	if len(r.Cells) != 2 || r.Cells[0].Version != 3000 || r.Cells[1].Version != 2000 {
		t.Fatalf("cells after put of 3 versions with MaxVersions 2: %v", r.Cells)
	}
	ttl := opts
	ttl.TTL = 86400 * time.Second
	// Version 2000 ms is second 2; visible while 2 + 86400 > now_s.
	if !Exists(&r, ttl, 86401_999) || Exists(&r, ttl, 86403_000) {
		t.Fatal("TTL edge wrong")
	}
	if err := Check(&r, ttl, tablekit.Condition{Row: tablekit.ExpectExist}, 86403_000); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("expired row satisfied ExpectExist: %v", err)
	}
}

// readByParts is the reference AppendRead is checked against: the rules as
// the separate steps Exists, Visible, Select, the filter and Project.
func readByParts(r *Row, o tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) ([]tablekit.Column, bool) {
	if !Exists(r, o, now) {
		return nil, false
	}
	sel := Select(nil, Visible(r, o, now), spec)
	if spec.Filter != nil && !MatchFilter(spec.Filter, sel) {
		return nil, false
	}
	return Project(sel, spec.Columns), true
}

// AppendRead's single pass must give exactly what the separate steps give,
// for every mix of TTL, MaxVersions, time range, filter and projection.
// randomRow returns a random stored row of cells of the given names (0-7
// cells, Integer values, versions 0-9 s, maybe a marker), with random
// table options (1-3 versions; no TTL, or a day's TTL with now in the
// first seconds past it, so that some cells have expired) and now.
func randomRow(rnd *rand.Rand, names []string) (Row, tablekit.TableOptions, int64) {
	var r Row
	r.Marker = rnd.IntN(4) == 0
	for range rnd.IntN(8) {
		r.Cells = append(r.Cells, tablekit.Column{Name: names[rnd.IntN(3)], Value: tablekit.Integer(int64(rnd.IntN(3))), Version: int64(rnd.IntN(10)) * 1000})
	}
	SortCells(r.Cells)
	r.Cells = slices.CompactFunc(r.Cells, func(a, b tablekit.Column) bool { return a.Name == b.Name && a.Version == b.Version })
	o := tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1 + rnd.IntN(3), MaxVersionOffset: 86400 * time.Second}
	now := int64(9999)
	if rnd.IntN(2) == 0 {
		o.TTL = 86400 * time.Second
		now = int64(86400+rnd.IntN(10)) * 1000
	}
	return r, o, now
}

func TestAppendReadMatchesTheSteps(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "b", "c"}
	whole, partial := 0, 0
	for n := 0; n < 20000; n++ {
		r, o, now := randomRow(rnd, names)
		spec := &tablekit.ReadSpec{MaxVersions: 1 + rnd.IntN(3)}
		if rnd.IntN(2) == 0 {
			s := int64(rnd.IntN(10)) * 1000
			spec.TimeRange = &tablekit.TimeRange{Start: s, End: s + int64(1+rnd.IntN(5))*1000}
		}
		switch rnd.IntN(3) {
		case 1:
			spec.Filter = tablekit.SingleColumnValue(names[rnd.IntN(3)], tablekit.Equal, tablekit.Integer(int64(rnd.IntN(3))))
		case 2:
			spec.Filter = tablekit.Not(tablekit.ColumnFilter{Column: names[rnd.IntN(3)], Op: tablekit.Greater, Value: tablekit.Integer(0), AllVersions: true, FilterIfMissing: true})
		}
		switch rnd.IntN(4) {
		case 0:
			spec.Columns = names[:rnd.IntN(4)] // sorted, as a Client sends them
		case 1:
			spec.Columns = []string{"c", "a"} // unsorted, as a Tablestore request may
		}
		want, wantOK := readByParts(&r, o, spec, now)
		prefix := []tablekit.Column{{Name: "x"}}
		got, ok := AppendRead(slices.Clone(prefix), &r, o, spec, now)
		if ok != wantOK || !slices.Equal(got[:1], prefix) || !slices.Equal(got[1:], want) {
			t.Fatalf("row %v, options %+v, spec %+v, now %d:\nAppendRead %v %v\nsteps      %v %v", r, o, spec, now, got, ok, want, wantOK)
		}
		if rc, rok := Read(&r, o, spec, now); rok != wantOK || !slices.Equal(rc, want) {
			t.Fatalf("Read %v %v, steps %v %v", rc, rok, want, wantOK)
		}
		if n, nok := ReadLen(&r, o, spec, now); nok != wantOK || (wantOK && n != len(want)) {
			t.Fatalf("row %v, options %+v, spec %+v, now %d: ReadLen %d %v, steps %v %v", r, o, spec, now, n, nok, want, wantOK)
		}
		// Shape.Whole: when it says so, the read is the stored cells whole
		// (for a row that exists and passes the filter), as a store that
		// lends them assumes.
		if ShapeOf(r.Cells).Whole(&o, spec, now) {
			whole++
			exists := r.Marker || len(r.Cells) > 0
			passes := spec.Filter == nil || MatchFilter(spec.Filter, r.Cells)
			if wantOK != (exists && passes) || (wantOK && !slices.Equal(want, r.Cells)) {
				t.Fatalf("row %v, options %+v, spec %+v, now %d: Whole, but the read is %v %v", r, o, spec, now, want, wantOK)
			}
		} else if spec.TimeRange == nil && spec.Columns == nil && wantOK && len(want) == len(r.Cells) && len(r.Cells) > 0 {
			partial++ // everything returned, yet Whole said no: allowed (it is conservative), counted
		}
	}
	if whole < 1000 {
		t.Fatalf("Shape.Whole held for only %d of the rows: the check above tested too little", whole)
	}
	if partial > 0 {
		t.Fatalf("Shape.Whole refused %d rows whose read returned every stored cell", partial)
	}
}

// TestLoweredMaxVersionsStayHidden is SPEC §5: after MaxVersions is lowered,
// deleting the visible version must not bring a hidden one back.
func TestLoweredMaxVersionsStayHidden(t *testing.T) {
	r := &Row{Cells: []tablekit.Column{
		{Name: "c", Value: tablekit.String("a3"), Version: 3000},
		{Name: "c", Value: tablekit.String("a2"), Version: 2000},
		{Name: "c", Value: tablekit.String("a1"), Version: 1000},
		{Name: "d", Value: tablekit.Integer(1), Version: 1000},
	}}
	opts := tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 1 << 30 * time.Second}
	out, _, err := Update(r, []tablekit.Change{tablekit.DeleteVersion("c", 3000)}, opts, 5000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range out.Cells {
		if c.Name == "c" {
			t.Fatalf("hidden version came back: %+v", out.Cells)
		}
	}
}

// TestApplyRefusesNewerGeneration: a row written under newer options is not
// rewritten by a request that carries older ones.
func TestApplyRefusesNewerGeneration(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 1 << 30 * time.Second}, Generation: 1}
	stored := &Row{Generation: 2, Cells: []tablekit.Column{
		{Name: "c", Value: tablekit.Integer(2), Version: 2000},
		{Name: "c", Value: tablekit.Integer(1), Version: 1000},
	}}
	w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Now: 3000,
		Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: "c", Value: tablekit.Integer(3), Version: 3000}}}
	if _, _, err := Apply(stored, w); !errors.Is(err, driver.ErrStaleMeta) {
		t.Fatalf("Apply over a newer generation = %v, want ErrStaleMeta", err)
	}
	meta2 := *meta
	meta2.Generation = 2
	w.Meta = &meta2
	nr, _, err := Apply(stored, w)
	if err != nil || nr.Generation != 2 {
		t.Fatalf("Apply with the current generation = %+v, %v", nr, err)
	}
}

// TestProjectKeepsTheNamedColumns checks Project against its definition
// (a cell stays when its name is in names), for sorted and unsorted cells
// and names, repeats and names of no cell included: the side-by-side walk
// for sorted input must keep exactly what the plain search keeps.
func TestProjectKeepsTheNamedColumns(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	pool := []string{"a", "b", "c", "d", "e"}
	for n := 0; n < 5000; n++ {
		var cells []tablekit.Column
		for range rnd.IntN(7) {
			cells = append(cells, tablekit.Column{Name: pool[rnd.IntN(len(pool))], Version: int64(rnd.IntN(5))})
		}
		if rnd.IntN(4) != 0 {
			SortCells(cells)
		}
		names := []string{} // never nil: nil names keep every cell
		for range rnd.IntN(5) {
			names = append(names, pool[rnd.IntN(len(pool))])
		}
		if rnd.IntN(4) != 0 {
			slices.Sort(names)
			names = slices.Compact(names)
		}
		var want []tablekit.Column
		for _, c := range cells {
			if slices.Contains(names, c.Name) {
				want = append(want, c)
			}
		}
		in := slices.Clone(cells)
		if got := Project(in, names); !slices.Equal(got, want) {
			t.Fatalf("Project(%v, %q) = %v, want %v", cells, names, got, want)
		}
	}
	if got := Project([]tablekit.Column{{Name: "a"}}, nil); len(got) != 1 {
		t.Fatalf("Project with nil names dropped cells: %v", got)
	}
}
