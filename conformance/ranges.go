package conformance

import (
	"fmt"
	"slices"

	tk "github.com/tablekit/tablekit"
)

// SPEC §8 GetRange: limits, tokens, bounds, read options; and resuming.

func getRangeCases() []testCase {
	return []testCase{
		{"Limit", testGetRangeLimit},
		{"Bounds", testGetRangeBounds},
		{"Empty", testGetRangeEmpty},
		{"KeyPrefixes", testKeyPrefixes},
	}
}

func resumeCases() []testCase {
	return []testCase{
		{"ForwardWithWrites", func(e *env) { testResumeWithWrites(e, false) }},
		{"BackwardWithWrites", func(e *env) { testResumeWithWrites(e, true) }},
		{"WithFilter", testResumeWithFilter},
		{"RowsIterator", testRowsIterator},
		{"ScanIterator", testScanIterator},
		{"TokenMisuse", testTokenMisuse},
	}
}

// testGetRangeLimit: Limit(n) returns at most n rows, in order, and a token
// while rows remain; following the tokens returns every row once.
func testGetRangeLimit(e *env) {
	t := e.create("limit", schemaI, tk.TableOptions{})
	var keys []tk.PrimaryKey
	var rows []tk.Row
	for i := range int64(10) {
		keys = append(keys, intKey(i))
		rows = append(rows, row(intKey(i), col("i", iv(i), 0)))
	}
	e.seedBatch(t, rows)
	all := viewKeys(keys)
	for _, n := range []int{1, 3, 10, 11, 1000} {
		for _, backward := range []bool{false, true} {
			what := fmt.Sprintf("Limit(%d) backward=%v", n, backward)
			opts := []tk.RangeOption{tk.Limit(n)}
			start, end, want := t.lo(), t.hi(), all
			if backward {
				opts = append(opts, tk.Backward())
				start, end, want = t.hi(), t.lo(), slices.Clone(all)
				slices.Reverse(want)
			}
			res, err := t.GetRange(e.ctx, start, end, opts...)
			if !e.ok(what, err) {
				continue
			}
			if len(res.Rows) == 0 || len(res.Rows) > n {
				e.t.Errorf("%s: first answer has %d rows, want 1..%d", what, len(res.Rows), n)
			}
			e.diff(what+": first answer", want[:min(len(res.Rows), len(want))], rowKeys(res.Rows))
			if len(res.Rows) < len(want) && res.Next == nil {
				e.t.Errorf("%s: %d of %d rows and no token", what, len(res.Rows), len(want))
			}
			got, _ := e.rangeAll(what, t, start, end, opts...)
			e.diff(what+": every page", want, rowKeys(got))
		}
	}
}

// testGetRangeBounds: start is inclusive and end exclusive in both
// directions; a range may start or end between stored keys.
func testGetRangeBounds(e *env) {
	t := e.create("bounds", schemaI, tk.TableOptions{})
	var keys []tk.PrimaryKey
	for i := int64(0); i < 50; i += 10 {
		keys = append(keys, intKey(i))
	}
	e.writeKeys(t, keys)
	for _, r := range [][2]int64{{10, 30}, {5, 35}, {10, 11}, {9, 10}, {-100, 0}, {40, 1000}} {
		e.checkRange("bounds", t, keys, intKey(r[0]), intKey(r[1]), false)
		e.checkRange("bounds", t, keys, intKey(r[1]), intKey(r[0]), true)
	}
}

// testGetRangeEmpty: a range with no rows returns none and no token.
func testGetRangeEmpty(e *env) {
	t := e.create("empty", schemaI, tk.TableOptions{})
	check := func(what string, start, end tk.PrimaryKey, opts ...tk.RangeOption) {
		e.t.Helper()
		res, err := t.GetRange(e.ctx, start, end, opts...)
		if e.ok(what, err) && (len(res.Rows) != 0 || res.Next != nil) {
			e.t.Errorf("%s: got %d rows and token %v, want none", what, len(res.Rows), res.Next != nil)
		}
	}
	check("empty table", t.lo(), t.hi())
	check("empty table backward", t.hi(), t.lo(), tk.Backward())
	e.put(t, intKey(10), col("a", iv(1), 0))
	check("range below the only row", t.lo(), intKey(10), tk.Limit(5))
	check("range above the only row", intKey(11), t.hi())
	check("backward range above the only row", t.hi(), intKey(10), tk.Backward())
}

// testResumeWithWrites pages through a range with Limit and, between
// pages, writes and deletes rows outside the part already read: every page
// must hold exactly the next rows of the table as it is then.
func testResumeWithWrites(e *env, backward bool) {
	t := e.create("resume", schemaI, tk.TableOptions{})
	model := map[int64]bool{}
	var rows []tk.Row
	for i := int64(10); i <= 200; i += 10 {
		model[i] = true
		rows = append(rows, row(intKey(i), col("v", iv(i), 0)))
	}
	e.seedBatch(t, rows)
	// The range: [15, 500) forward, or down from 500 to 15 (exclusive).
	lo, hi := int64(15), int64(500)
	start, end := intKey(lo), intKey(hi)
	opts := []tk.RangeOption{tk.Limit(4)}
	if backward {
		start, end = intKey(hi), intKey(lo)
		opts = append(opts, tk.Backward())
	}
	inRange := func(k int64) bool {
		if backward {
			return k <= hi && k > lo
		}
		return k >= lo && k < hi
	}
	// remaining returns the keys the range has not returned yet, in order.
	remaining := func(last *int64) []int64 {
		var out []int64
		for k := range model {
			if !inRange(k) || last != nil && (!backward && k <= *last || backward && k >= *last) {
				continue
			}
			out = append(out, k)
		}
		slices.Sort(out)
		if backward {
			slices.Reverse(out)
		}
		return out
	}
	var token []byte
	var last *int64
	var seen []int64
	for page := 0; ; page++ {
		if page > 40 {
			e.t.Fatalf("no end after 40 pages")
		}
		o := opts
		if token != nil {
			o = append(slices.Clip(opts), tk.ResumeFrom(token))
		}
		res, err := t.GetRange(e.ctx, start, end, o...)
		if !e.ok(fmt.Sprintf("page %d", page), err) {
			return
		}
		want := remaining(last)
		var got []int64
		for _, r := range res.Rows {
			v, _ := r.Key[0].Value.Int()
			got = append(got, v)
		}
		if len(want) > 0 && len(got) == 0 && res.Next == nil {
			e.t.Fatalf("page %d: no rows and no token, but %v remain", page, want)
		}
		if len(got) > 4 {
			e.t.Errorf("page %d: %d rows, more than Limit(4)", page, len(got))
		}
		if !e.diff(fmt.Sprintf("page %d (rows read so far %v)", page, seen), want[:min(len(got), len(want))], got) {
			return
		}
		seen = append(seen, got...)
		if res.Next == nil {
			if len(got) != len(want) {
				e.t.Errorf("page %d: the range ended, but %v remain", page, want[len(got):])
			}
			break
		}
		token = res.Next
		if len(got) > 0 {
			l := got[len(got)-1]
			last = &l
		}
		if last == nil {
			continue
		}
		// Writes outside the part already read: next to the last key read,
		// just beyond it, at the far end, outside the range; and delete the
		// next unread row. Also delete the last row returned (the resume
		// point itself must not be needed).
		step := int64(1)
		if backward {
			step = -1
		}
		l := *last
		next := remaining(last)
		e.put(t, intKey(l+step), col("v", iv(l+step), 0))
		model[l+step] = true
		if len(next) > 0 {
			e.ok("DeleteRow", t.DeleteRow(e.ctx, intKey(next[0])))
			delete(model, next[0])
		}
		far := hi - int64(page) - 1
		if backward {
			far = lo + int64(page) + 1
		}
		e.put(t, intKey(far), col("v", iv(far), 0))
		model[far] = true
		for _, out := range []int64{hi + 1 + int64(page), lo - 1 - int64(page)} { // outside the range
			e.put(t, intKey(out), col("v", iv(out), 0))
			model[out] = true
		}
		if page%2 == 1 {
			e.ok("DeleteRow of the resume point", t.DeleteRow(e.ctx, intKey(l)))
			delete(model, l)
		}
	}
	// Every row returned once, in order.
	sorted := slices.Clone(seen)
	slices.Sort(sorted)
	if backward {
		slices.Reverse(sorted)
	}
	e.diff("rows over all pages are in order and unique", slices.Compact(sorted), seen)
}

// testResumeWithFilter: Limit counts rows that pass the filter, and
// resuming skips and repeats none of them.
func testResumeWithFilter(e *env) {
	t := e.create("rfilter", schemaI, tk.TableOptions{})
	var rows []tk.Row
	var want []tk.PrimaryKey
	for i := range int64(30) {
		rows = append(rows, row(intKey(i), col("odd", bv(i%2 == 1), 0)))
		if i%2 == 0 {
			want = append(want, intKey(i))
		}
	}
	e.seedBatch(t, rows)
	even := tk.WithFilter(tk.SingleColumnValue("odd", tk.Equal, bv(false)))
	got, _ := e.rangeAll("filtered pages", t, t.lo(), t.hi(), tk.Limit(3), even)
	e.diff("filtered pages", viewKeys(want), rowKeys(got))
	got, _ = e.rangeAll("filtered pages backward", t, t.hi(), t.lo(), tk.Limit(4), tk.Backward(), even)
	slices.Reverse(want)
	e.diff("filtered pages backward", viewKeys(want), rowKeys(got))
}

// testRowsIterator: the iterator streams a range larger than its pages,
// both ways, honours Limit and a filter, and stops when told.
func testRowsIterator(e *env) {
	t := e.create("iter", schemaI, tk.TableOptions{})
	var rows []tk.Row
	var keys []tk.PrimaryKey
	for i := range int64(300) {
		k := intKey(i*3 - 450)
		keys = append(keys, k)
		rows = append(rows, row(k, col("even", bv(i%2 == 0), 0), col("n", iv(i), 0)))
	}
	e.seedBatch(t, rows)
	collect := func(what string, start, end tk.PrimaryKey, opts ...tk.RangeOption) []string {
		e.t.Helper()
		var got []string
		for r, err := range t.Rows(e.ctx, start, end, opts...) {
			if err != nil {
				e.t.Errorf("%s: Rows: %v", what, err)
				break
			}
			got = append(got, fmtKey(r.Key))
		}
		return got
	}
	fwd := viewKeys(expectedRange(keys, t.lo(), t.hi(), false))
	bwd := viewKeys(expectedRange(keys, t.hi(), t.lo(), true))
	e.diff("Rows PageSize(37)", fwd, collect("forward", t.lo(), t.hi(), tk.PageSize(37)))
	e.diff("Rows backward PageSize(64)", bwd, collect("backward", t.hi(), t.lo(), tk.PageSize(64), tk.Backward()))
	e.diff("Rows default page size", fwd, collect("default", t.lo(), t.hi()))
	e.diff("Rows Limit(100)", fwd[:100], collect("limit", t.lo(), t.hi(), tk.Limit(100), tk.PageSize(30)))
	sub := viewKeys(expectedRange(keys, intKey(-1), intKey(300), false))
	e.diff("Rows sub-range", sub, collect("sub-range", intKey(-1), intKey(300), tk.PageSize(50)))
	var evens []string
	for i, k := range fwd {
		if i%2 == 0 {
			evens = append(evens, k)
		}
	}
	e.diff("Rows with a filter", evens, collect("filter", t.lo(), t.hi(), tk.PageSize(16),
		tk.WithFilter(tk.SingleColumnValue("even", tk.Equal, bv(true)))))
	n := 0
	for _, err := range t.Rows(e.ctx, t.lo(), t.hi(), tk.PageSize(4)) {
		if err != nil {
			e.t.Errorf("Rows: %v", err)
			break
		}
		n++
		if n == 5 {
			break
		}
	}
	if n != 5 {
		e.t.Errorf("Rows stopped by the caller after %d rows, want 5", n)
	}
}

// testTokenMisuse: a token is refused with ErrInvalidArgument when it is
// not one, or is used with another table, direction or range.
func testTokenMisuse(e *env) {
	ta := e.create("tokA", schemaI, tk.TableOptions{})
	tb := e.create("tokB", schemaI, tk.TableOptions{})
	tc := e.create("tokC", schemaS, tk.TableOptions{})
	var rows []tk.Row
	for i := range int64(10) {
		rows = append(rows, row(intKey(i), col("v", iv(i), 0)))
	}
	e.seedBatch(ta, rows)
	e.seedBatch(tb, rows)
	e.put(tc, strKey("a"), col("v", iv(1), 0))
	res, err := ta.GetRange(e.ctx, ta.lo(), ta.hi(), tk.Limit(3))
	if !e.ok("GetRange", err) || res.Next == nil {
		e.t.Fatalf("GetRange with Limit(3) over 10 rows gave no token")
	}
	tok := res.Next
	misuse := []struct {
		what       string
		t          tbl
		start, end tk.PrimaryKey
		token      []byte
		opts       []tk.RangeOption
	}{
		{"garbage", ta, ta.lo(), ta.hi(), []byte("garbage"), nil},
		{"empty token", ta, ta.lo(), ta.hi(), []byte{}, nil},
		{"one byte", ta, ta.lo(), ta.hi(), []byte{0xff}, nil},
		{"truncated", ta, ta.lo(), ta.hi(), tok[:len(tok)-1], nil},
		{"extended", ta, ta.lo(), ta.hi(), append(slices.Clone(tok), 0), nil},
		{"another table, same schema", tb, tb.lo(), tb.hi(), tok, nil},
		{"another table, other schema", tc, tc.lo(), tc.hi(), tok, nil},
		{"other direction", ta, ta.hi(), ta.lo(), tok, []tk.RangeOption{tk.Backward()}},
		{"range that excludes the token", ta, intKey(5), ta.hi(), tok, nil},
	}
	for _, m := range misuse {
		opts := append([]tk.RangeOption{tk.ResumeFrom(m.token)}, m.opts...)
		err := e.safe(m.what, func() error { _, err := m.t.GetRange(e.ctx, m.start, m.end, opts...); return err })
		e.wantErr("GetRange with token: "+m.what, err, tk.ErrInvalidArgument, m.t.Name())
		err = e.safe(m.what, func() error {
			for _, err := range m.t.Rows(e.ctx, m.start, m.end, opts...) {
				return err
			}
			return nil
		})
		e.wantErr("Rows with token: "+m.what, err, tk.ErrInvalidArgument, m.t.Name())
	}
	// The token still works where it belongs.
	rest, _ := e.rangeAll("resume", ta, ta.lo(), ta.hi(), tk.ResumeFrom(tok))
	var want []tk.PrimaryKey
	for i := int64(3); i < 10; i++ {
		want = append(want, intKey(i))
	}
	e.diff("resume with the right table and range", viewKeys(want), rowKeys(rest))
}
