package faults_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
)

// TestIndexWriteFaults fails each step of a write of an indexed table in
// turn (the guard's read, the entry put, the row write, each answer lost):
// no index read ever returns a row whose values do not match, none misses
// a row, and a reindex past the grace period leaves the index exact. It
// runs over the local engine, whose WriteIndexed takes a row write and its
// entries in one call (the wrapper forwards it, faults decided for each
// row), and over the same engine without it (the ordered calls).
func TestIndexWriteFaults(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inner    tablekit.Backend
		together bool
	}{{"IndexedWrite", localengine.New(), true}, {"ordered", requiredOnly{localengine.New()}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tablekit.CapabilitiesOf(faults.New(0).Wrap(tc.inner)).IndexedWrite; got != tc.together {
				t.Fatalf("CapabilitiesOf(wrapper).IndexedWrite = %v, want %v", got, tc.together)
			}
			testIndexWriteFaults(t, tc.inner)
		})
	}
}

// requiredOnly is a backend with the required methods only.
type requiredOnly struct{ tablekit.Backend }

func testIndexWriteFaults(t *testing.T, inner tablekit.Backend) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	boot := tablekit.NewClient(inner, tablekit.WithClock(clock))
	specs := []tablekit.IndexSpec{
		{Name: "by_s", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeString}}, Include: []string{"n"}},
		{Name: "by_ab", Columns: []tablekit.KeyColumn{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeString}}},
	}
	if err := boot.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}, Indexes: specs}); err != nil {
		t.Fatal(err)
	}
	m, err := boot.DescribeTable(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	storeS, storeAB := m.Indexes[0].Storage, m.Indexes[1].Storage
	steps := []struct {
		name string
		rule faults.Rule
	}{
		{"entry put fails", faults.Rule{Ops: faults.OpWrites, Table: storeS, Err: tablekit.ErrUnavailable, Times: 1}},
		{"entry put lost", faults.Rule{Ops: faults.OpWrites, Table: storeS, Lost: true, Times: 1}},
		{"two-column entry put fails", faults.Rule{Ops: faults.OpWrites, Table: storeAB, Err: tablekit.ErrUnavailable, Times: 1}},
		{"row write fails", faults.Rule{Ops: faults.OpWrites, Table: "t", Err: tablekit.ErrUnavailable, Times: 1}},
		{"row write lost", faults.Rule{Ops: faults.OpWrites, Table: "t", Lost: true, Times: 1}},
		{"guard read fails", faults.Rule{Ops: faults.OpGetRow, Table: "t", Err: tablekit.ErrUnavailable, Times: 1}},
	}
	for i, step := range steps {
		inj := faults.New(uint64(i), step.rule)
		inj.Disable()
		db := tablekit.NewClient(inj.Wrap(inner), tablekit.WithClock(clock), tablekit.WithIndexGrace(time.Minute))
		tbl := db.Table("t")
		for id := range 4 {
			key := tablekit.Key("id", tablekit.Integer(int64(id)))
			inj.Enable()
			var err error
			switch id % 4 {
			case 0:
				err = tbl.PutRow(ctx, key, []tablekit.Column{{Name: "s", Value: tablekit.String(step.name)}, {Name: "n", Value: tablekit.Integer(int64(i))}, {Name: "a", Value: tablekit.String("x")}, {Name: "b", Value: tablekit.String(step.name)}})
			case 1:
				_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("s", tablekit.String(step.name)), tablekit.Put("a", tablekit.String(step.name))})
			case 2:
				_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("b", tablekit.String(step.name))})
			case 3:
				err = tbl.DeleteRow(ctx, key)
			}
			inj.Disable()
			t.Logf("%s: write %d: %v", step.name, id, err)
			checkIndexes(t, db, step.name)
		}
		if inj.TotalHits() == 0 {
			t.Errorf("%s: the fault never hit", step.name)
		}
	}
	clock.Advance(2 * time.Minute)
	for _, name := range []string{"by_s", "by_ab"} {
		rep, err := boot.Reindex(ctx, "t", name, false)
		if err != nil || rep.Missing != 0 {
			t.Fatalf("Reindex %s: %+v, %v; want no missing entry", name, rep, err)
		}
		t.Logf("Reindex %s: %+v", name, rep)
		rep, err = boot.Reindex(ctx, "t", name, true)
		if err != nil || !rep.Exact() {
			t.Fatalf("Reindex %s after repair: %+v, %v; want exact", name, rep, err)
		}
	}
	checkIndexes(t, boot, "after repair")
}

// checkIndexes compares both indexes with what the rows say they must hold.
func checkIndexes(t *testing.T, db *tablekit.Client, what string) {
	t.Helper()
	ctx := context.Background()
	var wantS, wantAB []string
	for r, err := range db.Table("t").Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := r.Get("s"); ok {
			wantS = append(wantS, tablekit.Key("s", s).Add("id", r.Key[0].Value).String())
		}
		a, okA := r.Get("a")
		b, okB := r.Get("b")
		if okA && okB {
			wantAB = append(wantAB, tablekit.Key("a", a).Add("b", b).Add("id", r.Key[0].Value).String())
		}
	}
	for _, c := range []struct {
		index string
		lo    tablekit.PrimaryKey
		want  []string
	}{
		{"by_s", tablekit.Key("s", tablekit.InfMin).Add("id", tablekit.InfMin), wantS},
		{"by_ab", tablekit.Key("a", tablekit.InfMin).Add("b", tablekit.InfMin).Add("id", tablekit.InfMin), wantAB},
	} {
		hi := make(tablekit.PrimaryKey, len(c.lo))
		for i, p := range c.lo {
			hi[i] = tablekit.KeyPart{Name: p.Name, Value: tablekit.InfMax}
		}
		var got []string
		for r, err := range db.Table("t").Index(c.index).Rows(ctx, c.lo, hi) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r.Key.String())
		}
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: index %s holds\n%v\nthe rows say\n%v", what, c.index, got, c.want)
		}
	}
}

// TestIndexReadFaults: a failing verification read fails the index read;
// it never returns an unverified row.
func TestIndexReadFaults(t *testing.T) {
	ctx := context.Background()
	inner := localengine.New()
	db := tablekit.NewClient(inner)
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
		Indexes: []tablekit.IndexSpec{{Name: "by_s", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeString}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("t").PutRow(ctx, tablekit.Key("id", tablekit.Integer(1)), []tablekit.Column{{Name: "s", Value: tablekit.String("x")}}); err != nil {
		t.Fatal(err)
	}
	inj := faults.New(1, faults.Rule{Ops: faults.OpReads, Table: "t", Err: tablekit.ErrUnavailable})
	fdb := tablekit.NewClient(inj.Wrap(inner))
	n := 0
	var last error
	for _, err := range fdb.Table("t").Index("by_s").Rows(ctx, tablekit.Key("s", tablekit.InfMin).Add("id", tablekit.InfMin), tablekit.Key("s", tablekit.InfMax).Add("id", tablekit.InfMax)) {
		if err == nil {
			n++
		}
		last = err
	}
	if n != 0 || last == nil {
		t.Fatalf("an index read whose row reads fail returned %d rows, error %v", n, last)
	}
}
