package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §3 across clients, §5's hidden versions, and the Client's own
// promises of §8 and §12 (calls after Close, an iterator cancelled in the
// middle of a page, writes to one row in one batch). The cases that need
// two processes use a client over the case's backend (env.client) and one
// over a second backend on the same store (env.other), each with a
// metadata cache of its own that never expires: the first is exactly as
// stale as the case makes it.

func crossClientCases() []testCase {
	return []testCase{
		{"RecreatedOtherSchema", testRecreatedOtherSchema},
		{"RecreatedSameSchema", testRecreatedSameSchema},
		{"MaxVersionsRaised", testStaleMaxVersionsRaised},
		{"TTLRaised", testStaleTTLRaised},
		{"IncarnationGeneration", testIncarnationGeneration},
		{"ConcurrentUpdateTable", testConcurrentUpdateTable},
		{"StaleUpdateTable", testStaleUpdateTable},
	}
}

func hiddenVersionCases() []testCase {
	return []testCase{
		{"DeleteVisibleAfterLowering", testHiddenDeleteVisible},
		{"OverwriteVisibleAfterLowering", testHiddenOverwriteVisible},
		{"LoweredByOtherClient", testHiddenLoweredByOther},
		{"StaleClientDeletesAfterLowering", testHiddenStaleDelete},
	}
}

func afterCloseCases() []testCase {
	return []testCase{{"EveryCall", testCallsAfterClose}}
}

func iteratorCancelCases() []testCase {
	return []testCase{{"MidPage", testRowsCancelMidPage}}
}

func batchSameRowCases() []testCase {
	return []testCase{{"InOrder", testBatchSameRowInOrder}}
}

// on returns t's handle through client c.
func on(c *tk.Client, t tbl) tbl { return tbl{Table: c.Table(t.Name()), schema: t.schema} }

// checkShape reports every row whose key does not fit schema: names,
// order and types.
func (e *env) checkShape(what string, rows []tk.Row, schema tk.KeySchema) {
	e.t.Helper()
	for _, r := range rows {
		ok := len(r.Key) == len(schema)
		for i := 0; ok && i < len(schema); i++ {
			ok = r.Key[i].Name == schema[i].Name && r.Key[i].Value.Type() == schema[i].Type
		}
		if !ok {
			e.t.Errorf("%s: row %s does not fit the table's key schema %v", what, fmtKey(r.Key), schema)
		}
	}
}

// testRecreatedOtherSchema: client A caches table T with key (id String, n
// Integer); client B deletes T and creates it again with key (n Integer).
// A's writes of the old key shape never land: they fail with
// ErrTableNotFound or ErrInvalidArgument. The table stays readable by both,
// with only rows of the new shape, and A then writes the new shape.
func testRecreatedOtherSchema(e *env) {
	oldSchema := tk.KeySchema{{Name: "id", Type: tk.TypeString}, {Name: "n", Type: tk.TypeInteger}}
	newSchema := tk.KeySchema{{Name: "n", Type: tk.TypeInteger}}
	t := e.create("reschema", oldSchema, tk.TableOptions{})
	a, b := e.client(), e.other(t)
	ta := on(a, t)
	oldKey := func(id string, n int64) tk.PrimaryKey { return tk.Key("id", tk.String(id)).Add("n", tk.Integer(n)) }
	e.must("A: PutRow (caches the table)", ta.PutRow(e.ctx, oldKey("a", 1), []tk.Column{col("c", sv("old"), 0)}))

	e.must("B: DeleteTable", b.DeleteTable(e.ctx, t.Name()))
	e.must("B: CreateTable again with key (n Integer)", b.CreateTable(e.ctx, tk.TableMeta{Name: t.Name(), Key: newSchema}))

	refused := func(what string, err error) {
		e.t.Helper()
		switch {
		case err == nil:
			e.t.Errorf("%s: A wrote a key of the old shape (id, n) into the table re-created with key (n): got no error, want ErrTableNotFound or ErrInvalidArgument (SPEC §3)", what)
		case !errors.Is(err, tk.ErrTableNotFound) && !errors.Is(err, tk.ErrInvalidArgument):
			e.t.Errorf("%s: got %v, want an error matching ErrTableNotFound or ErrInvalidArgument (SPEC §3)", what, err)
		}
	}
	refused("A: PutRow of the old key shape", ta.PutRow(e.ctx, oldKey("x", 2), []tk.Column{col("c", sv("stale"), 0)}))
	_, err := ta.UpdateRow(e.ctx, oldKey("y", 3), []tk.Change{tk.Put("c", sv("stale"))})
	refused("A: UpdateRow of the old key shape", err)
	_, err = e.client().BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchPut(t.Name(), oldKey("z", 4), nil)})
	if err != nil && !errors.Is(err, tk.ErrTableNotFound) && !errors.Is(err, tk.ErrInvalidArgument) {
		e.t.Errorf("BatchWriteRow of the old key shape: %v", err)
	}

	nt := tbl{Table: b.Table(t.Name()), schema: newSchema}
	for _, c := range []struct {
		who string
		t   tbl
	}{{"A", tbl{Table: ta.Table, schema: newSchema}}, {"B", nt}} {
		rows, ok := e.rangeAll(c.who+": whole-table GetRange after the re-creation", c.t, c.t.lo(), c.t.hi(), allVersions)
		if ok {
			e.checkShape(c.who+": whole-table GetRange", rows, newSchema)
			e.diff(c.who+": the re-created table holds no row", []rowView(nil), viewRows(rows))
		}
	}

	// A, now up to date, writes the new shape; B reads it.
	k := tk.Key("n", tk.Integer(5))
	if e.ok("A: PutRow of the new key shape", ta.PutRow(e.ctx, k, []tk.Column{col("c", sv("new"), 0)})) {
		w := e.want(k, col("c", sv("new"), 0))
		e.expectRow("B reads A's row", nt, k, &w)
	}
}

// testRecreatedSameSchema: the same with an identical key schema. A's write
// lands in the new table (B reads it) or fails with ErrTableNotFound; it
// never vanishes, and the old table's rows never come back.
func testRecreatedSameSchema(e *env) {
	t := e.create("resame", schemaS, tk.TableOptions{})
	a, b := e.client(), e.other(t)
	ta, tb := on(a, t), on(b, t)
	k1, k2 := strKey("old"), strKey("new")
	e.must("A: PutRow (caches the table)", ta.PutRow(e.ctx, k1, []tk.Column{col("c", sv("old"), 0)}))
	e.must("B: DeleteTable", b.DeleteTable(e.ctx, t.Name()))
	e.must("B: CreateTable again, same schema", b.CreateTable(e.ctx, tk.TableMeta{Name: t.Name(), Key: schemaS}))

	r, found, err := ta.GetRow(e.ctx, k1)
	switch {
	case err != nil && !errors.Is(err, tk.ErrTableNotFound):
		e.t.Errorf("A: GetRow of the old table's row: got %v, want no error or ErrTableNotFound", err)
	case found:
		e.t.Errorf("A: GetRow found the deleted table's row %+v in the new table", viewRow(r))
	}
	err = ta.PutRow(e.ctx, k2, []tk.Column{col("c", sv("new"), 0)})
	var want []rowView
	switch {
	case err == nil:
		w := e.want(k2, col("c", sv("new"), 0))
		e.expectRow("B reads A's write into the re-created table", tb, k2, &w)
		want = []rowView{w}
	case errors.Is(err, tk.ErrTableNotFound):
		e.expectRow("B after A's refused write", tb, k2, nil)
	default:
		e.t.Errorf("A: PutRow into the re-created table: got %v, want success or ErrTableNotFound (SPEC §3)", err)
	}
	e.diff("B: the re-created table's content", want, e.scan("B: whole-table GetRange", tb, allVersions))
	e.diff("A: the re-created table's content", want, e.scan("A: whole-table GetRange", ta, allVersions))
}

// staleWrite is one of three writes a client with stale options makes to row k:
// a Put of another column, an Increment, and a conditional Put.
type staleWrite struct {
	name    string
	changes []tk.Change
	opts    []tk.WriteOption
	adds    tk.Column // what the write leaves, version 0 for now
}

// testStaleMaxVersionsRaised: MaxVersions 1; B raises it to 5 and writes 5
// versions of c; A, still caching MaxVersions 1, updates the row (a Put of
// another column, an Increment, a conditional Put), and B still reads all
// 5 versions of c (SPEC §3, second bullet).
func testStaleMaxVersionsRaised(e *env) {
	t := e.create("rmaxver", schemaS, tk.TableOptions{MaxVersions: 1})
	k := strKey("r")
	writes := []staleWrite{
		{"Put of another column", []tk.Change{tk.Put("x", sv("x"))}, nil, col("x", sv("x"), 0)},
		{"Increment", []tk.Change{tk.Increment("n", 1)}, nil, col("n", iv(1), 0)},
		{"conditional Put", []tk.Change{tk.Put("y", sv("y"))}, []tk.WriteOption{tk.ExpectExist}, col("y", sv("y"), 0)},
	}
	stale := make([]*tk.Client, len(writes))
	for i := range stale { // each caches MaxVersions 1
		stale[i] = e.client()
		_, _, err := stale[i].Table(t.Name()).GetRow(e.ctx, k)
		e.must("A: GetRow (caches the table)", err)
	}
	b := e.other(t)
	e.must("B: UpdateTable MaxVersions 5", b.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 5}))
	T := e.now()
	var changes []tk.Change
	cells := []tk.Column{}
	for i := range 5 {
		c := col("c", sv(fmt.Sprint("c", i)), T-int64(4-i)*1000)
		changes = append(changes, tk.PutAt(c.Name, c.Value, c.Version))
		cells = append(cells, c)
	}
	_, err := b.Table(t.Name()).UpdateRow(e.ctx, k, changes)
	e.must("B: UpdateRow of 5 versions of c", err)
	tb := on(b, t)
	w := e.want(k, cells...)
	e.expectRow("B reads its 5 versions", tb, k, &w, allVersions)
	for i, sw := range writes {
		_, err := stale[i].Table(t.Name()).UpdateRow(e.ctx, k, sw.changes, sw.opts...)
		if !e.ok("A (caching MaxVersions 1): UpdateRow "+sw.name, err) {
			continue
		}
		cells = append(cells, sw.adds)
		w := e.want(k, cells...)
		e.expectRow("B after A's stale "+sw.name+": all 5 versions of c stay", tb, k, &w, allVersions)
	}
}

// testStaleTTLRaised: TTL 1 day; B raises it to 5 days and writes a cell 3
// days old; A, still caching the 1-day TTL, updates the row, and the cell
// survives.
func testStaleTTLRaised(e *env) {
	t := e.create("rttl", schemaS, tk.TableOptions{TTL: 86400 * time.Second, MaxVersionOffset: 10 * 86400 * time.Second})
	k := strKey("r")
	writes := []staleWrite{
		{"Put of another column", []tk.Change{tk.Put("x", sv("x"))}, nil, col("x", sv("x"), 0)},
		{"Increment", []tk.Change{tk.Increment("n", 1)}, nil, col("n", iv(1), 0)},
		{"conditional Put", []tk.Change{tk.Put("y", sv("y"))}, []tk.WriteOption{tk.ExpectExist, tk.IfMatch(tk.ColumnFilter{Column: "d", Op: tk.Equal, Value: sv("d"), FilterIfMissing: true})}, col("y", sv("y"), 0)},
	}
	stale := make([]*tk.Client, len(writes))
	for i := range stale {
		stale[i] = e.client()
		_, _, err := stale[i].Table(t.Name()).GetRow(e.ctx, k)
		e.must("A: GetRow (caches the table)", err)
	}
	b := e.other(t)
	e.must("B: UpdateTable TTL 5 days", b.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: 5 * 86400 * time.Second}))
	T := e.now()
	cells := []tk.Column{col("c", sv("3 days old"), T-3*86400*1000), col("d", sv("d"), T)}
	tb := on(b, t)
	e.must("B: PutRow of a cell 3 days old", tb.PutRow(e.ctx, k, cells))
	w := e.want(k, cells...)
	e.expectRow("B reads its 3-day-old cell", tb, k, &w, allVersions)
	for i, sw := range writes {
		_, err := stale[i].Table(t.Name()).UpdateRow(e.ctx, k, sw.changes, sw.opts...)
		if !e.ok("A (caching TTL 1 day): UpdateRow "+sw.name, err) {
			continue
		}
		cells = append(cells, sw.adds)
		w := e.want(k, cells...)
		e.expectRow("B after A's stale "+sw.name+": the 3-day-old cell stays", tb, k, &w, allVersions)
	}
}

// hiddenSetup writes c = a1@v1, a2@v2, a3@v3 and d into row k of t
// (MaxVersions 3) and returns the cells.
func (e *env) hiddenSetup(t tbl, k tk.PrimaryKey) (v3 int64, d tk.Column) {
	e.t.Helper()
	T := e.now()
	d = col("d", sv("d"), T)
	e.put(t, k, col("c", sv("a1"), T-2000), col("c", sv("a2"), T-1000), col("c", sv("a3"), T), d)
	return T, d
}

// testHiddenDeleteVisible: MaxVersions 3 lowered to 1; deleting the one
// visible version of c leaves no c at all, never a2 (SPEC §5).
func testHiddenDeleteVisible(e *env) {
	t := e.create("hiddel", schemaS, tk.TableOptions{MaxVersions: 3})
	k := strKey("r")
	v3, d := e.hiddenSetup(t, k)
	e.must("UpdateTable MaxVersions 1", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 1}))
	w := e.want(k, col("c", sv("a3"), v3), d)
	e.expectRow("after lowering MaxVersions", t, k, &w, allVersions)
	e.update(t, k, tk.DeleteVersion("c", v3))
	w = e.want(k, d)
	e.expectRow("after deleting the visible version", t, k, &w, allVersions)
	e.expectRow("after deleting the visible version, through another client", on(e.fresh(), t), k, &w, allVersions)
	hidden := tk.ColumnFilter{Column: "c", Op: tk.Equal, Value: sv("a2"), AllVersions: true, FilterIfMissing: true}
	e.expectRow("a filter on a hidden version", t, k, nil, allVersions, tk.WithFilter(hidden))
	_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("x", sv("x"))}, tk.IfMatch(hidden))
	e.wantErr("a condition on a hidden version", err, tk.ErrConditionFailed)
	e.expectScan("the table", t, []rowView{w})
}

// testHiddenOverwriteVisible: the same with the visible version first
// overwritten, then deleted.
func testHiddenOverwriteVisible(e *env) {
	t := e.create("hidover", schemaS, tk.TableOptions{MaxVersions: 3})
	k := strKey("r")
	v3, d := e.hiddenSetup(t, k)
	e.must("UpdateTable MaxVersions 1", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 1}))
	e.update(t, k, tk.PutAt("c", sv("b3"), v3))
	w := e.want(k, col("c", sv("b3"), v3), d)
	e.expectRow("after overwriting the visible version", t, k, &w, allVersions)
	e.update(t, k, tk.DeleteVersion("c", v3))
	w = e.want(k, d)
	e.expectRow("after deleting the overwritten version", t, k, &w, allVersions)
	e.expectScan("the table", t, []rowView{w})
}

// testHiddenLoweredByOther: client B lowers MaxVersions; client A deletes
// the visible version once its cache has the change.
func testHiddenLoweredByOther(e *env) {
	t := e.create("hidother", schemaS, tk.TableOptions{MaxVersions: 3})
	k := strKey("r")
	a := e.client()
	ta := on(a, t)
	v3, d := e.hiddenSetup(t, k)
	w := e.want(k, col("c", sv("a3"), v3), col("c", sv("a2"), v3-1000), col("c", sv("a1"), v3-2000), d)
	e.expectRow("A caches the table", ta, k, &w, allVersions)
	b := e.other(t)
	e.must("B: UpdateTable MaxVersions 1", b.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 1}))
	m, err := a.DescribeTable(e.ctx, t.Name())
	e.must("A: DescribeTable", err)
	if m.Options.MaxVersions != 1 {
		e.t.Fatalf("A: DescribeTable after B lowered MaxVersions: %+v, want MaxVersions 1", m.Options)
	}
	_, err = ta.UpdateRow(e.ctx, k, []tk.Change{tk.DeleteVersion("c", v3)})
	e.must("A: UpdateRow DeleteVersion of the visible version", err)
	w = e.want(k, d)
	e.expectRow("A after its delete", ta, k, &w, allVersions)
	e.expectRow("B after A's delete", on(b, t), k, &w, allVersions)
}

// testHiddenStaleDelete: client A creates the table with MaxVersions 3 and
// writes c = a1 < a2 < a3; client B reads the row (and so caches
// MaxVersions 3); A lowers MaxVersions; B, still caching 3, deletes the
// newest version of c. The versions the lowering hid stay hidden, for A,
// for B and for a client opened afterwards, in every read, filter and
// condition (SPEC §5, last-but-one bullet): lowered to 1, no c is left;
// lowered to 2, c = a2 and never a1. B's delete goes through UpdateRow,
// BatchWriteRow and WriteAll, or is an overwrite of a3 followed by its
// delete. B's write succeeds or fails; either way nothing hidden shows.
// (B's own reads are not checked: a client may read with its cached
// options for as long as it caches them, SPEC §3.)
func testHiddenStaleDelete(e *env) {
	type via struct {
		name  string
		write func(c *tk.Client, t tbl, k tk.PrimaryKey, changes ...tk.Change) error
	}
	update := func(c *tk.Client, t tbl, k tk.PrimaryKey, changes ...tk.Change) error {
		_, err := on(c, t).UpdateRow(e.ctx, k, changes)
		return err
	}
	batch := func(c *tk.Client, t tbl, k tk.PrimaryKey, changes ...tk.Change) error {
		res, err := c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchUpdate(t.Name(), k, changes)})
		if err == nil && len(res) == 1 {
			err = res[0].Err
		}
		return err
	}
	writeAll := func(c *tk.Client, t tbl, k tk.PrimaryKey, changes ...tk.Change) error {
		_, err := c.WriteAll(e.ctx, []tk.BatchWrite{tk.BatchUpdate(t.Name(), k, changes)})
		return err
	}
	overwrite := func(c *tk.Client, t tbl, k tk.PrimaryKey, changes ...tk.Change) error {
		if err := update(c, t, k, tk.PutAt("c", sv("b3"), changes[0].Version)); err != nil {
			return err
		}
		return update(c, t, k, changes...)
	}
	for _, lowered := range []int{1, 2} {
		for _, v := range []via{{"UpdateRow", update}, {"BatchWriteRow", batch}, {"WriteAll", writeAll}, {"overwrite then UpdateRow", overwrite}} {
			what := fmt.Sprintf("MaxVersions 3 lowered to %d, B's stale delete through %s", lowered, v.name)
			t := e.create("hidstale", schemaS, tk.TableOptions{MaxVersions: 3})
			k := strKey("r")
			a, b := e.c, e.client()
			ta, tb := on(a, t), on(b, t)
			v3, d := e.hiddenSetup(t, k)
			all := e.want(k, col("c", sv("a3"), v3), col("c", sv("a2"), v3-1000), col("c", sv("a1"), v3-2000), d)
			e.expectRow(what+": B reads the row (caches MaxVersions 3)", tb, k, &all, allVersions)
			e.must(what+": A: UpdateTable", a.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: lowered}))
			err := v.write(b, t, k, tk.DeleteVersion("c", v3))
			if err != nil && !errors.Is(err, tk.ErrUnavailable) {
				e.t.Errorf("%s: %v", what, err)
			}
			var w rowView
			hidden := []string{"a1"}
			if lowered == 1 {
				w = e.want(k, d)
				hidden = append(hidden, "a2")
			} else {
				w = e.want(k, col("c", sv("a2"), v3-1000), d)
			}
			if err != nil { // refused: nothing changed; the row reads as lowering left it
				w = e.want(k, col("c", sv("a3"), v3), d)
				if v.name == "overwrite then UpdateRow" {
					w = e.want(k, col("c", sv("b3"), v3), d)
				}
				if lowered == 2 {
					w.Cells = append(w.Cells[:1], append([]cellView{{Name: "c", Value: fmtValue(sv("a2")), Version: v3 - 1000}}, w.Cells[1:]...)...)
				}
			}
			fresh := e.fresh()
			for _, r := range []struct {
				who string
				c   *tk.Client
				t   tbl
			}{{"A", a, ta}, {"a new client", fresh, on(fresh, t)}} {
				e.expectRow(what+": "+r.who+": GetRow", r.t, k, &w, allVersions)
				e.diff(what+": "+r.who+": GetRange", []rowView{w}, e.scan(r.who+": GetRange", r.t, allVersions))
				res, err := r.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: k, Options: []tk.ReadOption{allVersions}}})
				if e.ok(what+": "+r.who+": BatchGetRow", err) && len(res) == 1 && e.ok(what+": "+r.who+": BatchGetRow row", res[0].Err) {
					if !res[0].Found {
						e.t.Errorf("%s: %s: BatchGetRow found no row, want %+v", what, r.who, w)
					} else {
						e.diff(what+": "+r.who+": BatchGetRow", w, viewRow(res[0].Row))
					}
				}
				for _, h := range hidden {
					f := tk.ColumnFilter{Column: "c", Op: tk.Equal, Value: sv(h), AllVersions: true, FilterIfMissing: true}
					e.expectRow(what+": "+r.who+": a filter on hidden "+h, r.t, k, nil, allVersions, tk.WithFilter(f))
					_, err := r.t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("x", sv("x"))}, tk.IfMatch(f))
					e.wantErr(what+": "+r.who+": a condition on hidden "+h, err, tk.ErrConditionFailed)
				}
			}
		}
	}
}

// testIncarnationGeneration: DescribeTable reports one Incarnation until
// the table is created again, then another (or "" throughout on a backend
// that keeps none), and a Generation that starts at 1 and grows by exactly
// one per UpdateTable (or 0 throughout).
func testIncarnationGeneration(e *env) {
	t := e.create("incarn", schemaS, tk.TableOptions{})
	describe := func(what string, c *tk.Client) tk.TableMeta {
		e.t.Helper()
		m, err := c.DescribeTable(e.ctx, t.Name())
		e.must(what+": DescribeTable", err)
		return m
	}
	m1 := describe("after CreateTable", e.fresh())
	counts := m1.Generation != 0
	if counts && m1.Generation != 1 {
		e.t.Errorf("a new table's Generation is %d, want 1 (or 0 on a backend that counts none)", m1.Generation)
	}
	same := func(what string, m tk.TableMeta, gen int64) {
		e.t.Helper()
		if m.Incarnation != m1.Incarnation {
			e.t.Errorf("%s: Incarnation %q, want %q as when created", what, m.Incarnation, m1.Incarnation)
		}
		if !counts {
			gen = 0
		}
		if m.Generation != gen {
			e.t.Errorf("%s: Generation %d, want %d", what, m.Generation, gen)
		}
	}
	same("DescribeTable again", describe("again", e.c), 1)
	e.must("UpdateTable MaxVersions 2", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 2}))
	same("after one UpdateTable", describe("after one UpdateTable", e.fresh()), 2)
	e.must("UpdateTable TTL 2 days", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: 2 * 86400 * time.Second}))
	m3 := describe("after two UpdateTable", e.fresh())
	same("after two UpdateTable", m3, 3)
	same("after two UpdateTable, through a second backend", describe("second backend", e.other(t)), 3)
	if m3.Options.MaxVersions != 2 || m3.Options.TTL != 2*86400*time.Second {
		e.t.Errorf("options after two UpdateTable: %+v, want MaxVersions 2 and TTL 172800", m3.Options)
	}

	e.must("DeleteTable", e.c.DeleteTable(e.ctx, t.Name()))
	e.must("CreateTable again", e.c.CreateTable(e.ctx, tk.TableMeta{Name: t.Name(), Key: schemaS}))
	m4 := describe("after creating the table again", e.fresh())
	switch {
	case m1.Incarnation == "" && m4.Incarnation != "":
		e.t.Errorf("Incarnation was empty, then %q after the table was created again: a backend keeps incarnations or keeps none", m4.Incarnation)
	case m1.Incarnation != "" && m4.Incarnation == m1.Incarnation:
		e.t.Errorf("the table created again has the deleted one's Incarnation %q", m1.Incarnation)
	}
	if want := map[bool]int64{true: 1, false: 0}[counts]; m4.Generation != want {
		e.t.Errorf("the table created again has Generation %d, want %d", m4.Generation, want)
	}
	if m4.Options.MaxVersions != 1 || m4.Options.TTL != tk.NoExpiry {
		e.t.Errorf("the table created again kept the deleted one's options: %+v", m4.Options)
	}
}

// testConcurrentUpdateTable: two clients change different options at the
// same time, round after round; both changes stick every time.
func testConcurrentUpdateTable(e *env) {
	t := e.create("concupd", schemaS, tk.TableOptions{})
	a, b := e.client(), e.other(t)
	m0, err := e.fresh().DescribeTable(e.ctx, t.Name())
	e.must("DescribeTable", err)
	const rounds = 4
	for i := range rounds {
		mv, off := 2+i, time.Duration(3600*(i+1))*time.Second
		var wg sync.WaitGroup
		var errA, errB error
		wg.Go(func() { errA = a.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: mv}) })
		wg.Go(func() { errB = b.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersionOffset: off}) })
		wg.Wait()
		e.ok(fmt.Sprintf("round %d: A: UpdateTable MaxVersions %d", i, mv), errA)
		e.ok(fmt.Sprintf("round %d: B: UpdateTable MaxVersionOffset %v", i, off), errB)
		m, err := e.fresh().DescribeTable(e.ctx, t.Name())
		if !e.ok("DescribeTable", err) {
			continue
		}
		want := tk.TableOptions{TTL: tk.NoExpiry, MaxVersions: mv, MaxVersionOffset: off}
		e.diff(fmt.Sprintf("round %d: options after both changes", i), want, m.Options)
		if m0.Generation != 0 && m.Generation != m0.Generation+2*int64(i+1) {
			e.t.Errorf("round %d: Generation %d, want %d (two more per round)", i, m.Generation, m0.Generation+2*int64(i+1))
		}
	}
}

// testCallsAfterClose: after Close every Client and Table method fails
// with ErrClosed (the Rows iterator yields it), nothing reaches the store,
// and a second Close is nil.
func testCallsAfterClose(e *env) {
	t := e.create("closed", schemaS, tk.TableOptions{})
	k := strKey("r")
	e.put(t, k, col("c", sv("x"), 0))
	keep := e.want(k, col("c", sv("x"), 0))
	c := e.other(t)
	ct := c.Table(t.Name())
	_, _, err := ct.GetRow(e.ctx, k)
	e.must("GetRow before Close", err)
	e.ok("Close", c.Close())
	e.ok("Close again", c.Close())

	other := e.name("closednew")
	closed := func(what string, err error) {
		e.t.Helper()
		e.wantErr(what+" after Close", err, tk.ErrClosed)
	}
	closed("CreateTable", e.safe("CreateTable", func() error {
		return c.CreateTable(e.ctx, tk.TableMeta{Name: other, Key: schemaS})
	}))
	closed("DescribeTable", e.safe("DescribeTable", func() error { _, err := c.DescribeTable(e.ctx, t.Name()); return err }))
	closed("ListTables", e.safe("ListTables", func() error { _, err := c.ListTables(e.ctx); return err }))
	closed("UpdateTable", e.safe("UpdateTable", func() error {
		return c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{MaxVersions: 2})
	}))
	closed("DeleteTable", e.safe("DeleteTable", func() error { return c.DeleteTable(e.ctx, t.Name()) }))
	closed("PutRow", e.safe("PutRow", func() error { return ct.PutRow(e.ctx, k, []tk.Column{col("c", sv("y"), 0)}) }))
	closed("UpdateRow", e.safe("UpdateRow", func() error {
		_, err := ct.UpdateRow(e.ctx, k, []tk.Change{tk.Put("c", sv("y"))})
		return err
	}))
	closed("DeleteRow", e.safe("DeleteRow", func() error { return ct.DeleteRow(e.ctx, k) }))
	closed("GetRow", e.safe("GetRow", func() error { _, _, err := ct.GetRow(e.ctx, k); return err }))
	closed("GetRange", e.safe("GetRange", func() error { _, err := ct.GetRange(e.ctx, t.lo(), t.hi()); return err }))
	closed("BatchGetRow", e.safe("BatchGetRow", func() error {
		_, err := c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: k}})
		return err
	}))
	closed("BatchWriteRow", e.safe("BatchWriteRow", func() error {
		_, err := c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchDelete(t.Name(), k)})
		return err
	}))
	_ = e.safe("Rows", func() error {
		var rows, errs int
		var first error
		for _, err := range ct.Rows(e.ctx, t.lo(), t.hi()) {
			if err != nil {
				errs++
				if first == nil {
					first = err
				}
				continue
			}
			rows++
		}
		if rows != 0 || errs != 1 {
			e.t.Errorf("Rows after Close: %d rows and %d errors, want no row and one error", rows, errs)
		}
		if first != nil {
			closed("Rows", first)
		}
		return nil
	})
	_ = e.safe("As", func() error {
		var x any
		c.As(&x)
		return nil
	})
	// Nothing reached the store.
	if m, err := e.fresh().DescribeTable(e.ctx, t.Name()); e.ok("DescribeTable through an open client", err) {
		if m.Options.MaxVersions != 1 {
			e.t.Errorf("UpdateTable after Close changed the table: %+v", m.Options)
		}
	}
	_, err = e.fresh().DescribeTable(e.ctx, other)
	e.wantErr("the table CreateTable after Close was asked for", err, tk.ErrTableNotFound)
	e.expectScan("the table after the closed client's writes", t, []rowView{keep})
}

// testRowsCancelMidPage: Rows with PageSize(100) over 300 rows, cancelled
// after the 150th row: no row after the cancel, then exactly one
// context.Canceled.
func testRowsCancelMidPage(e *env) {
	t := e.create("cancel", schemaI, tk.TableOptions{})
	rows := make([]tk.Row, 300)
	for i := range rows {
		rows[i] = row(intKey(int64(i)), col("c", iv(int64(i)), 0))
	}
	e.seedBatch(t, rows)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	var got, after int
	var errs []error
	for r, err := range t.Rows(ctx, t.lo(), t.hi(), tk.PageSize(100)) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ctx.Err() != nil {
			after++
			continue
		}
		if want := fmtKey(intKey(int64(got))); fmtKey(r.Key) != want {
			e.t.Errorf("row %d: key %s, want %s", got, fmtKey(r.Key), want)
		}
		got++
		if got == 150 {
			cancel()
		}
	}
	if got != 150 || after != 0 {
		e.t.Errorf("Rows yielded %d rows before the cancel and %d after, want 150 and 0", got, after)
	}
	if len(errs) != 1 {
		e.t.Errorf("Rows yielded %d errors after the cancel, want exactly one: %v", len(errs), errs)
	}
	if len(errs) > 0 {
		e.wantErr("Rows after the cancel", errs[0], context.Canceled)
	}
}

// testBatchSameRowInOrder: writes to one row in one BatchWriteRow apply in
// the batch's order, each with the result it would have alone.
func testBatchSameRowInOrder(e *env) {
	t := e.create("samerow", schemaS, tk.TableOptions{})
	k, s := strKey("k"), strKey("s")
	e.put(t, k, col("c", iv(0), 0))
	name := t.Name()
	ws := []tk.BatchWrite{
		tk.BatchPut(name, k, []tk.Column{col("c", iv(1), 0)}),
		tk.BatchPut(name, s, []tk.Column{col("c", iv(9), 0)}),
		tk.BatchUpdate(name, k, []tk.Change{tk.Increment("n", 5)}),
		tk.BatchDelete(name, k, tk.ExpectExist),
		tk.BatchUpdate(name, k, []tk.Change{tk.Put("d", sv("x"))}, tk.ExpectExist),
		tk.BatchPut(name, k, []tk.Column{col("c", iv(2), 0)}, tk.ExpectNotExist),
		tk.BatchUpdate(name, k, []tk.Change{tk.Increment("n", 1)}),
	}
	wantErr := []error{nil, nil, nil, nil, tk.ErrConditionFailed, nil, nil}
	wantInc := [][]cellView{nil, nil, {{"n", "Integer(5)", e.now()}}, nil, nil, nil, {{"n", "Integer(1)", e.now()}}}
	res, err := e.c.BatchWriteRow(e.ctx, ws)
	if !e.ok("BatchWriteRow", err) {
		return
	}
	if len(res) != len(ws) {
		e.t.Fatalf("BatchWriteRow: %d results for %d writes", len(res), len(ws))
	}
	for i, r := range res {
		what := fmt.Sprintf("write #%d (%v)", i, ws[i].Kind)
		if wantErr[i] == nil {
			e.ok(what, r.Err)
		} else {
			e.wantErr(what, r.Err, wantErr[i])
		}
		e.diff(what+": increments", wantInc[i], viewRow(tk.Row{Columns: r.Increments}).Cells)
	}
	e.expectScan("after the batch", t, []rowView{
		e.want(k, col("c", iv(2), 0), col("n", iv(1), 0)),
		e.want(s, col("c", iv(9), 0)),
	})
}
