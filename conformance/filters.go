package conformance

import (
	"bytes"
	"cmp"
	"fmt"
	"math"

	tk "github.com/tablekit/tablekit"
)

// SPEC §10: filters on reads. Expected results come from the suite's own
// comparison of values of one type.

func filterCases() []testCase {
	return []testCase{
		{"Operators", testFilterOperators},
		{"LatestVersionOnly", testFilterLatestVersionOnly},
		{"Composite", testFilterComposite},
		{"OnEveryRead", testFilterOnEveryRead},
	}
}

// sameTypeCompare compares two values of one type (SPEC §10).
func sameTypeCompare(a, b tk.Value) int {
	switch a.Type() {
	case tk.TypeInteger:
		x, _ := a.Int()
		y, _ := b.Int()
		return cmp.Compare(x, y)
	case tk.TypeDouble:
		x, _ := a.Float()
		y, _ := b.Float()
		return cmp.Compare(x, y)
	case tk.TypeString:
		x, _ := a.Str()
		y, _ := b.Str()
		return bytes.Compare([]byte(x), []byte(y))
	case tk.TypeBinary:
		x, _ := a.Bytes()
		y, _ := b.Bytes()
		return bytes.Compare(x, y)
	case tk.TypeBoolean:
		x, _ := a.Bool()
		y, _ := b.Bool()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	panic("conformance: not a value")
}

func opHolds(op tk.CompareOp, c int) bool {
	switch op {
	case tk.Equal:
		return c == 0
	case tk.NotEqual:
		return c != 0
	case tk.Greater:
		return c > 0
	case tk.GreaterEqual:
		return c >= 0
	case tk.Less:
		return c < 0
	case tk.LessEqual:
		return c <= 0
	}
	return false
}

var allOps = []tk.CompareOp{tk.Equal, tk.NotEqual, tk.Greater, tk.GreaterEqual, tk.Less, tk.LessEqual}

// filterTable is a table whose rows each hold column "v" of one type (row
// key = 10*group + index) and column "o", plus row 99 without "v".
type filterTable struct {
	t      tbl
	groups []filterGroup
	vals   map[int64]tk.Value // key -> v
	keys   []int64            // every key, ascending
}

type filterGroup struct {
	typ   string
	vals  []tk.Value // ascending
	probe tk.Value
}

const missingV = 99

func (e *env) makeFilterTable() *filterTable {
	ft := &filterTable{
		t: e.create("filter", schemaI, tk.TableOptions{}),
		groups: []filterGroup{
			{"Integer", []tk.Value{iv(-5), iv(7), iv(100)}, iv(7)},
			{"Double", []tk.Value{dv(-1.5), dv(7), dv(1e10)}, dv(7)},
			{"String", []tk.Value{sv("B"), sv("a"), sv("a\x00")}, sv("a")},
			{"Binary", []tk.Value{tk.Binary([]byte{0}), tk.Binary([]byte("a")), tk.Binary([]byte{0xff})}, tk.Binary([]byte("a"))},
			{"Boolean", []tk.Value{bv(false), bv(true)}, bv(true)},
		},
		vals: map[int64]tk.Value{},
	}
	var rows []tk.Row
	for g, grp := range ft.groups {
		for j, v := range grp.vals {
			k := int64(10*g + j)
			ft.vals[k] = v
			ft.keys = append(ft.keys, k)
			rows = append(rows, row(intKey(k), col("o", iv(k), 0), col("v", v, 0)))
		}
	}
	ft.keys = append(ft.keys, missingV)
	rows = append(rows, row(intKey(missingV), col("o", iv(missingV), 0)))
	e.seedBatch(ft.t, rows)
	return ft
}

// expect returns the keys that pass pred (given the row's v, or ok=false
// when the row has no v).
func (ft *filterTable) expect(pred func(v tk.Value, ok bool) bool) []string {
	return ft.expectK(func(_ int64, v tk.Value, ok bool) bool { return pred(v, ok) })
}

// expectK is expect with the row's key (which is also its column "o").
func (ft *filterTable) expectK(pred func(k int64, v tk.Value, ok bool) bool) []string {
	var out []tk.PrimaryKey
	for _, k := range ft.keys {
		v, ok := ft.vals[k]
		if pred(k, v, ok) {
			out = append(out, intKey(k))
		}
	}
	return viewKeys(out)
}

// single is the suite's own evaluation of one column filter on v.
func single(f tk.ColumnFilter) func(v tk.Value, ok bool) bool {
	return func(v tk.Value, ok bool) bool {
		if !ok {
			return !f.FilterIfMissing
		}
		return v.Type() == f.Value.Type() && opHolds(f.Op, sameTypeCompare(v, f.Value))
	}
}

func (e *env) checkFilter(what string, ft *filterTable, f tk.Filter, want []string) {
	e.t.Helper()
	rows, ok := e.rangeAll(what, ft.t, ft.t.lo(), ft.t.hi(), tk.WithFilter(f))
	if ok {
		e.diff(what, want, rowKeys(rows))
	}
}

// testFilterOperators: every operator on every type; a cell of another type
// never matches, != included; PassIfMissing both ways.
func testFilterOperators(e *env) {
	ft := e.makeFilterTable()
	for _, g := range ft.groups {
		for _, op := range allOps {
			f := tk.SingleColumnValue("v", op, g.probe)
			e.checkFilter(fmt.Sprintf("v %v %s", op, fmtValue(g.probe)), ft, f, ft.expect(single(f)))
		}
		for _, op := range []tk.CompareOp{tk.Equal, tk.NotEqual} {
			f := tk.ColumnFilter{Column: "v", Op: op, Value: g.probe, FilterIfMissing: true}
			e.checkFilter(fmt.Sprintf("v %v %s, FilterIfMissing", op, fmtValue(g.probe)), ft, f, ft.expect(single(f)))
		}
	}
	// Spelled out: != of an Integer matches only other Integers and the row without v.
	e.checkFilter("v != Integer(7)", ft, tk.SingleColumnValue("v", tk.NotEqual, iv(7)),
		viewKeys([]tk.PrimaryKey{intKey(0), intKey(2), intKey(missingV)}))
	// A filter on a column no row has: PassIfMissing decides for every row.
	all := ft.expect(func(tk.Value, bool) bool { return true })
	e.checkFilter("absent column, PassIfMissing", ft, tk.SingleColumnValue("zz", tk.Equal, iv(1)), all)
	e.checkFilter("absent column, FilterIfMissing", ft, tk.ColumnFilter{Column: "zz", Op: tk.NotEqual, Value: iv(1), FilterIfMissing: true}, nil)
	e.checkFilter("extreme Integer", ft, tk.SingleColumnValue("v", tk.Greater, iv(math.MinInt64)),
		viewKeys([]tk.PrimaryKey{intKey(0), intKey(1), intKey(2), intKey(missingV)}))
}

// testFilterLatestVersionOnly: by default only the newest selected version is
// tested; otherwise any selected visible version may match. The selection
// (MaxVersions, TimeRange) happens before the filter.
func testFilterLatestVersionOnly(e *env) {
	t := e.create("latest", schemaI, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	e.put(t, intKey(1), col("v", iv(1), T-2000), col("v", iv(5), T-1000))
	e.put(t, intKey(2), col("v", iv(5), T-2000), col("v", iv(1), T-1000))
	e.put(t, intKey(3), col("v", iv(1), T-2000), col("v", iv(2), T-1000))
	latest := tk.SingleColumnValue("v", tk.Equal, iv(5))
	anyV := tk.ColumnFilter{Column: "v", Op: tk.Equal, Value: iv(5), AllVersions: true}
	cases := []struct {
		what string
		opts []tk.RangeOption
		want []int64
	}{
		{"latest only, every version selected", []tk.RangeOption{tk.MaxVersions(3), tk.WithFilter(latest)}, []int64{1}},
		{"latest only, default read", []tk.RangeOption{tk.WithFilter(latest)}, []int64{1}},
		{"any version, every version selected", []tk.RangeOption{tk.MaxVersions(3), tk.WithFilter(anyV)}, []int64{1, 2}},
		{"any version, MaxVersions(1) selected", []tk.RangeOption{tk.MaxVersions(1), tk.WithFilter(anyV)}, []int64{1}},
		{"latest only, time range of the older versions", []tk.RangeOption{tk.Versions(T-2000, T-1000), tk.WithFilter(latest)}, []int64{2}},
		{"any version, time range of the newer versions", []tk.RangeOption{tk.Versions(T-1000, T), tk.WithFilter(anyV)}, []int64{1}},
		{"not equal, latest only", []tk.RangeOption{tk.WithFilter(tk.SingleColumnValue("v", tk.NotEqual, iv(1)))}, []int64{1, 3}},
		{"not equal, any version", []tk.RangeOption{tk.MaxVersions(3), tk.WithFilter(tk.ColumnFilter{Column: "v", Op: tk.NotEqual, Value: iv(1), AllVersions: true})}, []int64{1, 2, 3}},
	}
	for _, c := range cases {
		rows, ok := e.rangeAll(c.what, t, t.lo(), t.hi(), c.opts...)
		if !ok {
			continue
		}
		var want []tk.PrimaryKey
		for _, k := range c.want {
			want = append(want, intKey(k))
		}
		e.diff(c.what, viewKeys(want), rowKeys(rows))
	}
	e.expectRow("GetRow any version", t, intKey(2), ptr(e.want(intKey(2), col("v", iv(1), T-1000), col("v", iv(5), T-2000))), tk.MaxVersions(3), tk.WithFilter(anyV))
	e.expectRow("GetRow latest only", t, intKey(2), nil, tk.MaxVersions(3), tk.WithFilter(latest))
}

// testFilterComposite: And, Or, Not and their nesting.
func testFilterComposite(e *env) {
	ft := e.makeFilterTable()
	v := func(op tk.CompareOp, x tk.Value) tk.ColumnFilter { return tk.SingleColumnValue("v", op, x) }
	notMissing := tk.ColumnFilter{Column: "v", Op: tk.Equal, Value: iv(7), FilterIfMissing: true}
	cases := []struct {
		what string
		f    tk.Filter
		pred func(tk.Value, bool) bool
	}{
		{"And(v > -5, v < 100)", tk.And(v(tk.Greater, iv(-5)), v(tk.Less, iv(100))),
			func(x tk.Value, ok bool) bool {
				return single(v(tk.Greater, iv(-5)))(x, ok) && single(v(tk.Less, iv(100)))(x, ok)
			}},
		{"Or(v == -5, v == a)", tk.Or(v(tk.Equal, iv(-5)), v(tk.Equal, sv("a"))),
			func(x tk.Value, ok bool) bool {
				return single(v(tk.Equal, iv(-5)))(x, ok) || single(v(tk.Equal, sv("a")))(x, ok)
			}},
		{"Not(v == 7)", tk.Not(v(tk.Equal, iv(7))),
			func(x tk.Value, ok bool) bool { return !single(v(tk.Equal, iv(7)))(x, ok) }},
		{"Not(v == 7, FilterIfMissing)", tk.Not(notMissing),
			func(x tk.Value, ok bool) bool { return !single(notMissing)(x, ok) }},
		{"Not(Or(And(v >= 7, v <= 7), v == true))", tk.Not(tk.Or(tk.And(v(tk.GreaterEqual, iv(7)), v(tk.LessEqual, iv(7))), v(tk.Equal, bv(true)))),
			func(x tk.Value, ok bool) bool {
				return !((single(v(tk.GreaterEqual, iv(7)))(x, ok) && single(v(tk.LessEqual, iv(7)))(x, ok)) || single(v(tk.Equal, bv(true)))(x, ok))
			}},
		{"And(o > 10, Or(v < 7.0, v > B))", tk.And(tk.SingleColumnValue("o", tk.Greater, iv(10)), tk.Or(v(tk.Less, dv(7)), v(tk.Greater, sv("B")))), nil},
	}
	for _, c := range cases {
		var want []string
		if c.pred != nil {
			want = ft.expect(c.pred)
		} else {
			want = ft.expectK(func(k int64, x tk.Value, ok bool) bool {
				return k > 10 && (single(v(tk.Less, dv(7)))(x, ok) || single(v(tk.Greater, sv("B")))(x, ok))
			})
		}
		e.checkFilter(c.what, ft, c.f, want)
	}
}

// testFilterOnEveryRead: GetRow, BatchGetRow, GetRange and Rows all apply
// filters; a filter may read a column the projection leaves out.
func testFilterOnEveryRead(e *env) {
	ft := e.makeFilterTable()
	t := ft.t
	eq7, ne7 := tk.SingleColumnValue("v", tk.Equal, iv(7)), tk.SingleColumnValue("v", tk.NotEqual, iv(7))
	w1 := e.want(intKey(1), col("o", iv(1), 0), col("v", iv(7), 0))
	e.expectRow("GetRow, passing filter", t, intKey(1), &w1, tk.WithFilter(eq7))
	e.expectRow("GetRow, failing filter", t, intKey(1), nil, tk.WithFilter(ne7))
	e.expectRow("GetRow, filter on a column left out by the projection", t, intKey(1),
		ptr(e.want(intKey(1), col("o", iv(1), 0))), tk.Columns("o"), tk.WithFilter(eq7))
	e.expectRow("GetRow, filter fails on a column left out by the projection", t, intKey(1), nil, tk.Columns("o"), tk.WithFilter(ne7))
	res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{
		{Table: t.Name(), Key: intKey(1), Options: []tk.ReadOption{tk.WithFilter(eq7)}},
		{Table: t.Name(), Key: intKey(0), Options: []tk.ReadOption{tk.WithFilter(eq7)}},
		{Table: t.Name(), Key: intKey(11), Options: []tk.ReadOption{tk.WithFilter(eq7)}},
		{Table: t.Name(), Key: intKey(missingV), Options: []tk.ReadOption{tk.WithFilter(eq7)}},
	})
	if e.ok("BatchGetRow", err) && len(res) == 4 {
		var found []bool
		for i, r := range res {
			e.ok(fmt.Sprintf("BatchGetRow result %d", i), r.Err)
			found = append(found, r.Found)
		}
		e.diff("BatchGetRow found", []bool{true, false, false, true}, found)
		if res[0].Found {
			e.diff("BatchGetRow row", w1, viewRow(res[0].Row))
		}
	}
	want := ft.expect(single(ne7))
	var got []string
	for r, err := range t.Rows(e.ctx, t.lo(), t.hi(), tk.WithFilter(ne7), tk.PageSize(2)) {
		if !e.ok("Rows", err) {
			break
		}
		got = append(got, fmtKey(r.Key))
	}
	e.diff("Rows with a filter", want, got)
	rows, _ := e.rangeAll("GetRange backward", t, t.hi(), t.lo(), tk.Backward(), tk.Limit(2), tk.WithFilter(ne7), tk.Columns("o"))
	var gotB []string
	for i := len(rows) - 1; i >= 0; i-- {
		gotB = append(gotB, fmtKey(rows[i].Key))
		if len(rows[i].Columns) != 1 || rows[i].Columns[0].Name != "o" {
			e.t.Errorf("GetRange with Columns(o): row %v has columns %+v", fmtKey(rows[i].Key), viewRow(rows[i]).Cells)
		}
	}
	e.diff("GetRange backward with a filter", want, gotB)
}
