package gcpbigtable

import (
	"bytes"
	"math"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// pushValues are values of every type, with the edges of each order:
// empty and prefix strings, 0x00 bytes, ±0, negative and large numbers.
var pushValues = []tablekit.Value{
	tablekit.String(""), tablekit.String("a"), tablekit.String("a\x00"), tablekit.String("ab"), tablekit.String("b"), tablekit.String("é"),
	tablekit.Binary(nil), tablekit.Binary([]byte{0}), tablekit.Binary([]byte{0, 0}), tablekit.Binary([]byte{1}), tablekit.Binary([]byte{0xff}),
	tablekit.Boolean(false), tablekit.Boolean(true),
	tablekit.Integer(math.MinInt64), tablekit.Integer(-10), tablekit.Integer(-9), tablekit.Integer(-1), tablekit.Integer(0),
	tablekit.Integer(1), tablekit.Integer(9), tablekit.Integer(10), tablekit.Integer(100), tablekit.Integer(math.MaxInt64),
	tablekit.Double(math.Copysign(0, -1)), tablekit.Double(0), tablekit.Double(-1.5), tablekit.Double(0.1), tablekit.Double(1),
	tablekit.Double(1e21), tablekit.Double(2), tablekit.Double(10), tablekit.Double(-math.MaxFloat64), tablekit.Double(math.SmallestNonzeroFloat64),
}

var pushOps = []tablekit.CompareOp{tablekit.Equal, tablekit.NotEqual, tablekit.Greater, tablekit.GreaterEqual, tablekit.Less, tablekit.LessEqual}

// TestValueRange checks valueRange against SPEC §10's comparison for every
// pair of values and every operator: an exact range holds a cell's
// encoding iff the cell matches, a pre-filter range holds every cell that
// matches; and every operator on String, Binary and Boolean, and == / != on
// Integer and nonzero Double, is exact (what the package doc promises).
func TestValueRange(t *testing.T) {
	for _, v := range pushValues {
		if f, ok := v.Float(); ok && math.IsNaN(f) {
			t.Fatalf("test value %v is NaN", v)
		}
		for _, op := range pushOps {
			ranges, exact := valueRange(op, v)
			if ranges == nil {
				t.Fatalf("%v %v: not pushed", op, v)
			}
			wantExact := false
			switch v.Type() {
			case tablekit.TypeString, tablekit.TypeBinary, tablekit.TypeBoolean:
				wantExact = true
			case tablekit.TypeInteger:
				wantExact = op == tablekit.Equal || op == tablekit.NotEqual
			case tablekit.TypeDouble:
				f, _ := v.Float()
				wantExact = f != 0 && (op == tablekit.Equal || op == tablekit.NotEqual)
			}
			if exact != wantExact {
				t.Errorf("%v %v: exact = %v, want %v", op, v, exact, wantExact)
			}
			for _, c := range pushValues {
				enc := appendValue(nil, c)
				in := false
				for _, r := range ranges {
					if bytes.Compare(enc, r[0]) >= 0 && bytes.Compare(enc, r[1]) < 0 {
						in = true
					}
				}
				match := c.Type() == v.Type() && rowmodel.Holds(op, tablekit.Compare(c, v))
				if match && !in {
					t.Errorf("cell %#v %v %#v matches but its encoding %q is outside %q", c, op, v, enc, ranges)
				}
				if exact && in && !match {
					t.Errorf("cell %#v %v %#v does not match but its encoding %q is inside the exact %q", c, op, v, enc, ranges)
				}
			}
		}
	}
}
