package conformance

import (
	"cmp"
	"fmt"
	"slices"

	tk "github.com/tablekit/tablekit"
)

// testIndexAutoIncrement: on a backend with auto-increment keys and
// Capabilities.IndexedWrite (it assigns the key and stores the row's index
// entries in one step), a table with an auto-increment key column keeps
// its indexes: puts and updates with AutoIncrement return their assigned
// keys (ReturnKey, UpdateResult.Key, BatchWriteResult.Key) and the indexes
// find the rows under them, by GetRow and by range in index order, with
// the placeholder's column in the tail of the index key (by_v) and among
// its columns (by_vs); an update moves a row, a delete removes it; an
// atomic write creating a row is refused, nothing written, and one of
// stored rows goes as on any table. Elsewhere S16/AutoIncrementRefused
// checks the refusal.
func testIndexAutoIncrement(e *env) {
	caps := tk.CapabilitiesOf(e.b)
	if !caps.AutoIncrement {
		e.t.Skip("the backend has no auto-increment key columns (S14 checks their refusal)")
	}
	if !caps.IndexedWrite {
		e.t.Skip("the backend has no IndexedWrite: S16/AutoIncrementRefused checks the refusal")
	}
	byV := tk.IndexSpec{Name: "by_v", Columns: []tk.KeyColumn{{Name: "v", Type: tk.TypeString}}, Include: []string{"n"}}
	byVS := tk.IndexSpec{Name: "by_vs", Columns: []tk.KeyColumn{{Name: "v", Type: tk.TypeString}, {Name: "s"}}}
	name := e.name("aiix")
	e.must("CreateTable of an indexed auto-increment table", e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schemaAI, Indexes: []tk.IndexSpec{byV, byVS}}))
	e.cleanupTable(name)
	t := e.c.Table(name)

	type row struct {
		p    string
		s, r int64
		v    string
		n    int64
	}
	var rows []*row
	put := func(p string, r int64, v string, n int64) *row {
		e.t.Helper()
		ph := aiKey(p, tk.AutoIncrement, r)
		var k tk.PrimaryKey
		if !e.ok("PutRow with AutoIncrement", t.PutRow(e.ctx, ph, []tk.Column{col("v", tk.String(v), 0), col("n", tk.Integer(n), 0)}, tk.ReturnKey(&k))) {
			return nil
		}
		w := &row{p: p, s: e.assigned("PutRow's ReturnKey", k, ph), r: r, v: v, n: n}
		rows = append(rows, w)
		return w
	}
	a := put("p", 1, "b", 10)
	b := put("p", 2, "a", 20)
	c := put("q", 1, "a", 30)
	res, err := t.UpdateRow(e.ctx, aiKey("p", tk.AutoIncrement, 3), []tk.Change{tk.Put("v", tk.String("c")), tk.Increment("n", 40)})
	if e.ok("UpdateRow with AutoIncrement", err) {
		rows = append(rows, &row{p: "p", s: e.assigned("UpdateRow's UpdateResult.Key", res.Key, aiKey("p", tk.AutoIncrement, 3)), r: 3, v: "c", n: 40})
	}
	bres, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{
		tk.BatchPut(name, aiKey("q", tk.AutoIncrement, 2), []tk.Column{col("v", tk.String("b"), 0), col("n", tk.Integer(50), 0)}),
		tk.BatchPut(name, aiKey("q", tk.AutoIncrement, 3), []tk.Column{col("n", tk.Integer(60), 0)}), // no v: in no index
	})
	if e.ok("BatchWriteRow with AutoIncrement", err) && len(bres) == 2 {
		for i, r := range bres {
			e.ok(fmt.Sprintf("BatchWriteRow write %d", i), r.Err)
		}
		rows = append(rows, &row{p: "q", s: e.assigned("BatchPut's BatchWriteResult.Key", bres[0].Key, aiKey("q", tk.AutoIncrement, 2)), r: 2, v: "b", n: 50})
		e.assigned("the second BatchPut's BatchWriteResult.Key", bres[1].Key, aiKey("q", tk.AutoIncrement, 3))
	}
	if a == nil || b == nil || c == nil || e.t.Failed() {
		e.t.FailNow()
	}

	// want lists each index's rows as index-key strings, in index order.
	want := func(withS bool) []string {
		var live []*row
		for _, r := range rows {
			if r.v != "" {
				live = append(live, r)
			}
		}
		slices.SortFunc(live, func(x, y *row) int {
			if withS {
				return cmp.Or(cmp.Compare(x.v, y.v), cmp.Compare(x.s, y.s), cmp.Compare(x.p, y.p), cmp.Compare(x.r, y.r))
			}
			return cmp.Or(cmp.Compare(x.v, y.v), cmp.Compare(x.p, y.p), cmp.Compare(x.s, y.s), cmp.Compare(x.r, y.r))
		})
		out := make([]string, len(live))
		for i, r := range live {
			if withS {
				out[i] = fmt.Sprintf("%s/%d/%s/%d", r.v, r.s, r.p, r.r)
			} else {
				out[i] = fmt.Sprintf("%s/%s/%d/%d", r.v, r.p, r.s, r.r)
			}
		}
		return out
	}
	read := func(what string, ix string, lo, hi tk.PrimaryKey) []string {
		e.t.Helper()
		var out []string
		for r, err := range t.Index(ix).Rows(e.ctx, lo, hi) {
			if !e.ok(what, err) {
				break
			}
			out = append(out, ixRowString(r))
		}
		return out
	}
	vBound := func(v tk.Value) tk.PrimaryKey { return tk.Key("v", v).Add("p", v).Add("s", v).Add("r", v) }
	vsBound := func(v tk.Value) tk.PrimaryKey { return tk.Key("v", v).Add("s", v).Add("p", v).Add("r", v) }
	check := func(when string) {
		e.t.Helper()
		e.diff("by_v "+when, want(false), read("by_v "+when, "by_v", vBound(tk.InfMin), vBound(tk.InfMax)))
		e.diff("by_vs "+when, want(true), read("by_vs "+when, "by_vs", vsBound(tk.InfMin), vsBound(tk.InfMax)))
	}
	check("after the writes with AutoIncrement")

	// GetRow of the index finds the row under its assigned key, with its
	// included column; a range over one index value holds its rows.
	vKey := func(r *row) tk.PrimaryKey {
		return tk.Key("v", tk.String(r.v)).Add("p", tk.String(r.p)).Add("s", tk.Integer(r.s)).Add("r", tk.Integer(r.r))
	}
	got, found, err := t.Index("by_v").GetRow(e.ctx, vKey(a))
	if e.ok("by_v GetRow", err) {
		n, _ := got.Get("n")
		if !found || !n.Equal(tk.Integer(a.n)) {
			e.t.Errorf("by_v GetRow %v: found %v, n %v; want found, n %d", fmtKey(vKey(a)), found, n, a.n)
		}
	}
	tkey, err := t.Index("by_v").TableKey(e.ctx, vKey(a))
	if e.ok("by_v TableKey", err) && !tkey.Equal(aiKey(a.p, tk.Integer(a.s), a.r)) {
		e.t.Errorf("by_v TableKey %v = %v, want the assigned key %v", fmtKey(vKey(a)), fmtKey(tkey), fmtKey(aiKey(a.p, tk.Integer(a.s), a.r)))
	}
	lo := tk.Key("v", tk.String("a")).Add("p", tk.InfMin).Add("s", tk.InfMin).Add("r", tk.InfMin)
	hi := tk.Key("v", tk.String("a")).Add("p", tk.InfMax).Add("s", tk.InfMax).Add("r", tk.InfMax)
	e.diff("by_v range of v = a", []string{fmt.Sprintf("a/p/%d/2", b.s), fmt.Sprintf("a/q/%d/1", c.s)}, read("by_v a", "by_v", lo, hi))

	// An update moves a row; a delete removes it; both by the real key.
	e.update(tbl{Table: t, schema: schemaAI}, aiKey(a.p, tk.Integer(a.s), a.r), tk.Put("v", tk.String("z")))
	a.v = "z"
	e.must("DeleteRow", t.DeleteRow(e.ctx, aiKey(b.p, tk.Integer(b.s), b.r)))
	b.v = ""
	check("after an update and a delete")
	if _, found, err := t.Index("by_v").GetRow(e.ctx, tk.Key("v", tk.String("b")).Add("p", tk.String(a.p)).Add("s", tk.Integer(a.s)).Add("r", tk.Integer(a.r))); e.ok("by_v GetRow of the old key", err) && found {
		e.t.Error("by_v still finds the updated row under its old value")
	}

	if caps.AtomicWrite {
		// A row created by an atomic write would need entries under the key
		// the atomic write assigns: refused, nothing written.
		_, err := t.AtomicWrite(e.ctx, []tk.BatchWrite{
			tk.BatchUpdate("", aiKey(c.p, tk.Integer(c.s), c.r), []tk.Change{tk.Put("v", tk.String("y"))}),
			tk.BatchPut("", aiKey(c.p, tk.AutoIncrement, 9), []tk.Column{col("v", tk.String("x"), 0)}),
		})
		e.wantErr("AtomicWrite creating a row with AutoIncrement in an indexed table", err, tk.ErrUnimplemented, name, `"s"`, "atomic")
		var n int
		for r, err := range t.Rows(e.ctx, tk.Key("p", tk.String("q")).Add("s", tk.InfMin).Add("r", tk.InfMin), tk.Key("p", tk.String("q")).Add("s", tk.InfMax).Add("r", tk.InfMax)) {
			if !e.ok("Rows of partition q", err) {
				break
			}
			if v, _ := r.Get("v"); v.Equal(tk.String("x")) || v.Equal(tk.String("y")) {
				e.t.Errorf("the refused atomic write wrote row %v (v %v)", fmtKey(r.Key), v)
			}
			n++
		}
		if n != 3 {
			e.t.Errorf("partition q holds %d rows after the refused atomic write, want 3", n)
		}
		check("after a refused atomic write")
		// Writes of stored rows go as on any table.
		_, err = t.AtomicWrite(e.ctx, []tk.BatchWrite{
			tk.BatchUpdate("", aiKey(c.p, tk.Integer(c.s), c.r), []tk.Change{tk.Put("v", tk.String("y"))}),
		})
		if e.ok("AtomicWrite updating a stored row of an indexed auto-increment table", err) {
			c.v = "y"
		}
		check("after an atomic update")
	}
}
