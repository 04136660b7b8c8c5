package localengine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// TestShapeOrdersAsKeys: a span whose keys share bytes past its prefix
// (an entry table's: the index value, its escaped terminator, a row key's
// common start) keeps other bytes inline than those right past the prefix
// (span.go, Keys inline), and still, for every key it holds and any key at
// all, a probe of one compares with a probe of the other as the keys do;
// every key it holds is found, in order, with its pfx the span's for it;
// and its entries' pfx tell its keys apart.
func TestShapeOrdersAsKeys(t *testing.T) {
	entryKey := func(v string, id int) string {
		k0 := v + "\x00\x01" + fmt.Sprintf("user%06d", id) + "\x00\x01"
		return string(codec.EncodeKey(tablekit.Key("k0", tablekit.BinaryString(k0)).Add("k1", tablekit.BinaryString("")).
			Add("k2", tablekit.BinaryString("")).Add("k3", tablekit.BinaryString(""))))
	}
	rnd := rand.New(rand.NewPCG(7, 28))
	// Keys near the span's: each byte of one changed, cut short, or longer.
	near := func(k string) []string {
		out := []string{k[:len(k)/2], k + "\x00", k + "\xff"}
		for range 8 {
			b := []byte(k)
			i := rnd.IntN(len(b))
			b[i] = byte(rnd.IntN(256))
			out = append(out, string(b), string(b[:i+1]))
		}
		return out
	}
	check := func(t *testing.T, s *span, in []string) {
		t.Helper()
		var probes []string
		for _, k := range in {
			probes = append(probes, near(k)...)
		}
		probes = append(probes, "", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
		probes = append(probes, in...)
		for _, a := range in {
			ea := s.probe(a)
			for _, b := range probes {
				eb := s.probe(b)
				if less(ea, eb) != (a < b) || less(eb, ea) != (b < a) {
					t.Fatalf("prefix %q, shape %+v: less(%q, %q) = %v, less(%q, %q) = %v", s.pre, *s.shape, a, b, less(ea, eb), b, a, less(eb, ea))
				}
			}
		}
		var got []string
		pfx := map[uint64]bool{}
		s.rows.Scan(func(e entry) bool {
			got = append(got, e.key())
			if c, _ := s.deviation(e.key()); c >= 0 || e.pfx != s.pfxOf(e.key()) {
				t.Fatalf("%q: deviation %d, pfx %#x, the span's %#x", e.key(), c, e.pfx, s.pfxOf(e.key()))
			}
			pfx[e.pfx] = true
			return true
		})
		want := slices.Clone(in)
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Fatalf("the span holds %q, want %q", got, want)
		}
		for _, k := range in {
			if _, ok := s.rows.Get(s.probe(k)); !ok {
				t.Fatalf("%q not found", k)
			}
		}
	}
	t.Run("built", func(t *testing.T) {
		var in []string
		for _, v := range []string{"s05", "s06", "s07"} {
			for id := range 200 {
				in = append(in, entryKey(v, id))
			}
		}
		slices.Sort(in)
		items := make([]entry, len(in))
		for i, k := range in {
			items[i] = entry{rec: k, keyEnd: uint32(len(k))}
		}
		s := spanOfItems(items)
		if len(s.shape.fixed) == 0 {
			t.Fatalf("no fixed position past the prefix %q: %+v", s.pre, *s.shape)
		}
		check(t, s, in)
		n := 0
		s.rows.Scan(func(e entry) bool { n++; return true })
		distinct := map[uint64]bool{}
		s.rows.Scan(func(e entry) bool { distinct[e.pfx] = true; return true })
		if len(distinct) != n {
			t.Errorf("%d entries, %d distinct pfx: the shape %+v does not tell them apart", n, len(distinct), *s.shape)
		}
		// Keys that break the shape, stored one by one: it shrinks.
		for _, k := range []string{entryKey("s05", 1234), entryKey("s055", 3), entryKey("s06", 5)[:20], entryKey("s1", 0), "s", "r"} {
			ent := entry{rec: k, keyEnd: uint32(len(k))}
			s.admit(&ent)
			s.rows.Set(ent)
			in = append(in, k)
			check(t, s, in)
		}
	})
	t.Run("stored", func(t *testing.T) {
		// Random keys over a small alphabet stored one at a time into an
		// empty span: positions the keys share by chance are fixed, then
		// not.
		for range 20 {
			s := newSpan(newRows(), "")
			var in []string
			for range 40 {
				b := []byte("ab\x00\x01cd\x00\x01ef")
				for range 1 + rnd.IntN(3) {
					b[rnd.IntN(len(b))] = "ab\x00\x01"[rnd.IntN(4)]
				}
				k := string(b[:len(b)-rnd.IntN(3)])
				ent := entry{rec: k, keyEnd: uint32(len(k))}
				s.admit(&ent)
				s.rows.Set(ent)
				in = append(in, k)
				check(t, s, in)
			}
		}
	})
}
