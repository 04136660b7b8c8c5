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
		if ent.shape() != rowmodel.ShapeOf(r.Cells) || ent.key() != codec.EncodeKeyString(key) {
			t.Fatalf("shape %+v or key %q wrong", ent.shape(), ent.key())
		}
	}
}

// TestLessOrdersAsKeys: within a span, entries compare as their keys do,
// and a probe for any key, whether or not it begins with the span's
// prefix, compares with the entries as the keys do (span.go, Keys inline).
func TestLessOrdersAsKeys(t *testing.T) {
	keys := []string{"", "a", "ab", "ab\x00", "ab\x00\x00\x00\x00\x00\x00\x00", "ab\x00\x00\x00\x00\x00\x00\x00\x00", "ab\x01",
		"abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgi", "abd", "ac", "b", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", "user00001234\x00\x01=5", "user00001234\x00\x01=6", "user0000124"}
	slices.Sort(keys)
	for _, pre := range []string{"", "a", "ab", "abcdefgh", "user0000", "zz"} {
		s := newSpan(newRows(), pre)
		var in []string // the keys the span may hold: those beginning with pre
		for _, k := range keys {
			if strings.HasPrefix(k, pre) {
				in = append(in, k)
			}
		}
		for _, a := range in {
			ea := s.probe(a)
			for _, b := range keys {
				eb := s.probe(b)
				if less(ea, eb) != (a < b) || less(eb, ea) != (b < a) {
					t.Errorf("prefix %q: less(%q, %q) = %v, less(%q, %q) = %v", pre, a, b, less(ea, eb), b, a, less(eb, ea))
				}
			}
		}
	}
}

// TestSpanPrefixShortens: storing rows whose keys share less and less of
// a span's prefix shortens it, and every entry stays findable and ordered.
func TestSpanPrefixShortens(t *testing.T) {
	s := newSpan(newRows(), "")
	keys := []string{"user00001234", "user00001235", "user0000124", "user01", "user", "usa", "b", "", "user00001234\x00"}
	for i, k := range keys {
		ent := entry{rec: k, keyEnd: uint32(len(k))}
		s.admit(&ent)
		s.rows.Set(ent)
		for _, kk := range keys[:i+1] {
			if !strings.HasPrefix(kk, s.pre) {
				t.Fatalf("after %q: prefix %q, but the span holds %q", k, s.pre, kk)
			}
			if _, ok := s.rows.Get(s.probe(kk)); !ok {
				t.Fatalf("after %q (prefix %q): %q not found", k, s.pre, kk)
			}
		}
		var got []string
		s.rows.Scan(func(e entry) bool { got = append(got, e.key()); return true })
		if !slices.IsSorted(got) || len(got) != i+1 {
			t.Fatalf("after %q: %q", k, got)
		}
	}
	if _, ok := s.rows.Get(s.probe("zzz")); ok {
		t.Fatal("a missing key was found")
	}
}
