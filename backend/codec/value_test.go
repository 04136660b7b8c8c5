package codec

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// The encoding is stored by two backends: these bytes must never change.
func TestAppendIsStable(t *testing.T) {
	for _, tc := range []struct {
		v    tablekit.Value
		want []byte
	}{
		{tablekit.String("ab"), []byte{1, 2, 'a', 'b'}},
		{tablekit.Integer(-2), []byte{2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{tablekit.Double(math.Copysign(0, -1)), []byte{3, 0x80, 0, 0, 0, 0, 0, 0, 0}},
		{tablekit.Boolean(true), []byte{4, 1}},
		{tablekit.Boolean(false), []byte{4, 0}},
		{tablekit.Binary([]byte{0, 0xff}), []byte{5, 2, 0, 0xff}},
		{tablekit.String(""), []byte{1, 0}},
	} {
		if got := AppendValue([]byte{9}, tc.v); !bytes.Equal(got, append([]byte{9}, tc.want...)) {
			t.Errorf("Append(%#v) = %x, want 09%x", tc.v, got, tc.want)
		}
	}
}

func sameValue(a, b tablekit.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	if fa, ok := a.Float(); ok { // bit for bit: -0 and NaNs
		fb, _ := b.Float()
		return math.Float64bits(fa) == math.Float64bits(fb)
	}
	return a.Equal(b)
}

// Every value decodes to itself from its encoding, followed by anything.
func TestValueRoundTrip(t *testing.T) {
	for _, v := range []tablekit.Value{
		tablekit.String(""), tablekit.String("héllo\x00"), tablekit.String(strings.Repeat("x", 300)),
		tablekit.Integer(0), tablekit.Integer(math.MinInt64), tablekit.Integer(math.MaxInt64),
		tablekit.Double(math.Copysign(0, -1)), tablekit.Double(math.Inf(-1)), tablekit.Double(math.NaN()),
		tablekit.Boolean(true), tablekit.Boolean(false),
		tablekit.Binary(nil), tablekit.Binary([]byte{0, 0xff, 0x80}),
	} {
		enc := AppendValue(nil, v)
		got, n, err := DecodeValue(string(enc) + "tail")
		if err != nil || n != len(enc) || !sameValue(got, v) {
			t.Errorf("DecodeValue(%x+tail) = %v, %d, %v; want %v, %d", enc, got, n, err, v, len(enc))
		}
	}
}

// What is not a value is ErrCorrupt, with n = 0.
func TestDecodeValueCorrupt(t *testing.T) {
	for _, b := range [][]byte{
		nil, {0}, {6}, {7}, {2, 1, 2, 3}, {3}, {4}, {4, 2}, {1}, {1, 3, 'a', 'b'}, {5, 0x80},
		{5, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, // uvarint over 64 bits
		{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},       // a length beyond the input
	} {
		v, n, err := DecodeValue(string(b))
		if !errors.Is(err, ErrCorrupt) || n != 0 {
			t.Errorf("DecodeValue(%x) = %v, %d, %v; want ErrCorrupt", b, v, n, err)
		}
	}
}

// Decoding allocates nothing, whether it succeeds or fails: the engines
// decode every cell of every row they read with it.
func TestDecodeValueAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters")
	}
	good := string(AppendValue(AppendValue(nil, tablekit.String("abc")), tablekit.Double(1.5)))
	if n := testing.AllocsPerRun(100, func() {
		_, k, _ := DecodeValue(good)
		_, _, _ = DecodeValue(good[k:])
		_, _, _ = DecodeValue("\x04\x07")
	}); n != 0 {
		t.Fatalf("DecodeValue allocates %v times", n)
	}
}

// FuzzDecodeValue checks that DecodeValue never panics, never reads past
// what it reports, and that what decodes re-encodes to the same bytes.
func FuzzDecodeValue(f *testing.F) {
	for _, v := range []tablekit.Value{tablekit.String("ab"), tablekit.Integer(-2), tablekit.Double(2.5), tablekit.Boolean(true), tablekit.Binary([]byte{0})} {
		f.Add(AppendValue(nil, v))
	}
	f.Add([]byte{1, 0x80, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := DecodeValue(string(b))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || n != 0 {
				t.Fatalf("DecodeValue(%x): %d, %v", b, n, err)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("DecodeValue(%x) took %d bytes", b, n)
		}
		if e := AppendValue(nil, v); !bytes.Equal(e, b[:n]) {
			// Only a non-minimal uvarint length may differ; it must decode the same.
			w, m, err := DecodeValue(string(e))
			if err != nil || m != len(e) || !sameValue(w, v) {
				t.Fatalf("DecodeValue(%x) = %v re-encodes to %x", b[:n], v, e)
			}
		}
	})
}

// FuzzValueRoundTrip checks that every value of every type decodes to itself.
func FuzzValueRoundTrip(f *testing.F) {
	f.Add("s", int64(1), 1.5, true, []byte{0})
	f.Fuzz(func(t *testing.T, s string, i int64, d float64, bo bool, bin []byte) {
		var enc []byte
		vals := []tablekit.Value{tablekit.String(s), tablekit.Integer(i), tablekit.Double(d), tablekit.Boolean(bo), tablekit.Binary(bin)}
		for _, v := range vals {
			enc = AppendValue(enc, v)
		}
		rest := string(enc)
		for _, want := range vals {
			got, n, err := DecodeValue(rest)
			if err != nil || !sameValue(got, want) {
				t.Fatalf("decoded %v, %v; want %v", got, err, want)
			}
			rest = rest[n:]
		}
		if rest != "" {
			t.Fatalf("%d bytes left", len(rest))
		}
	})
}

// TestValueSize checks ValueSize against AppendValue for every type, at the
// lengths where the String and Binary length's uvarint grows a byte.
func TestValueSize(t *testing.T) {
	vals := []tablekit.Value{tablekit.Integer(-3), tablekit.Double(1.5), tablekit.Boolean(true), tablekit.Boolean(false)}
	for _, n := range []int{0, 1, 127, 128, 16383, 16384} {
		s := strings.Repeat("v", n)
		vals = append(vals, tablekit.String(s), tablekit.Binary([]byte(s)))
	}
	for _, v := range vals {
		if got, want := ValueSize(v), len(AppendValue(nil, v)); got != want {
			t.Errorf("ValueSize(%v of %d bytes) = %d, AppendValue wrote %d", v.Type(), len(Bytes(v)), got, want)
		}
	}
}
