package awsdynamodb

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit"
)

// placementKeySets are partition-key sets whose bytes repeat patterns, as
// real keys do. Each has fairKeys distinct values.
func placementKeySets() map[string][]tablekit.Value {
	sets := map[string][]tablekit.Value{}
	add := func(name string, f func(i int) tablekit.Value) {
		vs := make([]tablekit.Value, fairKeys)
		for i := range vs {
			vs[i] = f(i)
		}
		sets[name] = vs
	}
	// An index's entry keys (the Client's entry table, k0 Binary: the
	// encoded index value, then the encoded row key, each String ended by
	// 00 01), with indexbench's values "s%03d" and row keys "user%06d".
	add("index entries s%03d+user%06d", func(i int) tablekit.Value {
		return tablekit.Binary(fmt.Appendf(nil, "s%03d\x00\x01user%06d\x00\x01", i, i))
	})
	// Every byte twice: "abcabc" style.
	add(`doubled "abc"+"abc"`, func(i int) tablekit.Value {
		p := string([]byte{'a' + byte(i%26), 'a' + byte(i/26%26), 'a' + byte(i/676%26)})
		return tablekit.String(p + p)
	})
	add("sequential strings user%06d", func(i int) tablekit.Value { return tablekit.String(fmt.Sprintf("user%06d", i)) })
	add("sequential strings k%d", func(i int) tablekit.Value { return tablekit.String(fmt.Sprintf("k%d", i)) })
	add("sequential integers", func(i int) tablekit.Value { return tablekit.Integer(int64(i)) })
	add("integers ×1024", func(i int) tablekit.Value { return tablekit.Integer(int64(i) << 10) })
	add("8-byte big-endian counters", func(i int) tablekit.Value {
		return tablekit.Binary(binary.BigEndian.AppendUint64(nil, uint64(i)))
	})
	return sets
}

// fairKeys is the size of each key set: at 16 shards a fair hash puts
// 256 ± 15.5 (one standard deviation) keys on each, so ±30% is about 5
// deviations and a fair hash misses it with odds of about 1 in 10⁶ per
// shard; with 1,000 keys it would be 2.4 deviations, missed about once in
// five sets by chance alone.
const fairKeys = 4096

// unfair describes the first shard of n that placement p gives more or
// fewer than ±30% of its share of keys, or returns "".
func unfair(keys []tablekit.Value, n int, p placement) string {
	count := make([]int, n)
	for _, k := range keys {
		count[shardOf(k, n, p)]++
	}
	share := float64(len(keys)) / float64(n)
	for s, c := range count {
		if float64(c) < 0.7*share || float64(c) > 1.3*share {
			return fmt.Sprintf("shard %d of %d holds %d keys of %d, outside %.0f ± 30%% (all: %v)", s, n, c, len(keys), share, count)
		}
	}
	return ""
}

// Every shard gets a fair share of every key set under the current
// placement; the old FNV placement, which the test must be able to
// catch, leaves shards nearly empty on the patterned sets.
func TestPlacementFair(t *testing.T) {
	for name, keys := range placementKeySets() {
		for _, n := range []int{4, 8, 16} {
			if msg := unfair(keys, n, currentPlacement); msg != "" {
				t.Errorf("%s: %s", name, msg)
			}
		}
	}
	sets := placementKeySets()
	for _, name := range []string{"index entries s%03d+user%06d", `doubled "abc"+"abc"`} {
		for _, n := range []int{4, 8, 16} {
			if msg := unfair(sets[name], n, placementFNV); msg == "" {
				t.Errorf("%s at %d shards: the FNV placement passes, so the test cannot tell a skewed hash", name, n)
			} else {
				t.Logf("FNV placement, %s: %s", name, msg)
			}
		}
	}
}

// The placements are part of the storage format: rows stored under them
// must keep being found.
func TestPlacementPinned(t *testing.T) {
	for _, c := range []struct {
		pk   tablekit.Value
		n    int
		p    placement
		want int
	}{
		{tablekit.String("c42"), 8, placementFNV, 3},
		{tablekit.String("c42"), 16, placementFNV, 3},
		{tablekit.String("c42"), 8, placementSpread, 3},
		{tablekit.String("c42"), 16, placementSpread, 6},
		{tablekit.String("c42"), 4, placementSpread, 1},
		{tablekit.String("c42"), 1, placementSpread, 0},
	} {
		if got := shardOf(c.pk, c.n, c.p); got != c.want {
			t.Errorf("shardOf(%v, %d, placement %d) = %d, was %d", c.pk, c.n, c.p, got, c.want)
		}
	}
}
