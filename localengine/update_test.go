package localengine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// randomValue returns a value of a random type; String and Binary values
// of lengths either side of 128 bytes, where their length's uvarint grows.
func randomValue(rnd *rand.Rand) tablekit.Value {
	switch rnd.IntN(5) {
	case 0:
		return tablekit.Integer(rnd.Int64())
	case 1:
		return tablekit.Double(rnd.Float64())
	case 2:
		return tablekit.Boolean(rnd.IntN(2) == 0)
	case 3:
		return tablekit.String(strings.Repeat("s", rnd.IntN(200)))
	}
	return tablekit.Binary([]byte(strings.Repeat("b", rnd.IntN(200))))
}

// An update applied in place gives, byte for byte, the entry that packing
// rowmodel's Update of the decoded row gives (the general path), for every
// value type and size change; an update in place refuses what it must not
// take (a column without a cell, a later cell), and the general path then
// applies. And the old entry is left as it was (rows are copy-on-write).
func TestInPlaceMatchesPack(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "field1", strings.Repeat("n", 130), "z"}
	key := tablekit.Key("k", tablekit.String("row"))
	opts := tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}, Options: opts, Generation: 2}
	done, refused := 0, 0
	for n := range 20000 {
		var r rowmodel.Row
		r.Marker = rnd.IntN(3) == 0
		r.Generation = int64(rnd.IntN(3))
		for _, name := range names {
			if rnd.IntN(4) != 0 {
				r.Cells = append(r.Cells, tablekit.Column{Name: name, Value: randomValue(rnd), Version: int64(1000 + rnd.IntN(5)*1000)})
			}
		}
		if len(r.Cells) == 0 {
			continue
		}
		old := pack(key, &r)
		before := strings.Clone(old.rec)
		var changes []tablekit.Change
		for _, i := range rnd.Perm(len(names))[:1+rnd.IntN(3)] {
			changes = append(changes, tablekit.Change{Kind: tablekit.ChangePut, Column: names[i], Value: randomValue(rnd), Version: int64(1000 + rnd.IntN(6)*1000)})
		}
		w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Key: key, Changes: changes, Now: 9000}
		got, ok := inPlace(w, meta, &old)
		_, want, keep, _, err := apply(w, meta, old, true, nil)
		if old.rec != before {
			t.Fatalf("update %d changed the stored row", n)
		}
		if !ok {
			refused++
			continue
		}
		done++
		if err != nil || !keep {
			t.Fatalf("update %d: in place, but the general path says %v, keep %v", n, err, keep)
		}
		if got != want {
			t.Fatalf("update %d of %v by %v:\nin place %s\npacked   %s", n, r, changes, describe(got), describe(want))
		}
	}
	if done < 2000 || refused < 2000 {
		t.Fatalf("%d updates in place, %d refused: the test does not cover both", done, refused)
	}
}

func describe(e entry) string {
	return fmt.Sprintf("%q keyEnd %d cellsAt %d blobAt %d cells %d marker %v gen %d shape %+v",
		e.rec, e.keyEnd, e.cellsAt, e.blobAt, e.cells, e.marker, e.gen, e.shape())
}

// A reader's cells stay what they were when an update in place replaces
// the row they came from: the update writes a new row (SPEC §11).
func TestInPlaceKeepsReadersCells(t *testing.T) {
	key := tablekit.Key("k", tablekit.String("row"))
	meta := &tablekit.TableMeta{Name: "t", Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}}
	r := rowmodel.Row{Cells: []tablekit.Column{{Name: "a", Value: tablekit.String("old-a"), Version: 1}, {Name: "b", Value: tablekit.String("old-b"), Version: 1}}}
	old := pack(key, &r)
	read := old.row(nil)
	w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Key: key, Now: 5,
		Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: "a", Value: tablekit.String("new-a"), Version: 5}}}
	next, ok := inPlace(w, meta, &old)
	if !ok {
		t.Fatal("a plain update was not applied in place")
	}
	if s, _ := read.Cells[0].Value.Str(); s != "old-a" {
		t.Fatalf("a cell read before the update became %q", s)
	}
	got := next.row(nil)
	want := []tablekit.Column{{Name: "a", Value: tablekit.String("new-a"), Version: 5}, {Name: "b", Value: tablekit.String("old-b"), Version: 1}}
	if !slices.Equal(got.Cells, want) {
		t.Fatalf("updated row %v, want %v", got.Cells, want)
	}
}
