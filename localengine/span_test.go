package localengine

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// TestSpansUnderConcurrentWriters: on a table whose spans split beyond 8
// rows, writers insert and delete rows (so spans split, and empty or
// small ones merge) while range readers walk the table forward and
// backward, in pages of 3 and of 1,000 rows, through Rows and Scan, and
// two writers increment each of two counter rows by compare-and-set. Every
// read must return every row that existed throughout it (the "stable"
// rows, never written during the test), in strict key order (so no row
// twice); no increment may be lost; and at the end every span must hold
// only keys of its range, none but the only one empty, with the table's
// rows exactly those written.
func TestSpansUnderConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	e := New()
	e.spanRows = 8
	db := tablekit.NewClient(e)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	key := func(i int) tablekit.PrimaryKey { return tablekit.Key("k", tablekit.Integer(int64(i))) }
	put := func(i int, v int64, opts ...tablekit.WriteOption) error {
		return tbl.PutRow(ctx, key(i), []tablekit.Column{{Name: "v", Value: tablekit.Integer(v)}}, opts...)
	}
	const (
		keys    = 2000
		every   = 10 // a stable row every 10 keys; the others churn
		rounds  = 4000
		reads   = 40
		incs    = 300
		counter = 1005 // the counters' keys: counter and counter + 500
	)
	counters := []int{counter, counter + 500}
	churn := func(i int) bool { return i%every != 0 && i != counters[0] && i != counters[1] }
	for i := 0; i < keys; i += every {
		if err := put(i, -1); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range counters {
		if err := put(c, 0); err != nil {
			t.Fatal(err)
		}
	}

	var wg sync.WaitGroup
	fail := func(format string, args ...any) { t.Helper(); t.Errorf(format, args...) }
	// Churn: 2 writers, each owning half of the churn keys, insert runs of
	// rows and delete them again (runs empty whole spans, which merge).
	present := make([]atomic.Bool, keys)
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range rounds / 20 {
				from := r.IntN(keys - 40)
				var mine []int
				for i := from; i < from+40; i++ {
					if churn(i) && i%2 == w {
						mine = append(mine, i)
					}
				}
				for _, i := range mine {
					if err := put(i, int64(i)); err != nil {
						fail("put %d: %v", i, err)
						return
					}
					present[i].Store(true)
				}
				if r.IntN(3) == 0 {
					continue // leave some behind: the table grows, then shrinks
				}
				for _, i := range mine {
					if err := tbl.DeleteRow(ctx, key(i)); err != nil {
						fail("delete %d: %v", i, err)
						return
					}
					present[i].Store(false)
				}
			}
		})
	}
	// Counters: 2 writers per counter, each incrementing it by
	// compare-and-set; successes are counted.
	var won [2]atomic.Int64
	for c := range counters {
		for range 2 {
			wg.Go(func() {
				for range incs {
					row, found, err := tbl.GetRow(ctx, key(counters[c]))
					if err != nil || !found {
						fail("counter %d: %v, found %v", counters[c], err, found)
						return
					}
					v, _ := row.Columns[0].Value.Int()
					err = put(counters[c], v+1, tablekit.IfMatch(tablekit.SingleColumnValue("v", tablekit.Equal, tablekit.Integer(v)).Required()))
					switch {
					case err == nil:
						won[c].Add(1)
					case !errors.Is(err, tablekit.ErrConditionFailed):
						fail("counter %d: %v", counters[c], err)
						return
					}
				}
			})
		}
	}
	// Readers: forward and backward, small and large pages, copying and
	// not.
	type reader struct {
		name string
		back bool
		rows func() iter.Seq2[tablekit.Row, error]
	}
	lo, hi := key(-1), key(keys+1)
	readers := []reader{
		{"Rows forward, pages of 3", false, func() iter.Seq2[tablekit.Row, error] { return tbl.Rows(ctx, lo, hi, tablekit.PageSize(3)) }},
		{"Rows backward, pages of 3", true, func() iter.Seq2[tablekit.Row, error] {
			return tbl.Rows(ctx, hi, lo, tablekit.PageSize(3), tablekit.Backward())
		}},
		{"Scan forward", false, func() iter.Seq2[tablekit.Row, error] { return tbl.Scan(ctx, lo, hi) }},
		{"Scan backward", true, func() iter.Seq2[tablekit.Row, error] { return tbl.Scan(ctx, hi, lo, tablekit.Backward()) }},
	}
	for _, rd := range readers {
		wg.Go(func() {
			for range reads {
				prev, stable := -1, 0
				if rd.back {
					prev = keys + 1
				}
				for row, err := range rd.rows() {
					if err != nil {
						fail("%s: %v", rd.name, err)
						return
					}
					k64, _ := row.Key[0].Value.Int()
					k := int(k64)
					if (!rd.back && k <= prev) || (rd.back && k >= prev) {
						fail("%s: key %d after %d", rd.name, k, prev)
						return
					}
					if !churn(k) && k%every == 0 {
						if want := stable * every; !rd.back && k != want || rd.back && k != keys-every-want {
							fail("%s: stable row %d where row %d was due", rd.name, k, want)
							return
						}
						stable++
					}
					prev = k
				}
				if stable != keys/every {
					fail("%s: %d stable rows, want %d", rd.name, stable, keys/every)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	for c, k := range counters {
		row, _, err := tbl.GetRow(ctx, key(k))
		if err != nil {
			t.Fatal(err)
		}
		if v, _ := row.Columns[0].Value.Int(); v != won[c].Load() {
			t.Errorf("counter %d holds %d, but %d increments succeeded", k, v, won[c].Load())
		}
	}
	tb := e.tables["t"]
	n := tb.checkSpans(t)
	if n < 10 {
		t.Errorf("%d spans: the test did not split", n)
	}
	t.Logf("%d spans; increments won %d and %d of %d each", n, won[0].Load(), won[1].Load(), 2*incs)
	want := map[int]bool{counters[0]: true, counters[1]: true}
	for i := 0; i < keys; i++ {
		if i%every == 0 || present[i].Load() {
			want[i] = true
		}
	}
	got := 0
	for row, err := range tbl.Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		k, _ := row.Key[0].Value.Int()
		if !want[int(k)] {
			t.Errorf("row %d is there, but was deleted", k)
		}
		got++
	}
	if got != len(want) {
		t.Errorf("%d rows, want %d", got, len(want))
	}
	// Deleting every row merges the spans back into one.
	for row, err := range tbl.Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.DeleteRow(ctx, row.Key); err != nil {
			t.Fatal(err)
		}
	}
	if n := tb.checkSpans(t); n != 1 {
		t.Errorf("%d spans after deleting every row, want 1", n)
	}
}

// checkSpans checks the span list's invariants (span.go) and returns the
// number of spans: lows ascending from "", each span's keys within its
// range and beginning with its prefix, each entry's pfx the key's bytes
// past it, none empty unless it is the only one, none above the split
// size, no two neighbours both small enough to merge.
func (tb *table) checkSpans(t *testing.T) int {
	t.Helper()
	tb.lock()
	defer tb.unlock()
	if len(tb.lows) != len(tb.spans) || len(tb.lows) == 0 || tb.lows[0] != "" {
		t.Fatalf("%d bounds for %d spans; the first %q", len(tb.lows), len(tb.spans), tb.lows)
	}
	for i, s := range tb.spans {
		if i > 0 && tb.lows[i-1] >= tb.lows[i] {
			t.Errorf("bound %d %q is not above bound %d %q", i, tb.lows[i], i-1, tb.lows[i-1])
		}
		if s.rows.Len() == 0 && len(tb.spans) > 1 {
			t.Errorf("span %d of %d is empty", i, len(tb.spans))
		}
		if s.rows.Len() > tb.spanRows {
			t.Errorf("span %d holds %d entries, more than %d", i, s.rows.Len(), tb.spanRows)
		}
		if small := tb.spanRows / 8; i > 0 && s.rows.Len() <= small && tb.spans[i-1].rows.Len() <= small {
			t.Errorf("spans %d and %d hold %d and %d entries: both at most %d", i-1, i, tb.spans[i-1].rows.Len(), s.rows.Len(), small)
		}
		s.rows.Scan(func(ent entry) bool {
			k := ent.key()
			if k < tb.lows[i] || i+1 < len(tb.lows) && k >= tb.lows[i+1] {
				t.Errorf("span %d holds key %q, outside [%q, %q)", i, k, tb.lows[i], strings.Join(tb.lows[i+1:min(i+2, len(tb.lows))], ""))
			}
			if c, _ := s.deviation(k); !strings.HasPrefix(k, s.pre) || c >= 0 || ent.pfx != s.shape.bytes(k) {
				t.Errorf("span %d (prefix %q) holds key %q with pfx %#x", i, s.pre, k, ent.pfx)
			}
			return true
		})
	}
	return len(tb.spans)
}

// TestSpanOf: the span of a key is the last whose lower bound is at or
// below it.
func TestSpanOf(t *testing.T) {
	k := func(i int) string { return string(codec.EncodeKey(tablekit.Key("k", tablekit.Integer(int64(i))))) }
	tb := &table{lows: []string{"", k(10), k(20), k(30)}}
	for i, want := range map[int]int{-5: 0, 0: 0, 9: 0, 10: 1, 11: 1, 19: 1, 20: 2, 29: 2, 30: 3, 1000: 3} {
		if got := tb.spanOf(k(i)); got != want {
			t.Errorf("spanOf(%d) = %d, want %d", i, got, want)
		}
	}
	if got := (&table{lows: []string{""}}).spanOf(k(1)); got != 0 {
		t.Errorf("one span: spanOf = %d", got)
	}
}
