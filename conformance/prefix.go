package conformance

import (
	"math"

	tk "github.com/tablekit/tablekit"
)

// SPEC §8 "Key prefixes": a prefix of 1 to all of a key's columns names the
// rows whose first columns equal it; with all columns it names the one row
// of that key, in both directions; the empty prefix names the whole table.
func testKeyPrefixes(e *env) {
	schema := tk.KeySchema{{Name: "u", Type: tk.TypeString}, {Name: "n", Type: tk.TypeInteger}, {Name: "b", Type: tk.TypeBinary}}
	t := e.create("prefix", schema, tk.TableOptions{})
	key := func(u string, n int64, b string) tk.PrimaryKey {
		return tk.Key("u", tk.String(u)).Add("n", tk.Integer(n)).Add("b", tk.Binary([]byte(b)))
	}
	// Neighbours in every column: the successor of each value is stored too.
	keys := []tk.PrimaryKey{
		key("a", 1, ""), key("a", 1, "\x00"), key("a", 1, "x"), key("a", 1, "x\x00"), key("a", 2, ""),
		key("a", math.MaxInt64, "z"), key("a\x00", math.MinInt64, ""), key("b", -1, "y"),
	}
	var rows []tk.Row
	for _, k := range keys {
		rows = append(rows, row(k, col("c", tk.Integer(1), 0)))
	}
	e.seedBatch(t, rows)
	read := func(prefix tk.PrimaryKey, opts ...tk.RangeOption) (got []tk.PrimaryKey) {
		for r, err := range t.PrefixRows(e.ctx, prefix, opts...) {
			if !e.ok("PrefixRows", err) {
				return nil
			}
			got = append(got, r.Key.Clone())
		}
		return got
	}
	for _, k := range keys {
		for _, back := range []bool{false, true} {
			var opts []tk.RangeOption
			if back {
				opts = append(opts, tk.Backward())
			}
			if got := read(k, opts...); len(got) != 1 || !got[0].Equal(k) {
				e.t.Errorf("PrefixRows(%v, backward=%v) with every key column = %v, want exactly that row", k, back, got)
			}
		}
		start, end, err := t.PrefixRange(e.ctx, k)
		if !e.ok("PrefixRange", err) {
			continue
		}
		page, err := t.GetRange(e.ctx, start, end)
		if e.ok("GetRange", err) && (len(page.Rows) != 1 || !page.Rows[0].Key.Equal(k)) {
			e.t.Errorf("GetRange of PrefixRange(%v) returned %d rows, want exactly that row", k, len(page.Rows))
		}
	}
	if got := read(tk.Key("u", tk.String("a")).Add("n", tk.Integer(1))); len(got) != 4 {
		e.t.Errorf("PrefixRows of two columns read %d rows, want 4", len(got))
	}
	if got := read(tk.Key("u", tk.String("a")), tk.Backward()); len(got) != 6 || !got[0].Equal(keys[5]) {
		e.t.Errorf("PrefixRows of one column, backward = %v, want the 6 rows of \"a\" from the highest", got)
	}
	if got := read(nil); len(got) != len(keys) {
		e.t.Errorf("PrefixRows(nil) read %d rows, want the whole table's %d", len(got), len(keys))
	}
}
