package wire

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

func TestUvarintLen(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 1 << 21, 1<<28 + 5, math.MaxInt32, math.MaxInt64} {
		if got, want := UvarintLen(n), len(binary.AppendUvarint(nil, uint64(n))); got != want {
			t.Errorf("UvarintLen(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("x", 127), strings.Repeat("y", 128), strings.Repeat("z", 70000)} {
		b := AppendString([]byte("pre"), s)
		if len(b) != 3+StringLen(s) {
			t.Fatalf("len %d: StringLen says %d", len(b)-3, StringLen(s))
		}
		got, k := String(string(b[3:]) + "tail")
		if got != s || k != StringLen(s) {
			t.Fatalf("String of %d bytes: got %d bytes, k=%d", len(s), len(got), k)
		}
	}
}

func TestMalformed(t *testing.T) {
	for _, s := range []string{"", "\x80", "\x05abc", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"} {
		if _, k := String(s); k > 0 {
			t.Errorf("String(%q) took %d bytes", s, k)
		}
	}
	if _, k := Uvarint("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"); k > 0 {
		t.Errorf("an overflowing uvarint decoded")
	}
	if x, k := Uvarint("\xac\x02"); x != 300 || k != 2 {
		t.Errorf("Uvarint(300) = %d, %d", x, k)
	}
}
