package conformance

import (
	"math"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §8: the single-row operations.

func putRowCases() []testCase {
	return []testCase{
		{"ReplacesWholeRow", testPutRowReplaces},
	}
}

func updateRowCases() []testCase {
	return []testCase{
		{"Changes", testUpdateRowChanges},
		{"RowDisappears", testUpdateRowDisappears},
	}
}

func incrementCases() []testCase {
	return []testCase{
		{"AbsentIsZero", testIncrementAbsent},
		{"NonInteger", testIncrementNonInteger},
		{"Overflow", testIncrementOverflow},
		{"InBatch", testIncrementInBatch},
	}
}

func deleteRowCases() []testCase {
	return []testCase{
		{"Delete", testDeleteRow},
	}
}

func getRowCases() []testCase {
	return []testCase{
		{"Missing", testGetRowMissing},
		{"Projection", testGetRowProjection},
		{"VersionsAndTimeRange", testGetRowVersions},
	}
}

// testPutRowReplaces: PutRow removes every earlier column and version.
func testPutRowReplaces(e *env) {
	t := e.create("put", schemaS, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	k := strKey("r")
	e.update(t, k, tk.PutAt("a", iv(1), T-2000), tk.PutAt("a", iv(2), T-1000), tk.PutAt("b", sv("x"), T-1000))
	cols := []tk.Column{col("a", iv(3), T-500), col("c", bv(true), 0)}
	e.ok("PutRow", t.PutRow(e.ctx, k, cols))
	w := e.want(k, cols...)
	e.expectRow("after PutRow", t, k, &w, allVersions)
	// A replaced row's old versions stay gone when the table keeps more.
	e.update(t, k, tk.PutAt("c", bv(false), T-3000))
	w = e.want(k, col("a", iv(3), T-500), col("c", bv(true), T), col("c", bv(false), T-3000))
	e.expectRow("after adding a version", t, k, &w, allVersions)
}

// testUpdateRowChanges: Put, PutAt, DeleteVersion and DeleteColumn, applied
// in order, on an absent row and an existing one, leaving other columns.
func testUpdateRowChanges(e *env) {
	t := e.create("update", schemaS, tk.TableOptions{MaxVersions: 5})
	T := e.now()
	k := strKey("r")
	step := func(what string, changes []tk.Change, want ...tk.Column) {
		e.t.Helper()
		res, err := t.UpdateRow(e.ctx, k, changes)
		if !e.ok(what, err) {
			return
		}
		if len(res.Increments) != 0 {
			e.t.Errorf("%s: UpdateRow without increments returned increments %v", what, res.Increments)
		}
		w := e.want(k, want...)
		e.expectRow(what, t, k, &w, allVersions)
	}
	step("Put on an absent row creates it", []tk.Change{tk.Put("a", iv(1))},
		col("a", iv(1), T))
	step("PutAt", []tk.Change{tk.PutAt("a", iv(2), T-1000), tk.PutAt("b", sv("x"), T-2000), tk.PutAt("b", sv("y"), T-1000)},
		col("a", iv(1), T), col("a", iv(2), T-1000), col("b", sv("x"), T-2000), col("b", sv("y"), T-1000))
	step("DeleteVersion", []tk.Change{tk.DeleteVersion("a", T-1000)},
		col("a", iv(1), T), col("b", sv("x"), T-2000), col("b", sv("y"), T-1000))
	step("DeleteVersion of a version that does not exist", []tk.Change{tk.DeleteVersion("a", T-5000), tk.DeleteVersion("zz", T)},
		col("a", iv(1), T), col("b", sv("x"), T-2000), col("b", sv("y"), T-1000))
	step("DeleteColumn", []tk.Change{tk.DeleteColumn("b")},
		col("a", iv(1), T))
	step("DeleteColumn of an absent column", []tk.Change{tk.DeleteColumn("b")},
		col("a", iv(1), T))
	step("Put then DeleteColumn", []tk.Change{tk.Put("c", iv(1)), tk.DeleteColumn("c")},
		col("a", iv(1), T))
	step("DeleteColumn then Put", []tk.Change{tk.PutAt("d", iv(1), T-1000), tk.DeleteColumn("d"), tk.Put("d", iv(2))},
		col("a", iv(1), T), col("d", iv(2), T))
	step("PutAt twice at one version: the later wins", []tk.Change{tk.PutAt("e", iv(1), T-1000), tk.PutAt("e", iv(2), T-1000)},
		col("a", iv(1), T), col("d", iv(2), T), col("e", iv(2), T-1000))
	step("Put over an existing version replaces it", []tk.Change{tk.Put("a", sv("now a string"))},
		col("a", sv("now a string"), T), col("d", iv(2), T), col("e", iv(2), T-1000))
}

// testUpdateRowDisappears: a row left without visible cells (and not
// key-only) no longer exists.
func testUpdateRowDisappears(e *env) {
	t := e.create("gone", schemaS, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	e.put(t, strKey("col"), col("a", iv(1), 0))
	e.put(t, strKey("ver"), col("a", iv(1), T-1000))
	e.put(t, strKey("two"), col("a", iv(1), 0), col("b", iv(2), 0))
	e.put(t, strKey("keep"), col("a", iv(1), 0))
	e.update(t, strKey("col"), tk.DeleteColumn("a"))
	e.update(t, strKey("ver"), tk.DeleteVersion("a", T-1000))
	e.update(t, strKey("two"), tk.DeleteColumn("a"), tk.DeleteColumn("b"))
	e.update(t, strKey("new"), tk.Put("a", iv(1)), tk.DeleteColumn("a"))
	for _, k := range []string{"col", "ver", "two", "new"} {
		e.expectRow("row "+k, t, strKey(k), nil, allVersions)
	}
	e.expectScan("table", t, []rowView{e.want(strKey("keep"), col("a", iv(1), 0))})
}

// testIncrementAbsent: an absent column counts as 0; the new value is
// returned and written at now.
func testIncrementAbsent(e *env) {
	t := e.create("inc", schemaS, tk.TableOptions{MaxVersions: 3})
	k := strKey("r")
	T := e.now()
	res, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("n", 5)})
	if e.ok("Increment of an absent column", err) {
		e.diff("Increment of an absent column", []cellView{{"n", "Integer(5)", T}}, viewRow(tk.Row{Columns: res.Increments}).Cells)
	}
	e.clock.Advance(time.Second)
	res, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("n", -8), tk.Put("x", sv("x")), tk.Increment("m", 0)})
	if e.ok("second Increment", err) {
		e.diff("second Increment", []cellView{{"n", "Integer(-3)", T + 1000}, {"m", "Integer(0)", T + 1000}},
			viewRow(tk.Row{Columns: res.Increments}).Cells)
	}
	w := e.want(k, col("n", iv(-3), T+1000), col("n", iv(5), T), col("m", iv(0), T+1000), col("x", sv("x"), T+1000))
	e.expectRow("after increments", t, k, &w, allVersions)
	// The latest version counts, whatever the older ones hold.
	e.update(t, k, tk.PutAt("s", sv("old"), T-1000), tk.PutAt("s", iv(10), T))
	res, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("s", 1)})
	if e.ok("Increment over an older String", err) {
		e.diff("Increment over an older String", []cellView{{"s", "Integer(11)", T + 1000}}, viewRow(tk.Row{Columns: res.Increments}).Cells)
	}
}

// testIncrementNonInteger: a latest version of another type refuses the
// whole UpdateRow with ErrInvalidArgument naming the column.
func testIncrementNonInteger(e *env) {
	t := e.create("incbad", schemaS, tk.TableOptions{MaxVersions: 2})
	T := e.now()
	k := strKey("r")
	cols := []tk.Column{col("s", sv("7"), 0), col("d", dv(7), 0), col("b", bv(true), 0), col("y", tk.Binary([]byte{7}), 0),
		col("i", iv(1), T-1000), col("i", sv("latest"), T)}
	e.put(t, k, cols...)
	w := e.want(k, cols...)
	for _, c := range []string{"s", "d", "b", "y", "i"} {
		_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("other", iv(1)), tk.Increment(c, 1), tk.Put("after", iv(1))})
		e.wantErr("Increment of column "+c, err, tk.ErrInvalidArgument, t.Name(), c)
	}
	e.expectRow("after refused increments", t, k, &w, allVersions)
}

// testIncrementOverflow: a sum beyond int64 refuses the write.
func testIncrementOverflow(e *env) {
	t := e.create("incovf", schemaS, tk.TableOptions{})
	k := strKey("r")
	e.put(t, k, col("max", iv(math.MaxInt64-1), 0), col("min", iv(math.MinInt64+1), 0))
	e.clock.Advance(time.Second)
	res, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("max", 1), tk.Increment("min", -1)})
	if e.ok("Increment to the extremes", err) {
		e.diff("Increment to the extremes", []cellView{{"max", "Integer(9223372036854775807)", e.now()}, {"min", "Integer(-9223372036854775808)", e.now()}},
			viewRow(tk.Row{Columns: res.Increments}).Cells)
	}
	w := e.want(k, col("max", iv(math.MaxInt64), 0), col("min", iv(math.MinInt64), 0))
	e.clock.Advance(time.Second)
	for _, ch := range []tk.Change{tk.Increment("max", 1), tk.Increment("min", -1), tk.Increment("max", math.MaxInt64), tk.Increment("min", math.MinInt64)} {
		_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("x", iv(1)), ch})
		e.wantErr("overflowing Increment", err, tk.ErrInvalidArgument, t.Name(), ch.Column)
	}
	e.update(t, strKey("fresh"), tk.Increment("n", math.MinInt64))
	_, err = t.UpdateRow(e.ctx, strKey("fresh"), []tk.Change{tk.Increment("n", -1)})
	e.wantErr("Increment below MinInt64", err, tk.ErrInvalidArgument, t.Name(), "n")
	e.expectRow("after refused increments", t, k, &w, allVersions)
}

// testIncrementInBatch: a batch update returns its increments.
func testIncrementInBatch(e *env) {
	t := e.create("incbatch", schemaS, tk.TableOptions{})
	e.put(t, strKey("a"), col("n", iv(41), 0))
	e.clock.Advance(time.Second)
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{
		tk.BatchUpdate(t.Name(), strKey("a"), []tk.Change{tk.Increment("n", 1)}),
		tk.BatchPut(t.Name(), strKey("b"), []tk.Column{col("n", iv(1), 0)}),
		tk.BatchUpdate(t.Name(), strKey("c"), []tk.Change{tk.Increment("n", -1), tk.Increment("m", 2)}),
	})
	if !e.ok("BatchWriteRow", err) || len(res) != 3 {
		return
	}
	now := e.now()
	got := [][]cellView{}
	for _, r := range res {
		e.ok("BatchWriteRow result", r.Err)
		got = append(got, viewRow(tk.Row{Columns: r.Increments}).Cells)
	}
	e.diff("batch increments", [][]cellView{{{"n", "Integer(42)", now}}, nil, {{"n", "Integer(-1)", now}, {"m", "Integer(2)", now}}}, got)
}

// testDeleteRow: deleting removes every version; deleting a missing row is
// not an error.
func testDeleteRow(e *env) {
	t := e.create("delete", schemaS, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	e.ok("DeleteRow of a missing row", t.DeleteRow(e.ctx, strKey("missing")))
	e.put(t, strKey("r"), col("a", iv(1), T-2000), col("a", iv(2), T-1000), col("b", iv(3), 0))
	e.put(t, strKey("k"))
	e.put(t, strKey("keep"), col("a", iv(1), 0))
	e.ok("DeleteRow", t.DeleteRow(e.ctx, strKey("r")))
	e.ok("DeleteRow of a key-only row", t.DeleteRow(e.ctx, strKey("k")))
	e.ok("DeleteRow again", t.DeleteRow(e.ctx, strKey("r")))
	e.expectRow("deleted row", t, strKey("r"), nil, allVersions)
	e.expectRow("deleted key-only row", t, strKey("k"), nil)
	// Nothing of the deleted row comes back when the row is written again.
	e.update(t, strKey("r"), tk.Put("c", iv(4)))
	e.expectScan("table", t, []rowView{
		e.want(strKey("keep"), col("a", iv(1), 0)),
		e.want(strKey("r"), col("c", iv(4), 0)),
	})
}

// testGetRowMissing: a missing row is "not found", not an error.
func testGetRowMissing(e *env) {
	t := e.create("missing", schemaS, tk.TableOptions{})
	e.put(t, strKey("a"), col("a", iv(1), 0))
	r, found, err := t.GetRow(e.ctx, strKey("b"), allVersions, tk.Columns("a"))
	if e.ok("GetRow of a missing row", err) && found {
		e.t.Errorf("GetRow of a missing row: found %+v", viewRow(r))
	}
}

// testGetRowProjection: only the named columns come back; key columns
// always do; a row without the named columns still exists.
func testGetRowProjection(e *env) {
	schema := tk.KeySchema{{Name: "pk", Type: tk.TypeString}, {Name: "sk", Type: tk.TypeInteger}}
	t := e.create("proj", schema, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	k := tk.Key("pk", tk.String("r")).Add("sk", tk.Integer(-1))
	k2 := tk.Key("pk", tk.String("s")).Add("sk", tk.Integer(0))
	a1, a2, bc, cc := col("a", iv(1), T-1000), col("a", iv(2), T), col("b", sv("b"), T), col("c", bv(false), T)
	e.put(t, k, a1, a2, bc, cc)
	e.put(t, k2, col("z", iv(0), T))
	e.expectRow("Columns(b)", t, k, ptr(e.want(k, bc)), tk.Columns("b"))
	e.expectRow("Columns(c, a)", t, k, ptr(e.want(k, a2, cc)), tk.Columns("c", "a"))
	e.expectRow("Columns(c, a) with every version", t, k, ptr(e.want(k, a1, a2, cc)), tk.Columns("c", "a"), allVersions)
	e.expectRow("Columns(a, a)", t, k, ptr(e.want(k, a2)), tk.Columns("a", "a"))
	e.expectRow("Columns(absent)", t, k, ptr(e.want(k)), tk.Columns("absent"))
	e.expectRow("Columns(pk, sk, b): key columns may be named", t, k, ptr(e.want(k, bc)), tk.Columns("pk", "sk", "b"))
	rows, _ := e.rangeAll("GetRange Columns(b)", t, t.lo(), t.hi(), tk.Columns("b"))
	e.diff("GetRange Columns(b)", []rowView{e.want(k, bc), e.want(k2)}, viewRows(rows))
}

// testGetRowVersions: MaxVersions, TimeRange and both together; versions
// newest first, columns ascending.
func testGetRowVersions(e *env) {
	t := e.create("vers", schemaS, tk.TableOptions{MaxVersions: 10})
	T := e.now()
	k := strKey("r")
	a := func(d int64) tk.Column { return col("a", iv(d), T-d) }
	bc := col("b", sv("b"), T-2500)
	e.put(t, k, a(3000), bc, a(0), a(4000), a(1000), a(2000))
	cases := []struct {
		what string
		opts []tk.ReadOption
		want []tk.Column
	}{
		{"default: latest of each column", nil, []tk.Column{a(0), bc}},
		{"MaxVersions(3)", []tk.ReadOption{tk.MaxVersions(3)}, []tk.Column{a(0), a(1000), a(2000), bc}},
		{"MaxVersions(100)", []tk.ReadOption{tk.MaxVersions(100)}, []tk.Column{a(0), a(1000), a(2000), a(3000), a(4000), bc}},
		{"TimeRange [T-3000, T-1000): every version in it", []tk.ReadOption{tk.Versions(T-3000, T-1000)}, []tk.Column{a(2000), a(3000), bc}},
		{"TimeRange and MaxVersions(2): newest 2 in the range", []tk.ReadOption{tk.Versions(T-4000, T), tk.MaxVersions(2)}, []tk.Column{a(1000), a(2000), bc}},
		{"TimeRange of one ms", []tk.ReadOption{tk.Versions(T-2000, T-1999)}, []tk.Column{a(2000)}},
		{"TimeRange with no version", []tk.ReadOption{tk.Versions(T+1, T+2)}, nil},
		{"TimeRange [0, MaxInt64)", []tk.ReadOption{tk.Versions(0, math.MaxInt64)}, []tk.Column{a(0), a(1000), a(2000), a(3000), a(4000), bc}},
		{"TimeRange, MaxVersions and projection", []tk.ReadOption{tk.Versions(T-4000, T+1), tk.MaxVersions(4), tk.Columns("a")}, []tk.Column{a(0), a(1000), a(2000), a(3000)}},
	}
	for _, c := range cases {
		w := e.want(k, c.want...)
		e.expectRow(c.what, t, k, &w, c.opts...)
	}
	// The same selection through GetRange and BatchGetRow.
	opts := []tk.ReadOption{tk.Versions(T-4000, T), tk.MaxVersions(2)}
	w := e.want(k, a(1000), a(2000), bc)
	rows, _ := e.rangeAll("GetRange", t, t.lo(), t.hi(), tk.Versions(T-4000, T), tk.MaxVersions(2))
	e.diff("GetRange with TimeRange and MaxVersions", []rowView{w}, viewRows(rows))
	res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: k, Options: opts}})
	if e.ok("BatchGetRow", err) && e.ok("BatchGetRow result", res[0].Err) {
		e.diff("BatchGetRow with TimeRange and MaxVersions", w, viewRow(res[0].Row))
	}
}
