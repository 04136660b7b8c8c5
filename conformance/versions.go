package conformance

import (
	"fmt"
	"github.com/tablekit/tablekit/rowmodel"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §5: versions, the write window, and MaxVersions.

func versionsCases() []testCase {
	return []testCase{
		{"ExplicitVersions", testExplicitVersions},
		{"DefaultVersionIsNow", testDefaultVersionIsNow},
		{"WindowEdges", testWindowEdges},
		{"DefaultOffsetEdges", testDefaultOffsetEdges},
		{"RefusedWriteChangesNothing", testRefusedWriteChangesNothing},
	}
}

func maxVersionsCases() []testCase {
	return []testCase{
		{"TrimmedAtOnce", testMaxVersionsTrim},
		{"NoResurrection", testMaxVersionsNoResurrection},
		{"UpdateTable", testMaxVersionsUpdateTable},
	}
}

// Short value constructors.
func sv(v string) tk.Value  { return tk.String(v) }
func iv(v int64) tk.Value   { return tk.Integer(v) }
func bv(v bool) tk.Value    { return tk.Boolean(v) }
func dv(v float64) tk.Value { return tk.Double(v) }

// testExplicitVersions: versions given by the writer are kept exactly and
// read newest first; writing an existing (column, version) replaces it.
func testExplicitVersions(e *env) {
	t := e.create("explicit", schemaS, tk.TableOptions{MaxVersions: 5})
	T := e.now()
	k := strKey("r")
	cols := []tk.Column{col("c", sv("v4"), T-4000), col("c", sv("v1"), T-1000), col("c", sv("v3"), T-3000),
		col("d", sv("d"), T-2000), col("c", sv("v0"), 0)}
	e.ok("PutRow", t.PutRow(e.ctx, k, cols))
	w := e.want(k, cols...)
	e.expectRow("every version", t, k, &w, allVersions)
	latest := e.want(k, col("c", sv("v0"), T), col("d", sv("d"), T-2000))
	e.expectRow("default read: latest of each column", t, k, &latest)

	_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.PutAt("c", sv("v2"), T-2000)})
	e.ok("UpdateRow PutAt", err)
	_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.PutAt("c", sv("v1 again"), T-1000)})
	e.ok("UpdateRow PutAt of an existing version", err)
	w = e.want(k, col("c", sv("v0"), T), col("c", sv("v1 again"), T-1000), col("c", sv("v2"), T-2000),
		col("c", sv("v3"), T-3000), col("c", sv("v4"), T-4000), col("d", sv("d"), T-2000))
	e.expectRow("after replacing a version", t, k, &w, allVersions)
}

// testDefaultVersionIsNow: a cell written without a version gets the
// clock's now in milliseconds, on every write path.
func testDefaultVersionIsNow(e *env) {
	t := e.create("now", schemaS, tk.TableOptions{MaxVersions: 3})
	k := strKey("r")
	T := e.now()
	e.ok("PutRow", t.PutRow(e.ctx, k, []tk.Column{col("c", sv("put"), 0)}))
	e.clock.Advance(time.Millisecond)
	_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("c", sv("update"))})
	e.ok("UpdateRow", err)
	e.clock.Advance(998 * time.Millisecond)
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchUpdate(t.Name(), k, []tk.Change{tk.Put("c", sv("batch"))})})
	if e.ok("BatchWriteRow", err) {
		e.ok("BatchWriteRow result", res[0].Err)
	}
	w := e.want(k, col("c", sv("batch"), T+999), col("c", sv("update"), T+1), col("c", sv("put"), T))
	e.expectRow("versions are the clock's now", t, k, &w, allVersions)
}

// edgeCase is one write of the version window test.
type edgeCase struct {
	what     string
	version  int64
	accepted bool
}

// windowEdges returns SPEC §5's four edges for MaxVersionOffset off at now:
// now_s - off <= v_s < now_s + off, with v_s = floor(version/1000).
func windowEdges(now, off int64) []edgeCase {
	nowS := rowmodel.Seconds(now)
	return []edgeCase{
		{"lowest accepted (now_s-offset)", (nowS - off) * 1000, true},
		{"one ms below it", (nowS-off)*1000 - 1, false},
		{"highest accepted (just below now_s+offset)", (nowS+off)*1000 - 1, true},
		{"now_s+offset", (nowS + off) * 1000, false},
	}
}

// tryVersion writes column c at version on a fresh row and checks that it
// was accepted (and reads back exactly) or refused (and wrote nothing).
func (e *env) tryVersion(t tbl, label string, ec edgeCase, path string) {
	e.t.Helper()
	k := strKey(fmt.Sprintf("%s %s %s", label, ec.what, path))
	var err error
	switch path {
	case "PutRow":
		err = t.PutRow(e.ctx, k, []tk.Column{col("c", sv("x"), ec.version)})
	case "UpdateRow":
		_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.PutAt("c", sv("x"), ec.version)})
	case "BatchWriteRow":
		var res []tk.BatchWriteResult
		res, err = e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchPut(t.Name(), k, []tk.Column{col("c", sv("x"), ec.version)})})
		if err == nil {
			err = res[0].Err
		}
	}
	what := fmt.Sprintf("%s: %s version %d (now %d): %s", label, ec.what, ec.version, e.now(), path)
	if ec.accepted {
		if e.ok(what, err) {
			w := e.want(k, col("c", sv("x"), ec.version))
			e.expectRow(what, t, k, &w, allVersions)
		}
		return
	}
	if e.wantErr(what, err, tk.ErrInvalidArgument, t.Name(), "c") {
		e.expectRow(what+": refused write", t, k, nil, allVersions)
	}
}

// testWindowEdges: both edges of the window, to the millisecond, with the
// floor to seconds, at several millisecond phases of the clock.
func testWindowEdges(e *env) {
	t := e.create("window", schemaS, tk.TableOptions{MaxVersionOffset: 100 * time.Second})
	for _, ms := range []int{535, 0, 999} {
		e.clock.Set(baseTime.Truncate(time.Second).Add(time.Duration(ms) * time.Millisecond))
		paths := []string{"PutRow"}
		if ms == 535 {
			paths = []string{"PutRow", "UpdateRow", "BatchWriteRow"}
		}
		for _, ec := range windowEdges(e.now(), 100) {
			for _, p := range paths {
				e.tryVersion(t, fmt.Sprintf("offset 100 at .%03d", ms), ec, p)
			}
		}
	}
}

// testDefaultOffsetEdges: the default MaxVersionOffset (86400 s) is in force.
func testDefaultOffsetEdges(e *env) {
	t := e.create("window", schemaS, tk.TableOptions{})
	for _, ec := range windowEdges(e.now(), 86400) {
		e.tryVersion(t, "default offset", ec, "PutRow")
	}
}

// testRefusedWriteChangesNothing: one out-of-window cell refuses the whole
// write; the row keeps what it had.
func testRefusedWriteChangesNothing(e *env) {
	t := e.create("refused", schemaS, tk.TableOptions{MaxVersionOffset: 100 * time.Second, MaxVersions: 3})
	k := strKey("keep")
	e.put(t, k, col("a", sv("a"), 0))
	w := e.want(k, col("a", sv("a"), 0))
	edges := windowEdges(e.now(), 100)
	err := t.PutRow(e.ctx, k, []tk.Column{col("b", sv("b"), 0), col("c", sv("c"), edges[1].version)})
	e.wantErr("PutRow with one cell below the window", err, tk.ErrInvalidArgument, t.Name(), "c")
	_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("b", sv("b")), tk.DeleteColumn("a"), tk.PutAt("c", sv("c"), edges[3].version)})
	e.wantErr("UpdateRow with one cell above the window", err, tk.ErrInvalidArgument, t.Name(), "c")
	e.expectRow("row after refused writes", t, k, &w, allVersions)
}

// testMaxVersionsTrim: with MaxVersions N, writing N+1 versions leaves only
// the newest N visible at once, to reads, filters and conditions.
func testMaxVersionsTrim(e *env) {
	t := e.create("trim", schemaS, tk.TableOptions{MaxVersions: 2})
	T := e.now()
	v1, v2, v3 := col("c", sv("v1"), T-3000), col("c", sv("v2"), T-2000), col("c", sv("v3"), T-1000)
	kp, ku, kb := strKey("put"), strKey("updates"), strKey("batch")
	e.put(t, kp, v1, v2, v3)
	for _, c := range []tk.Column{v1, v3, v2} {
		e.update(t, ku, tk.PutAt(c.Name, c.Value, c.Version))
	}
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchUpdate(t.Name(), kb, []tk.Change{
		tk.PutAt("c", sv("v3"), T-1000), tk.PutAt("c", sv("v1"), T-3000), tk.PutAt("c", sv("v2"), T-2000)})})
	if e.ok("BatchWriteRow", err) {
		e.ok("BatchWriteRow result", res[0].Err)
	}
	oldFilter := tk.ColumnFilter{Column: "c", Op: tk.Equal, Value: sv("v1"), AllVersions: true}
	for _, k := range []tk.PrimaryKey{kp, ku, kb} {
		what := "row " + fmtKey(k)
		w := e.want(k, v3, v2)
		e.expectRow(what+": newest 2 of 3", t, k, &w, allVersions)
		newest := e.want(k, v3)
		e.expectRow(what+": MaxVersions(1)", t, k, &newest, tk.MaxVersions(1))
		keyOnly := e.want(k)
		e.expectRow(what+": time range of the trimmed version", t, k, &keyOnly, tk.Versions(T-3000, T-2999))
		e.expectRow(what+": filter on the trimmed version", t, k, nil, allVersions, tk.WithFilter(oldFilter))
		_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("x", sv("x"))}, tk.IfMatch(oldFilter))
		e.wantErr(what+": condition on the trimmed version", err, tk.ErrConditionFailed)
		e.expectRow(what+": after the failed condition", t, k, &w, allVersions)
	}
	rows, _ := e.rangeAll("GetRange", t, t.lo(), t.hi(), allVersions, tk.WithFilter(oldFilter))
	e.diff("GetRange filtered on the trimmed version", []string(nil), rowKeys(rows))

	// A version older than the newest N is invisible from the moment it is written.
	e.update(t, kp, tk.PutAt("c", sv("v0"), T-4000))
	w := e.want(kp, v3, v2)
	e.expectRow("after writing an older version", t, kp, &w, allVersions)
}

// testMaxVersionsNoResurrection: a version hidden by MaxVersions stays
// hidden when the newer version is deleted ("no read may ever see them").
func testMaxVersionsNoResurrection(e *env) {
	t := e.create("resurrect", schemaS, tk.TableOptions{MaxVersions: 1})
	T := e.now()
	kr, ks, kq := strKey("r"), strKey("s"), strKey("q")
	for _, k := range []tk.PrimaryKey{kr, ks} {
		e.update(t, k, tk.PutAt("c", sv("old"), T-2000))
		e.update(t, k, tk.PutAt("c", sv("new"), T-1000))
	}
	e.update(t, ks, tk.Put("d", sv("d")))
	e.put(t, kq, col("c", sv("old"), T-2000), col("c", sv("new"), T-1000))
	for _, k := range []tk.PrimaryKey{kr, ks, kq} {
		e.update(t, k, tk.DeleteVersion("c", T-1000))
	}
	e.expectRow("only column, newest version deleted", t, kr, nil, allVersions)
	e.expectRow("PutRow of 2 versions, newest deleted", t, kq, nil, allVersions)
	w := e.want(ks, col("d", sv("d"), 0))
	e.expectRow("other column remains", t, ks, &w, allVersions)
	e.expectScan("table", t, []rowView{w})
}

// testMaxVersionsUpdateTable: lowering MaxVersions hides the extra versions
// at once; after raising it, new versions are kept up to the new number.
func testMaxVersionsUpdateTable(e *env) {
	t := e.create("mvupd", schemaS, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	k := strKey("r")
	e.put(t, k, col("c", sv("v1"), T-3000), col("c", sv("v2"), T-2000), col("c", sv("v3"), T-1000))
	w3 := e.want(k, col("c", sv("v1"), T-3000), col("c", sv("v2"), T-2000), col("c", sv("v3"), T-1000))
	e.expectRow("MaxVersions 3", t, k, &w3, allVersions)

	e.must("UpdateTable MaxVersions 1", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 1}))
	w1 := e.want(k, col("c", sv("v3"), T-1000))
	e.expectRow("after lowering MaxVersions to 1", t, k, &w1, allVersions)
	e.expectRow("after lowering MaxVersions to 1, through another client", tbl{Table: e.fresh().Table(t.Name()), schema: t.schema}, k, &w1, allVersions)
	old := tk.ColumnFilter{Column: "c", Op: tk.Equal, Value: sv("v1"), AllVersions: true}
	e.expectRow("filter on a now hidden version", t, k, nil, allVersions, tk.WithFilter(old))
	_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("x", sv("x"))}, tk.IfMatch(old))
	e.wantErr("condition on a now hidden version", err, tk.ErrConditionFailed)

	e.must("UpdateTable MaxVersions 3", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 3}))
	e.update(t, k, tk.PutAt("c", sv("n1"), T), tk.PutAt("c", sv("n2"), T+1000), tk.PutAt("c", sv("n3"), T+2000))
	wn := e.want(k, col("c", sv("n1"), T), col("c", sv("n2"), T+1000), col("c", sv("n3"), T+2000))
	e.expectRow("after raising MaxVersions to 3", t, k, &wn, allVersions)
	other := tbl{Table: e.fresh().Table(t.Name()), schema: t.schema}
	e.expectRow("after raising MaxVersions to 3, through another client", other, k, &wn, allVersions)
}
