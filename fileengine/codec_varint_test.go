package fileengine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestVarint checks varint (one load for up to 8 bytes) against
// encoding/binary on values of every length, with and without bytes after
// them, and on input that holds no varint.
func TestVarint(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	vals := []int64{0, 1, -1, 63, -64, 64, 1 << 20, 1700000000000, -1700000000000,
		math.MaxInt64, math.MinInt64, 1<<55 - 1, 1 << 55, -(1 << 55)}
	for range 20000 {
		vals = append(vals, int64(r.Uint64())>>r.IntN(64))
	}
	for _, v := range vals {
		enc := binary.AppendVarint(nil, v)
		for pad := range 10 {
			b := append(enc[:len(enc):len(enc)], make([]byte, pad)...)
			if x, k := varint(string(b)); x != v || k != len(enc) {
				t.Fatalf("%d followed by %d bytes: got %d (%d bytes), want %d (%d bytes)", v, pad, x, k, v, len(enc))
			}
		}
	}
	for _, bad := range []string{"", "\x80", "\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff",
		"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"} {
		if _, k := varint(bad); k > 0 {
			t.Errorf("varint(%q) read %d bytes, want none", bad, k)
		}
	}
}
