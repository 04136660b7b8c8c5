package base

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// FNV1a64 is hash/fnv's FNV-1a 64; Mix64 is splitmix64's finalizer (the
// first output of SplitMix64 seeded with 0 is its value at the golden
// gamma); Spread's values are pinned: the DynamoDB adapter stores rows by
// them.
func TestSpreadPinned(t *testing.T) {
	for _, s := range []string{"", "a", "c42", "user000001", "\x00\xff\x00\x01"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := FNV1a64([]byte(s)), h.Sum64(); got != want {
			t.Errorf("FNV1a64(%q) = %#x, hash/fnv says %#x", s, got, want)
		}
	}
	if got := Mix64(0x9e3779b97f4a7c15); got != 0xe220a8397b1dcdaf {
		t.Errorf("Mix64(golden gamma) = %#x, SplitMix64's first output is 0xe220a8397b1dcdaf", got)
	}
	for _, c := range []struct {
		s    string
		n    int
		want int
	}{
		{"", 4, 3}, {"", 8, 7}, {"", 64, 61},
		{"a", 4, 0}, {"a", 64, 0},
		{"c42", 4, 2}, {"c42", 8, 5}, {"c42", 64, 43},
		{"user000001", 4, 2}, {"user000001", 8, 4}, {"user000001", 64, 33},
		{"c42", 1, 0}, {"c42", 0, 0}, {"c42", -3, 0},
	} {
		if got := Spread([]byte(c.s), c.n); got != c.want {
			t.Errorf("Spread(%q, %d) = %d, was %d", c.s, c.n, got, c.want)
		}
	}
}

// Every bucket gets a fair share (±30%) of key sets whose bytes repeat
// patterns, where FNV-1a reduced by its low bits leaves buckets empty.
func TestSpreadFair(t *testing.T) {
	const keys = 8192 // 128 ± 11 per bucket at 64: ±30% is 3.4 deviations
	sets := map[string]func(i int) []byte{
		"doubled": func(i int) []byte { s := fmt.Sprintf("%05d", i); return []byte(s + s) },
		"entries": func(i int) []byte { return fmt.Appendf(nil, "s%03d\x00\x01user%06d\x00\x01", i, i) },
		"seq":     func(i int) []byte { return fmt.Appendf(nil, "user%06d", i) },
	}
	for name, f := range sets {
		for _, n := range []int{2, 4, 8, 16, 64} {
			count := make([]int, n)
			old := make([]int, n)
			for i := range keys {
				count[Spread(f(i), n)]++
				old[FNV1a64(f(i))%uint64(n)]++
			}
			share := float64(keys) / float64(n)
			for b, c := range count {
				if float64(c) < 0.7*share || float64(c) > 1.3*share {
					t.Errorf("%s, %d buckets: bucket %d holds %d of %d (FNV mod n: %v)", name, n, b, c, keys, old)
					break
				}
			}
		}
	}
}
