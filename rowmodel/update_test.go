package rowmodel

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
)

// updateBySteps is the reference Update is checked against: the rules as
// separate steps on a fresh copy of the visible cells (by definition, then each
// change by insertion and deletion, then trim by the definition of what is
// kept).
func updateBySteps(r *Row, changes []tablekit.Change, o tablekit.TableOptions, now int64) (Row, []tablekit.Column, error) {
	var out Row
	if r != nil {
		out = Row{Cells: keptBySteps(r.Cells, o, now), Marker: r.Marker}
	}
	var incs []tablekit.Column
	for _, ch := range changes {
		switch ch.Kind {
		case tablekit.ChangePut:
			out.Cells = setCell(out.Cells, tablekit.Column{Name: ch.Column, Value: ch.Value, Version: ch.Version})
		case tablekit.ChangeDeleteVersion:
			out.Cells = slices.DeleteFunc(out.Cells, func(c tablekit.Column) bool { return c.Name == ch.Column && c.Version == ch.Version })
		case tablekit.ChangeDeleteColumn:
			out.Cells = slices.DeleteFunc(out.Cells, func(c tablekit.Column) bool { return c.Name == ch.Column })
		case tablekit.ChangeIncrement:
			sum, version, err := increment(&out, ch, o, now)
			if err != nil {
				return Row{}, nil, err
			}
			c := tablekit.Column{Name: ch.Column, Value: tablekit.Integer(sum), Version: version}
			out.Cells = setCell(out.Cells, c)
			incs = append(incs, c)
		}
	}
	out.Cells = keptBySteps(out.Cells, o, now)
	return out, incs, nil
}

// keptBySteps returns a new slice of the cells SPEC §5–6 keep visible: not
// expired, and among the newest MaxVersions unexpired ones of their column.
func keptBySteps(cells []tablekit.Column, o tablekit.TableOptions, now int64) []tablekit.Column {
	var kept []tablekit.Column
	n := 0
	for i, c := range cells {
		if i == 0 || c.Name != cells[i-1].Name {
			n = 0
		}
		if CellVisible(o, c.Version, now) {
			if n < o.MaxVersions {
				kept = append(kept, c)
			}
			n++
		}
	}
	return kept
}

// Update, and ApplyInto building the cells in a caller's buffer, must give
// exactly what the separate steps give, for every mix of TTL, MaxVersions
// and changes, and leave the stored row as it was.
func TestUpdateMatchesTheSteps(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	names := []string{"a", "b", "c"}
	var buf [4]tablekit.Column // small: ApplyInto must grow past it too
	for n := 0; n < 20000; n++ {
		r, o, now := randomRow(rnd, names)
		var changes []tablekit.Change
		for range 1 + rnd.IntN(3) {
			col := names[rnd.IntN(3)]
			switch rnd.IntN(5) {
			case 0, 1:
				changes = append(changes, tablekit.Change{Kind: tablekit.ChangePut, Column: col, Value: tablekit.Integer(7), Version: int64(rnd.IntN(12)) * 1000})
			case 2:
				changes = append(changes, tablekit.DeleteVersion(col, int64(rnd.IntN(10))*1000))
			case 3:
				changes = append(changes, tablekit.DeleteColumn(col))
			case 4:
				ch := tablekit.Increment(col, 1)
				ch.Version = now
				changes = append(changes, ch)
			}
		}
		stored := slices.Clone(r.Cells)
		rp := &r
		if rnd.IntN(8) == 0 {
			rp = nil // no stored row
		}
		want, wantIncs, wantErr := updateBySteps(rp, changes, o, now)
		got, incs, err := Update(rp, changes, o, now)
		if (err != nil) != (wantErr != nil) || !slices.Equal(got.Cells, want.Cells) || got.Marker != want.Marker || !slices.Equal(incs, wantIncs) {
			t.Fatalf("row %v, options %+v, now %d, changes %v:\nUpdate %v %v %v\nsteps  %v %v %v", r, o, now, changes, got, incs, err, want, wantIncs, wantErr)
		}
		if !slices.Equal(r.Cells, stored) {
			t.Fatalf("Update changed the stored row: %v, was %v", r.Cells, stored)
		}
		meta := &tablekit.TableMeta{Name: "t", Options: o}
		w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Changes: changes, Now: now}
		next, keep, _, err := ApplyInto(buf[:0], rp, w)
		wantKeep := wantErr == nil && (len(want.Cells) > 0 || want.Marker)
		if keep != wantKeep || (keep && !slices.Equal(next.Cells, want.Cells)) || (err != nil) != (wantErr != nil) {
			t.Fatalf("row %v, options %+v, now %d, changes %v: ApplyInto %v %v %v, steps %v %v", r, o, now, changes, next, keep, err, want, wantErr)
		}
		if !slices.Equal(r.Cells, stored) {
			t.Fatalf("ApplyInto changed the stored row: %v, was %v", r.Cells, stored)
		}
		if wantErr != nil && !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Fatalf("increment error %v", err)
		}
	}
}

// A put through ApplyInto builds the row in the caller's buffer when it
// fits, and is the row ApplyTo stores.
func TestApplyIntoPut(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Generation: 3, Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1}}
	cols := []tablekit.Column{{Name: "b", Value: tablekit.Integer(2), Version: 5}, {Name: "a", Value: tablekit.Integer(1), Version: 5}}
	w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WritePut, Columns: cols, Now: 5}
	var buf [4]tablekit.Column
	next, keep, _, err := ApplyInto(buf[:0], nil, w)
	if err != nil || !keep || next.Generation != 3 || &next.Cells[0] != &buf[0] {
		t.Fatalf("ApplyInto: %v %v %v; cells in the buffer: %v", next, keep, err, len(next.Cells) > 0 && &next.Cells[0] == &buf[0])
	}
	var want Row
	if keep, _, err := ApplyTo(&want, nil, w); !keep || err != nil || !slices.Equal(want.Cells, next.Cells) || want.Generation != next.Generation {
		t.Fatalf("ApplyTo %v, ApplyInto %v", want, next)
	}
	if cols[0].Name != "b" {
		t.Fatalf("the request's columns were reordered: %v", cols)
	}
}
