package gcpbigtable

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// FuzzDecodeValue feeds arbitrary cell bytes (what another tool may have
// written) to the decoder: it must never panic, and whatever it accepts
// must encode back to a value that decodes to the same value.
func FuzzDecodeValue(f *testing.F) {
	for _, v := range []tablekit.Value{
		tablekit.String(""), tablekit.String("héllo"), tablekit.Integer(math.MinInt64), tablekit.Integer(0),
		tablekit.Integer(math.MaxInt64), tablekit.Double(math.Copysign(0, -1)), tablekit.Double(math.SmallestNonzeroFloat64),
		tablekit.Double(1e308), tablekit.Boolean(true), tablekit.Boolean(false), tablekit.Binary(nil), tablekit.Binary([]byte{0, 0xff}),
	} {
		f.Add(encodeValue(v))
	}
	f.Add([]byte("i-0"))
	f.Add([]byte("i007"))
	f.Add([]byte("dNaN"))
	f.Add([]byte("q"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeValue(b)
		if err != nil {
			return
		}
		if !v.IsValid() {
			t.Fatalf("decodeValue(%q) = invalid value without error", b)
		}
		enc := encodeValue(v)
		w, err := decodeValue(enc)
		if err != nil || !w.Equal(v) {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", b, v, enc, w, err)
		}
		if typ := v.Type(); typ != tablekit.TypeDouble && !bytes.Equal(enc, b) {
			t.Fatalf("%v value %q re-encodes as %q", typ, b, enc)
		}
	})
}

// TestValueRoundTrip checks every type keeps its type and value.
func TestValueRoundTrip(t *testing.T) {
	for _, v := range []tablekit.Value{
		tablekit.String("7"), tablekit.Integer(7), tablekit.Double(7), tablekit.Boolean(true), tablekit.Binary([]byte("7")),
		tablekit.Double(math.Copysign(0, -1)), tablekit.Double(0.1), tablekit.Integer(-1),
	} {
		w, err := decodeValue(encodeValue(v))
		if err != nil || !w.Equal(v) {
			t.Errorf("%v -> %q -> %v, %v", v, encodeValue(v), w, err)
		}
	}
	for _, bad := range []string{"", "z1", "i", "i1.5", "i-0", "i01", "i+1", "d", "dInf", "dNaN", "bTRUE", "b1", "i99999999999999999999"} {
		if v, err := decodeValue([]byte(bad)); err == nil {
			t.Errorf("decodeValue(%q) = %v, want an error", bad, v)
		}
	}
}

// TestTableID checks the table-id mapping: at most 50 characters, the old
// ids for the empty incarnation, and distinct ids for distinct names and
// incarnations.
func TestTableID(t *testing.T) {
	short := "a_50_character_name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	if len(short) != 50 || TableID(short, "") != short {
		t.Fatalf("TableID(%q, \"\") = %q", short, TableID(short, ""))
	}
	long1, long2 := short+"1", short+"2"
	id1, id2 := TableID(long1, ""), TableID(long2, "")
	if len(id1) != 50 || len(id2) != 50 || id1 == id2 || id1 != TableID(long1, "") || !strings.HasPrefix(id1, short[:33]+"-") {
		t.Fatalf("TableID(%q) = %q, TableID(%q) = %q", long1, id1, long2, id2)
	}
	const inc1, inc2 = "0123456789abcdef", "fedcba9876543210"
	if got, want := TableID("orders", inc1), "orders."+inc1; got != want {
		t.Errorf("TableID(orders, %s) = %q, want %q", inc1, got, want)
	}
	name33 := short[:33]
	if got, want := TableID(name33, inc1), name33+"."+inc1; got != want || len(got) != 50 {
		t.Errorf("TableID(%q, %s) = %q, want %q", name33, inc1, got, want)
	}
	seen := map[string]string{}
	for _, name := range []string{"a", "orders", name33, name33 + "x", short, long1, long2, strings.Repeat("y", 255)} {
		for _, inc := range []string{"", inc1, inc2, "not hex, and long: " + strings.Repeat("z", 60)} {
			id := TableID(name, inc)
			if len(id) > 50 {
				t.Errorf("TableID(%q, %q) = %q: %d characters", name, inc, id, len(id))
			}
			if inc != "" && !strings.Contains(id, ".") {
				t.Errorf("TableID(%q, %q) = %q has no incarnation suffix", name, inc, id)
			}
			if inc == inc1 && !strings.HasSuffix(id, "."+inc1) {
				t.Errorf("TableID(%q, %q) = %q does not end in the incarnation", name, inc, id)
			}
			what := fmt.Sprintf("(%q, %q)", name, inc)
			if prev, ok := seen[id]; ok {
				t.Errorf("TableID%s = TableID%s = %q", what, prev, id)
			}
			seen[id] = what
		}
	}
}
