package rowmodel

import (
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// TestReveals: a DeleteVersion that keeps an older stored version of its
// column reveals; one that takes the oldest, or every version, does not,
// nor does any other change.
func TestReveals(t *testing.T) {
	const now = 1_000_000
	o := opts
	o.MaxVersions = 3
	meta := &tablekit.TableMeta{Name: "t", Options: o, Generation: 2}
	c := func(v int64) tablekit.Column {
		return tablekit.Column{Name: "c", Value: tablekit.Integer(v), Version: v}
	}
	stored := &Row{Cells: []tablekit.Column{c(now - 1000), c(now - 2000), c(now - 3000), {Name: "d", Value: tablekit.Integer(1), Version: now}}}
	SortCells(stored.Cells)
	for _, tc := range []struct {
		name    string
		changes []tablekit.Change
		want    bool
	}{
		{"delete the newest", []tablekit.Change{tablekit.DeleteVersion("c", now-1000)}, true},
		{"delete the middle", []tablekit.Change{tablekit.DeleteVersion("c", now-2000)}, true},
		{"delete the oldest", []tablekit.Change{tablekit.DeleteVersion("c", now-3000)}, false},
		{"delete a version never stored", []tablekit.Change{tablekit.DeleteVersion("c", now-500)}, false},
		{"delete the only version of d", []tablekit.Change{tablekit.DeleteVersion("d", now)}, false},
		{"delete the column", []tablekit.Change{tablekit.DeleteColumn("c")}, false},
		{"put a newer version", []tablekit.Change{tablekit.PutAt("c", tablekit.Integer(9), now)}, false},
		{"overwrite the newest", []tablekit.Change{tablekit.PutAt("c", tablekit.Integer(9), now-1000)}, false},
	} {
		w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Changes: tc.changes, Now: now}
		next, _, err := Apply(stored, w)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := Reveals(w, stored, next); got != tc.want {
			t.Errorf("%s: Reveals = %v, want %v", tc.name, got, tc.want)
		}
	}
	put := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WritePut, Columns: []tablekit.Column{c(now - 3000)}, Now: now}
	next, _, _ := Apply(stored, put)
	if Reveals(put, stored, next) {
		t.Error("a PutRow reveals")
	}
}

// TestCheckGeneration: a request as new as the table passes; an older one
// gets the stale error the Client retries on.
func TestCheckGeneration(t *testing.T) {
	m := &tablekit.TableMeta{Name: "t", Generation: 3}
	for _, cur := range []int64{0, 1, 3} {
		if err := CheckGeneration(m, cur); err != nil {
			t.Errorf("current %d: %v", cur, err)
		}
	}
	err := CheckGeneration(m, 4)
	if !errors.Is(err, driver.ErrStaleMeta) || !errors.Is(err, tablekit.ErrUnavailable) {
		t.Errorf("current 4: got %v, want driver.ErrStaleMeta and ErrUnavailable", err)
	}
}
