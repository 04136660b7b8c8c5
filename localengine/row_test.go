package localengine

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// TestPackRoundTrip checks that a packed row decodes to the row and key it
// was packed from, for every value type, names and values whose lengths
// take more than one uvarint byte, and a key-only row.
func TestPackRoundTrip(t *testing.T) {
	schema := tablekit.KeySchema{{Name: "s", Type: tablekit.TypeString}, {Name: "i", Type: tablekit.TypeInteger}, {Name: "b", Type: tablekit.TypeBinary}}
	key := tablekit.Key("s", tablekit.String("a\x00b")).Add("i", tablekit.Integer(-7)).Add("b", tablekit.Binary([]byte{0, 1, 2}))
	long := strings.Repeat("n", 300)
	cells := []tablekit.Column{
		{Name: "a", Value: tablekit.String(""), Version: 1},
		{Name: "b", Value: tablekit.Binary(make([]byte, 70000)), Version: math.MaxInt64},
		{Name: "d", Value: tablekit.Double(math.Copysign(0, -1)), Version: 3},
		{Name: "d", Value: tablekit.Double(1.5), Version: 2},
		{Name: "f", Value: tablekit.Boolean(false), Version: 4},
		{Name: "i", Value: tablekit.Integer(math.MinInt64), Version: 5},
		{Name: long, Value: tablekit.Boolean(true), Version: 0},
		{Name: "s", Value: tablekit.String("héllo"), Version: 6},
	}
	for _, r := range []rowmodel.Row{{Cells: cells, Generation: 9}, {Marker: true}, {Cells: cells[:1], Marker: true}} {
		ent := pack(key, &r)
		if got := ent.appendKey(nil, schema); !slices.EqualFunc(got, key, func(a, b tablekit.KeyPart) bool { return a.Name == b.Name && a.Value.Equal(b.Value) }) {
			t.Fatalf("key %v, want %v", got, key)
		}
		got := ent.row(nil)
		if !slices.EqualFunc(got.Cells, r.Cells, func(a, b tablekit.Column) bool {
			return a.Name == b.Name && a.Version == b.Version && a.Value.Equal(b.Value)
		}) || got.Marker != r.Marker || got.Generation != r.Generation {
			t.Fatalf("row %+v, want %+v", got, r)
		}
		if ent.shape != rowmodel.ShapeOf(r.Cells) || ent.key() != codec.EncodeKeyString(key) {
			t.Fatalf("shape %+v or key %q wrong", ent.shape, ent.key())
		}
	}
}
