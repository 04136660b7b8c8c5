package conformance

import (
	"fmt"

	tk "github.com/tablekit/tablekit"
)

// testScanIterator: Table.Scan yields exactly what Table.Rows yields (the
// rows a RangeScanner lends where the backend has one, the pages of
// GetRange otherwise), both ways, with page sizes, limits, projections,
// versions and filters, over a 3-column key with a NUL byte in its String
// and Binary parts; and it stops when the loop does.
func testScanIterator(e *env) {
	t := e.create("scan", schema3, tk.TableOptions{MaxVersions: 2})
	old := e.now() - 60_000
	var rows []tk.Row
	for i := range int64(90) {
		k := tk.Key("a", sv(fmt.Sprintf("g\x00%d", i/12))).Add("b", iv(i%12-6)).Add("c", tk.Binary([]byte{byte(i), 0}))
		cols := []tk.Column{col("n", iv(i), old), col("s", sv(fmt.Sprint("s", i)), 0)}
		if i%3 == 0 {
			cols = append(cols, col("bin", tk.Binary([]byte{0, byte(i)}), 0))
		}
		if i%4 == 0 {
			cols = append(cols, col("n", iv(-i), old+1000))
		}
		rows = append(rows, row(k, cols...))
	}
	e.seedBatch(t, rows)
	mid := tk.Key("a", sv("g\x003")).Add("b", iv(0)).Add("c", tk.InfMin)
	for _, c := range []struct {
		what       string
		start, end tk.PrimaryKey
		opts       []tk.RangeOption
	}{
		{"PageSize(7)", t.lo(), t.hi(), []tk.RangeOption{tk.PageSize(7)}},
		{"backward PageSize(5)", t.hi(), t.lo(), []tk.RangeOption{tk.Backward(), tk.PageSize(5)}},
		{"Limit(40) PageSize(9)", t.lo(), t.hi(), []tk.RangeOption{tk.Limit(40), tk.PageSize(9)}},
		{"from the middle backward Limit(25)", mid, t.lo(), []tk.RangeOption{tk.Backward(), tk.Limit(25), tk.PageSize(8)}},
		{"to the middle", t.lo(), mid, []tk.RangeOption{tk.PageSize(10)}},
		{"Columns(s, bin)", t.lo(), t.hi(), []tk.RangeOption{tk.Columns("s", "bin"), tk.PageSize(11)}},
		{"MaxVersions(2)", t.lo(), t.hi(), []tk.RangeOption{tk.MaxVersions(2), tk.PageSize(13)}},
		{"filter n < 30", t.lo(), t.hi(), []tk.RangeOption{tk.PageSize(6),
			tk.WithFilter(tk.SingleColumnValue("n", tk.Less, iv(30)))}},
		{"backward, filter on a projected-away column", t.hi(), t.lo(), []tk.RangeOption{tk.Backward(), tk.PageSize(4), tk.Limit(12),
			tk.Columns("s"), tk.WithFilter(tk.SingleColumnValue("n", tk.GreaterEqual, iv(40)))}},
	} {
		var want, got []tk.Row
		for r, err := range t.Rows(e.ctx, c.start, c.end, c.opts...) {
			if err != nil {
				e.t.Errorf("%s: Rows: %v", c.what, err)
				break
			}
			want = append(want, r)
		}
		for r, err := range t.Scan(e.ctx, c.start, c.end, c.opts...) {
			if err != nil {
				e.t.Errorf("%s: Scan: %v", c.what, err)
				break
			}
			got = append(got, r.Clone())
		}
		if len(want) == 0 {
			e.t.Errorf("%s: Rows yielded no row", c.what)
		}
		e.diff("Scan "+c.what+" (want: what Rows yields)", viewRows(want), viewRows(got))
	}
	n := 0
	for _, err := range t.Scan(e.ctx, t.lo(), t.hi(), tk.PageSize(4)) {
		if err != nil {
			e.t.Errorf("Scan: %v", err)
			break
		}
		n++
		if n == 5 {
			break
		}
	}
	if n != 5 {
		e.t.Errorf("Scan stopped after %d rows, want 5 (the loop broke)", n)
	}
}
