package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tablekit/tablekit"
)

var schema3 = tablekit.KeySchema{{Name: "s", Type: tablekit.TypeString}, {Name: "i", Type: tablekit.TypeInteger}, {Name: "b", Type: tablekit.TypeBinary}}

func key3(s string, i int64, b []byte) tablekit.PrimaryKey {
	return tablekit.Key("s", tablekit.String(s)).Add("i", tablekit.Integer(i)).Add("b", tablekit.Binary(b))
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func checkPair(t *testing.T, a, b tablekit.PrimaryKey) {
	t.Helper()
	ea, eb := EncodeKey(a), EncodeKey(b)
	if got, want := sign(bytes.Compare(ea, eb)), sign(tablekit.CompareKeys(a, b)); got != want {
		t.Fatalf("order of %v (%x) and %v (%x): bytes say %d, SPEC says %d", a, ea, b, eb, got, want)
	}
	for _, k := range []tablekit.PrimaryKey{a, b} {
		e := EncodeKey(k)
		if len(e) != KeySize(k) {
			t.Fatalf("Size(%v) = %d, encoding has %d bytes", k, KeySize(k), len(e))
		}
		d, err := DecodeKey(schema3, e)
		if err != nil {
			t.Fatalf("Decode(%x): %v", e, err)
		}
		if !d.Equal(k) {
			t.Fatalf("round trip of %v gave %v", k, d)
		}
	}
}

func TestEdgeOrder(t *testing.T) {
	strs := []string{"", "a", "a\x00", "a\x00\x00", "a\x01", "a\xff", "b", "\x00", "\xff"}
	ints := []int64{math.MinInt64, math.MinInt64 + 1, -1000, -1, 0, 1, 999, math.MaxInt64 - 1, math.MaxInt64}
	bins := [][]byte{nil, {0}, {0, 0}, {0, 0xff}, {1}, {0x7f}, {0x80}, {0xff}, {0xff, 0}}
	var keys []tablekit.PrimaryKey
	for _, s := range strs {
		for _, i := range ints {
			for _, b := range bins {
				keys = append(keys, key3(s, i, b))
			}
		}
	}
	for _, a := range keys {
		for _, b := range keys[:40] {
			checkPair(t, a, b)
		}
	}
	// Readable forms.
	if got := string(EncodeKey(tablekit.Key("i", tablekit.Integer(42)))); got != "=0000000000000000042" {
		t.Errorf("Integer 42 encodes as %q", got)
	}
	if got := EncodeKey(tablekit.Key("s", tablekit.String("user#7"))); string(got) != "user#7\x00\x01" {
		t.Errorf("String encodes as %q", got)
	}
}

func TestBounds(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		k := randKey(rnd)
		for col := 0; col < 3; col++ {
			for _, inf := range []tablekit.Value{tablekit.InfMin, tablekit.InfMax} {
				bound := k.Clone()
				bound[col].Value = inf
				other := randKey(rnd)
				if rnd.IntN(2) == 0 { // share the prefix before the infinite column
					copy(other[:col], k[:col])
				}
				b, exact := Bound(bound)
				if exact {
					t.Fatal("bound with infinity reported exact")
				}
				checkAppendBound(t, bound, b, exact)
				spec := tablekit.CompareKeys(other, bound) // never 0: other is finite
				e := EncodeKey(other)
				var byteSays int
				if b == nil {
					byteSays = -1
				} else {
					byteSays = sign(bytes.Compare(e, b))
					if byteSays == 0 {
						byteSays = 1 // equal to an InfMin bound's prefix: the key is above it
					}
				}
				if spec != byteSays {
					t.Fatalf("key %v vs bound %v: SPEC %d, bytes %d (bound %x)", other, bound, spec, byteSays, b)
				}
			}
		}
	}
}

// checkAppendBound checks that AppendBound agrees with Bound's b and exact,
// after a prefix it must leave alone.
func checkAppendBound(t *testing.T, k tablekit.PrimaryKey, b []byte, exact bool) {
	t.Helper()
	prefix := []byte{0xff, 'p', 0xff}
	out, ex, top := AppendBound(append([]byte(nil), prefix...), k)
	if !bytes.Equal(out[:len(prefix)], prefix) || ex != exact || top != (b == nil) ||
		(b != nil && !bytes.Equal(out[len(prefix):], b)) || (b == nil && len(out) != len(prefix)) {
		t.Fatalf("AppendBound(%v) = %x exact %v top %v; Bound gives %x exact %v", k, out, ex, top, b, exact)
	}
}

func TestAppendBoundExactAndTop(t *testing.T) {
	k := key3("a\x00", -5, []byte{0xff})
	b, exact := Bound(k)
	checkAppendBound(t, k, b, exact)
	top := tablekit.Key("s", tablekit.InfMax).Add("i", tablekit.Integer(1)).Add("b", tablekit.InfMin)
	b, exact = Bound(top)
	if b != nil {
		t.Fatalf("Bound(%v) = %x, want nil", top, b)
	}
	checkAppendBound(t, top, b, exact)
	if s := EncodeKeyString(k); s != string(EncodeKey(k)) {
		t.Fatalf("EncodeString = %q", s)
	}
}

// Encoding into a buffer with room allocates nothing: the engines encode
// lookup keys on the stack.
func TestAppendKeyAllocs(t *testing.T) {
	k := key3("user0001", math.MinInt64+7, []byte{0, 1})
	var buf [64]byte
	if n := testing.AllocsPerRun(100, func() { _ = AppendKey(buf[:0], k) }); n != 0 {
		t.Fatalf("Append allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = AppendBound(buf[:0], k) }); n != 0 {
		t.Fatalf("AppendBound allocates %v times", n)
	}
}

func randKey(r *rand.Rand) tablekit.PrimaryKey {
	alpha := []byte{0, 1, 'a', 'b', 0xff}
	pick := func() []byte {
		b := make([]byte, r.IntN(3))
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return b
	}
	ints := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
	return key3(string(pick()), ints[r.IntN(len(ints))], pick())
}

// FuzzOrder checks that encoding round-trips and that byte order equals SPEC order.
func FuzzOrder(f *testing.F) {
	f.Add("a", int64(1), []byte{0}, "a\x00", int64(-1), []byte{0xff})
	f.Add("", int64(math.MinInt64), []byte{}, "", int64(math.MaxInt64), []byte{0, 0})
	f.Fuzz(func(t *testing.T, s1 string, i1 int64, b1 []byte, s2 string, i2 int64, b2 []byte) {
		checkPair(t, key3(s1, i1, b1), key3(s2, i2, b2))
	})
}

// FuzzDecode checks that Decode never panics and that what decodes re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(EncodeKey(key3("x", 5, []byte{0, 1})))
	f.Add(binary.BigEndian.AppendUint64(nil, 7))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := DecodeKey(schema3, b)
		if err != nil {
			return
		}
		if e := EncodeKey(k); !bytes.Equal(e, b) {
			t.Fatalf("Decode(%x) = %v re-encodes to %x", b, k, e)
		}
	})
}
