package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §16: secondary indexes. The Client keeps them over the required
// Backend calls, so every backend claims them (Client.Capabilities); the
// cases check the contract through the Client on each backend.

func indexCases() []testCase {
	return []testCase{
		{"Claimed", testIndexClaimed},
		{"OrderBoundsLimits", testIndexOrder},
		{"FiltersAndIncluded", testIndexFilters},
		{"UpdateMovesRow", testIndexMove},
		{"Deletes", testIndexDeletes},
		{"VersionDeleteReveals", testIndexReveal},
		{"TTLExpiry", testIndexTTL},
		{"RaiseMaxVersions", testIndexRaiseMaxVersions},
		{"RaiseTTL", testIndexRaiseTTL},
		{"MultiColumn", testIndexMultiColumn},
		{"Increment", testIndexIncrement},
		{"BadInput", testIndexBadInput},
		{"ReadOnly", testIndexReadOnly},
		{"AddDropReindex", testIndexAddDrop},
		{"BatchAndAtomic", testIndexBatchAtomic},
		{"AutoIncrement", testIndexAutoIncrement},
		{"AutoIncrementRefused", testIndexAutoIncrementRefused},
	}
}

var ixSchema = tk.KeySchema{{Name: "pk", Type: tk.TypeString}}

// indexTable creates a table with the given indexes.
func (e *env) indexTable(hint string, opts tk.TableOptions, specs ...tk.IndexSpec) tbl {
	e.t.Helper()
	name := e.name(hint)
	if err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: ixSchema, Options: opts, Indexes: specs}); err != nil {
		e.t.Fatalf("CreateTable %q with indexes: %v", name, err)
	}
	e.cleanupTable(name)
	return tbl{Table: e.c.Table(name), schema: ixSchema}
}

var byStatus = tk.IndexSpec{Name: "by_status", Columns: []tk.KeyColumn{{Name: "status", Type: tk.TypeString}}, Include: []string{"amount"}}

func statusKey(status, pk string) tk.PrimaryKey {
	return tk.Key("status", tk.String(status)).Add("pk", tk.String(pk))
}

func statusBound(v tk.Value) tk.PrimaryKey { return tk.Key("status", v).Add("pk", v) }

// indexKeys reads the whole index and returns "status/pk" of each row.
func (e *env) indexKeys(what string, ix *tk.IndexTable, opts ...tk.RangeOption) []string {
	e.t.Helper()
	lo, hi := statusBound(tk.InfMin), statusBound(tk.InfMax)
	var out []string
	for r, err := range ix.Rows(e.ctx, lo, hi, opts...) {
		if !e.ok(what, err) {
			return out
		}
		out = append(out, ixRowString(r))
	}
	return out
}

func ixRowString(r tk.Row) string {
	var parts []string
	for _, p := range r.Key {
		parts = append(parts, p.Value.String())
	}
	return strings.Join(parts, "/")
}

func testIndexClaimed(e *env) {
	if !e.c.Capabilities().SecondaryIndex {
		e.t.Error("Client.Capabilities().SecondaryIndex is false; the Client keeps indexes on every backend")
	}
	t := e.indexTable("claimed", tk.TableOptions{}, byStatus)
	m, err := e.fresh().DescribeTable(e.ctx, t.Name())
	e.must("DescribeTable", err)
	if len(m.Indexes) != 1 || m.Indexes[0].Name != "by_status" || m.Indexes[0].State != tk.IndexReady ||
		!slices.Equal(m.Indexes[0].Include, []string{"amount"}) || m.Indexes[0].Columns[0] != byStatus.Columns[0] {
		e.t.Errorf("DescribeTable reports indexes %+v, want by_status ready", m.Indexes)
	}
	names, err := e.c.ListTables(e.ctx)
	e.must("ListTables", err)
	for _, n := range names {
		if tk.IsReservedName(n) {
			e.t.Errorf("ListTables shows the index storage table %q", n)
		}
	}
	if !slices.Contains(names, t.Name()) {
		e.t.Errorf("ListTables lacks %q", t.Name())
	}
}

// seedStatus writes rows a..f with sparse statuses.
func (e *env) seedStatus(t tbl) {
	e.t.Helper()
	now := e.now()
	rows := map[string][]tk.Column{
		"a": {col("status", tk.String("open"), now), col("amount", tk.Integer(10), now)},
		"b": {col("status", tk.String("closed"), now), col("amount", tk.Integer(20), now)},
		"c": {col("amount", tk.Integer(30), now)}, // no status: not indexed
		"d": {col("status", tk.String("open"), now), col("amount", tk.Integer(40), now), col("note", tk.String("x"), now)},
		"e": {col("status", tk.String("pending"), now)},
		"f": {col("status", tk.String("open"), now), col("amount", tk.Integer(60), now)},
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		e.put(t, strKey(k), rows[k]...)
	}
}

func testIndexOrder(e *env) {
	t := e.indexTable("order", tk.TableOptions{}, byStatus)
	e.seedStatus(t)
	ix := t.Index("by_status")
	all := []string{"closed/b", "open/a", "open/d", "open/f", "pending/e"}
	e.diff("forward", all, e.indexKeys("forward", ix))
	rev := slices.Clone(all)
	slices.Reverse(rev)
	var got []string
	for r, err := range ix.Rows(e.ctx, statusBound(tk.InfMax), statusBound(tk.InfMin), tk.Backward()) {
		if e.ok("backward", err) {
			got = append(got, ixRowString(r))
		}
	}
	e.diff("backward", rev, got)
	// Bounds: the "open" prefix, and an exact start.
	got = nil
	for r, err := range ix.Rows(e.ctx, tk.Key("status", tk.String("open")).Add("pk", tk.InfMin), tk.Key("status", tk.String("open")).Add("pk", tk.InfMax)) {
		if e.ok("prefix", err) {
			got = append(got, ixRowString(r))
		}
	}
	e.diff("open prefix", []string{"open/a", "open/d", "open/f"}, got)
	res, err := ix.GetRange(e.ctx, statusKey("open", "d"), statusBound(tk.InfMax))
	if e.ok("GetRange from open/d", err) {
		e.diff("from open/d", []string{"open/d", "open/f", "pending/e"}, rowStrings(res.Rows))
	}
	res, err = ix.GetRange(e.ctx, statusKey("open", "d"), statusBound(tk.InfMin), tk.Backward())
	if e.ok("GetRange backward from open/d", err) {
		e.diff("backward from open/d", []string{"open/d", "open/a", "closed/b"}, rowStrings(res.Rows))
	}
	// Limits and resume tokens, both ways.
	for _, back := range []bool{false, true} {
		lo, hi := statusBound(tk.InfMin), statusBound(tk.InfMax)
		opts := []tk.RangeOption{tk.Limit(2)}
		want := all
		if back {
			lo, hi = hi, lo
			opts = append(opts, tk.Backward())
			want = rev
		}
		var seen []string
		for range 5 {
			res, err := ix.GetRange(e.ctx, lo, hi, opts...)
			if !e.ok("GetRange with Limit", err) {
				break
			}
			if len(res.Rows) > 2 {
				e.t.Errorf("Limit 2 returned %d rows", len(res.Rows))
			}
			seen = append(seen, rowStrings(res.Rows)...)
			if res.Next == nil {
				break
			}
			opts = append(opts[:len(opts):len(opts)], tk.ResumeFrom(res.Next))
		}
		e.diff(fmt.Sprintf("pages of 2 (backward %v)", back), want, seen)
	}
	// GetRow of an index key.
	r, found, err := ix.GetRow(e.ctx, statusKey("open", "d"))
	if e.ok("index GetRow", err) {
		if !found {
			e.t.Error("index GetRow open/d: not found")
		} else if v, _ := r.Get("amount"); v != tk.Integer(40) {
			e.t.Errorf("index GetRow open/d: amount %v, want 40", v)
		} else if _, has := r.Get("note"); has {
			e.t.Error("index GetRow returned column note, which the index does not include")
		}
	}
	if _, found, err := ix.GetRow(e.ctx, statusKey("open", "b")); e.ok("index GetRow open/b", err) && found {
		e.t.Error("index GetRow open/b: found, but row b's status is closed")
	}
	tkey, err := ix.TableKey(e.ctx, statusKey("open", "d"))
	if e.ok("TableKey", err) && !tkey.Equal(strKey("d")) {
		e.t.Errorf("TableKey = %v, want pk=d", tkey)
	}
}

func rowStrings(rs []tk.Row) []string {
	var out []string
	for _, r := range rs {
		out = append(out, ixRowString(r))
	}
	return out
}

func testIndexFilters(e *env) {
	t := e.indexTable("filters", tk.TableOptions{}, byStatus)
	e.seedStatus(t)
	ix := t.Index("by_status")
	f := tk.SingleColumnValue("amount", tk.GreaterEqual, tk.Integer(40)).Required()
	e.diff("filter amount >= 40", []string{"open/d", "open/f"}, e.indexKeys("filter", ix, tk.WithFilter(f)))
	e.diff("filter with Limit 1", []string{"open/d"}, e.indexKeys("filter limit", ix, tk.WithFilter(f), tk.Limit(1)))
	for r, err := range ix.Rows(e.ctx, statusBound(tk.InfMin), statusBound(tk.InfMax), tk.Columns("pk")) {
		if e.ok("projection", err) && len(r.Columns) != 0 {
			e.t.Errorf("Columns(pk) returned cells %v", r.Columns)
		}
	}
	var amounts []string
	for r, err := range ix.Rows(e.ctx, statusBound(tk.InfMin), statusBound(tk.InfMax)) {
		if e.ok("included", err) {
			v, ok := r.Get("amount")
			amounts = append(amounts, fmt.Sprintf("%v:%v", ok, fmtValue(v)))
		}
	}
	e.diff("included amounts", []string{"true:Integer(20)", "true:Integer(10)", "true:Integer(40)", "true:Integer(60)", "false:InvalidValue(type 0)"}, amounts)
	_, err := ix.GetRange(e.ctx, statusBound(tk.InfMin), statusBound(tk.InfMax), tk.WithFilter(tk.SingleColumnValue("note", tk.Equal, tk.String("x"))))
	e.wantErr("filter on a column the index lacks", err, tk.ErrInvalidArgument, "note")
}

func testIndexMove(e *env) {
	t := e.indexTable("move", tk.TableOptions{}, byStatus)
	e.seedStatus(t)
	ix := t.Index("by_status")
	e.update(t, strKey("a"), tk.Put("status", tk.String("closed")))
	e.put(t, strKey("f"), col("status", tk.String("zzz"), 0))
	e.update(t, strKey("c"), tk.Put("status", tk.String("new")))
	e.diff("after moves", []string{"closed/a", "closed/b", "new/c", "open/d", "pending/e", "zzz/f"}, e.indexKeys("moves", ix))
	if _, found, err := ix.GetRow(e.ctx, statusKey("open", "a")); e.ok("GetRow old key", err) && found {
		e.t.Error("the row's old index key is still found")
	}
	// An update that leaves the indexed column alone keeps the row, and an
	// included column's new value shows.
	e.update(t, strKey("d"), tk.Put("amount", tk.Integer(41)))
	r, found, err := ix.GetRow(e.ctx, statusKey("open", "d"))
	if e.ok("GetRow open/d", err) {
		if v, _ := r.Get("amount"); !found || v != tk.Integer(41) {
			e.t.Errorf("open/d after an update of amount: found %v amount %v, want 41", found, v)
		}
	}
}

func testIndexDeletes(e *env) {
	t := e.indexTable("deletes", tk.TableOptions{MaxVersions: 2}, byStatus)
	e.seedStatus(t)
	ix := t.Index("by_status")
	e.must("DeleteRow a", t.DeleteRow(e.ctx, strKey("a")))
	e.update(t, strKey("b"), tk.DeleteColumn("status"))
	// Row d's only status version deleted: out of the index.
	r, _, err := t.GetRow(e.ctx, strKey("d"))
	e.must("GetRow d", err)
	v := r.Versions("status")
	if len(v) != 1 {
		e.t.Fatalf("row d has %d status versions", len(v))
	}
	e.update(t, strKey("d"), tk.DeleteVersion("status", v[0].Version))
	e.diff("after deletes", []string{"open/f", "pending/e"}, e.indexKeys("deletes", ix))
}

func testIndexReveal(e *env) {
	t := e.indexTable("reveal", tk.TableOptions{MaxVersions: 3}, byStatus)
	ix := t.Index("by_status")
	v1 := e.now()
	e.put(t, strKey("a"), col("status", tk.String("one"), v1))
	e.clock.Advance(time.Second)
	v2 := e.now()
	e.update(t, strKey("a"), tk.PutAt("status", tk.String("two"), v2))
	e.diff("newest only", []string{"two/a"}, e.indexKeys("before", ix))
	e.update(t, strKey("a"), tk.DeleteVersion("status", v2))
	e.diff("older value revealed", []string{"one/a"}, e.indexKeys("revealed", ix))
	// A put replaces every version: nothing left to reveal.
	e.put(t, strKey("a"), col("status", tk.String("three"), 0))
	e.diff("after a put", []string{"three/a"}, e.indexKeys("put", ix))
}

func testIndexTTL(e *env) {
	t := e.indexTable("ttl", tk.TableOptions{TTL: tk.MinTTL}, byStatus)
	ix := t.Index("by_status")
	e.put(t, strKey("old"), col("status", tk.String("s"), 0))
	e.clock.Advance(tk.MinTTL / 2)
	e.put(t, strKey("young"), col("status", tk.String("s"), 0))
	e.diff("before expiry", []string{"s/old", "s/young"}, e.indexKeys("before", ix))
	e.clock.Advance(tk.MinTTL/2 + time.Second)
	e.diff("after the first expires", []string{"s/young"}, e.indexKeys("after", ix))
	if _, found, err := ix.GetRow(e.ctx, statusKey("s", "old")); e.ok("GetRow expired", err) && found {
		e.t.Error("index GetRow found a row whose indexed value expired")
	}
}

func testIndexMultiColumn(e *env) {
	spec := tk.IndexSpec{Name: "by_cg", Columns: []tk.KeyColumn{{Name: "city", Type: tk.TypeString}, {Name: "age", Type: tk.TypeInteger}}}
	t := e.indexTable("multi", tk.TableOptions{}, spec)
	ix := t.Index("by_cg")
	e.put(t, strKey("a"), col("city", tk.String("rome"), 0), col("age", tk.Integer(30), 0))
	e.put(t, strKey("b"), col("city", tk.String("oslo"), 0), col("age", tk.Integer(-5), 0))
	e.put(t, strKey("c"), col("city", tk.String("rome"), 0), col("age", tk.Integer(7), 0))
	e.put(t, strKey("d"), col("city", tk.String("rome"), 0)) // no age: not indexed
	e.update(t, strKey("d"), tk.Put("age", tk.Integer(1)))
	e.update(t, strKey("b"), tk.Put("city", tk.String("rome")))
	lo := tk.Key("city", tk.InfMin).Add("age", tk.InfMin).Add("pk", tk.InfMin)
	hi := tk.Key("city", tk.InfMax).Add("age", tk.InfMax).Add("pk", tk.InfMax)
	var got []string
	for r, err := range ix.Rows(e.ctx, lo, hi) {
		if e.ok("multi", err) {
			got = append(got, ixRowString(r))
		}
	}
	e.diff("city, age (negative first), pk", []string{"rome/-5/b", "rome/1/d", "rome/7/c", "rome/30/a"}, got)
	// An index whose only column is a key column holds every row.
	keyOnly := tk.IndexSpec{Name: "by_pk", Columns: []tk.KeyColumn{{Name: "pk"}}, Include: []string{"city"}}
	t2 := e.indexTable("keyonly", tk.TableOptions{}, keyOnly)
	e.put(t2, strKey("x"))
	e.update(t2, strKey("y"), tk.Put("city", tk.String("oslo")))
	got = nil
	for r, err := range t2.Index("by_pk").Rows(e.ctx, tk.Key("pk", tk.InfMin), tk.Key("pk", tk.InfMax)) {
		if e.ok("key-only index", err) {
			got = append(got, ixRowString(r))
		}
	}
	e.diff("key-only index", []string{"x", "y"}, got)
}

func testIndexIncrement(e *env) {
	spec := tk.IndexSpec{Name: "by_n", Columns: []tk.KeyColumn{{Name: "n", Type: tk.TypeInteger}}}
	t := e.indexTable("incr", tk.TableOptions{}, spec)
	ix := t.Index("by_n")
	for range 3 {
		e.update(t, strKey("a"), tk.Increment("n", 5))
	}
	var got []string
	for r, err := range ix.Rows(e.ctx, tk.Key("n", tk.InfMin).Add("pk", tk.InfMin), tk.Key("n", tk.InfMax).Add("pk", tk.InfMax)) {
		if e.ok("increment", err) {
			got = append(got, ixRowString(r))
		}
	}
	e.diff("after three increments", []string{"15/a"}, got)
}

func testIndexBadInput(e *env) {
	t := e.indexTable("bad", tk.TableOptions{}, byStatus)
	ix := t.Index("by_status")
	err := t.PutRow(e.ctx, strKey("a"), []tk.Column{{Name: "status", Value: tk.Integer(3)}})
	e.wantErr("put of an Integer into a String index column", err, tk.ErrInvalidArgument, "by_status", "status")
	_, err = t.UpdateRow(e.ctx, strKey("a"), []tk.Change{tk.Put("status", tk.String(strings.Repeat("x", 1025)))})
	e.wantErr("a 1025-byte index value", err, tk.ErrInvalidArgument, "status", "1024")
	if _, found, err := t.GetRow(e.ctx, strKey("a")); e.ok("GetRow after refusals", err) && found {
		e.t.Error("a refused write wrote the row")
	}
	e.diff("index after refusals", []string(nil), e.indexKeys("after refusals", ix))
	name := e.name("badspec")
	bad := []struct {
		what  string
		specs []tk.IndexSpec
		code  error
		words []string
	}{
		{"six indexes", slices.Repeat([]tk.IndexSpec{byStatus}, 6), tk.ErrInvalidArgument, []string{"6", "5"}},
		{"a Double column", []tk.IndexSpec{{Name: "d", Columns: []tk.KeyColumn{{Name: "x", Type: tk.TypeDouble}}}}, tk.ErrInvalidArgument, []string{"x", "Double"}},
		{"no column", []tk.IndexSpec{{Name: "none"}}, tk.ErrInvalidArgument, []string{"none", "1-4"}},
		{"five columns", []tk.IndexSpec{{Name: "wide", Columns: []tk.KeyColumn{{Name: "a", Type: tk.TypeString}, {Name: "b", Type: tk.TypeString}, {Name: "c", Type: tk.TypeString}, {Name: "d", Type: tk.TypeString}, {Name: "e", Type: tk.TypeString}}}}, tk.ErrInvalidArgument, []string{"wide", "5"}},
		{"33 included", []tk.IndexSpec{{Name: "inc", Columns: byStatus.Columns, Include: manyNames(33)}}, tk.ErrInvalidArgument, []string{"inc", "33", "32"}},
		{"a key column of another type", []tk.IndexSpec{{Name: "kt", Columns: []tk.KeyColumn{{Name: "pk", Type: tk.TypeInteger}}}}, tk.ErrInvalidArgument, []string{"kt", "pk"}},
		{"a duplicate name", []tk.IndexSpec{byStatus, byStatus}, tk.ErrInvalidArgument, []string{"by_status"}},
	}
	for _, b := range bad {
		err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: ixSchema, Indexes: b.specs})
		e.wantErr("CreateTable with "+b.what, err, b.code, b.words...)
		if err == nil {
			e.cleanupTable(name)
		}
	}
	if _, err := e.c.DescribeTable(e.ctx, name); !errors.Is(err, tk.ErrTableNotFound) {
		e.t.Errorf("a refused CreateTable left a table: DescribeTable says %v", err)
	}
	_, err = ix.GetRange(e.ctx, statusBound(tk.InfMin), statusBound(tk.InfMax), tk.MaxVersions(2))
	e.wantErr("index read with MaxVersions 2", err, tk.ErrInvalidArgument, "MaxVersions")
	_, err = ix.GetRange(e.ctx, strKey("a"), strKey("b"))
	e.wantErr("index range over the table's key", err, tk.ErrInvalidArgument)
	_, _, err = t.Index("nope").GetRow(e.ctx, strKey("a"))
	e.wantErr("an index that does not exist", err, tk.ErrInvalidArgument, "nope")
}

func manyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i)
	}
	return out
}

func testIndexReadOnly(e *env) {
	t := e.indexTable("readonly", tk.TableOptions{}, byStatus)
	e.seedStatus(t)
	m, err := e.c.DescribeTable(e.ctx, t.Name())
	e.must("DescribeTable", err)
	storage := m.Indexes[0].Storage
	if !tk.IsReservedName(storage) {
		e.t.Fatalf("index storage %q is not a reserved name", storage)
	}
	// An index handle has no write (IndexTable has no write method); its
	// reads name a key over the index, not the table.
	_, _, err = t.Index("by_status").GetRow(e.ctx, strKey("a"))
	e.wantErr("an index GetRow by the table's key", err, tk.ErrInvalidArgument)
	// The table's own reads never see an entry.
	rows, _ := e.rangeAll("table range", t, t.lo(), t.hi())
	if len(rows) != 6 {
		e.t.Errorf("the table's range holds %d rows, want 6", len(rows))
	}
}

func testIndexAddDrop(e *env) {
	t := e.create("adddrop", ixSchema, tk.TableOptions{})
	e.seedStatus(t)
	c := tk.NewClient(e.b, tk.WithClock(e.clock), tk.WithMetaCacheTTL(time.Millisecond), tk.WithIndexGrace(time.Minute))
	e.must("AddIndex", c.AddIndex(e.ctx, t.Name(), byStatus))
	ix := c.Table(t.Name()).Index("by_status")
	all := []string{"closed/b", "open/a", "open/d", "open/f", "pending/e"}
	e.diff("after AddIndex", all, e.indexKeys("added", ix))
	rep, err := c.Reindex(e.ctx, t.Name(), "by_status", true)
	if e.ok("Reindex verify", err) && (!rep.Exact() || rep.Rows != 6 || rep.Entries != 5) {
		e.t.Errorf("Reindex verify after AddIndex: %+v, want exact, 6 rows, 5 entries", rep)
	}
	err = c.AddIndex(e.ctx, t.Name(), byStatus)
	e.wantErr("AddIndex of an existing name", err, tk.ErrInvalidArgument, "by_status")
	// Entries of old values are extra, never seen; a reindex past the
	// grace period removes them.
	t2 := c.Table(t.Name())
	_, err = t2.UpdateRow(e.ctx, strKey("a"), []tk.Change{tk.Put("status", tk.String("zzz"))})
	e.must("UpdateRow", err)
	e.must("DeleteRow", t2.DeleteRow(e.ctx, strKey("b")))
	rep, err = c.Reindex(e.ctx, t.Name(), "by_status", true)
	if e.ok("Reindex verify", err) && rep.Extra != 2 || rep.Missing != 0 {
		e.t.Errorf("Reindex verify after a move and a delete: %+v, want 2 extra", rep)
	}
	e.clock.Advance(2 * time.Minute)
	rep, err = c.Reindex(e.ctx, t.Name(), "by_status", false)
	if e.ok("Reindex", err) && rep.Removed != 2 {
		e.t.Errorf("Reindex: %+v, want 2 removed", rep)
	}
	rep, err = c.Reindex(e.ctx, t.Name(), "by_status", true)
	if e.ok("Reindex verify", err) && !rep.Exact() {
		e.t.Errorf("Reindex verify after repair: %+v, want exact", rep)
	}
	e.diff("after repair", []string{"open/d", "open/f", "pending/e", "zzz/a"}, e.indexKeys("repaired", ix))
	e.must("DropIndex", c.DropIndex(e.ctx, t.Name(), "by_status"))
	_, err = ix.GetRange(e.ctx, statusBound(tk.InfMin), statusBound(tk.InfMax))
	e.wantErr("a read of a dropped index", err, tk.ErrInvalidArgument, "by_status")
	e.put(t, strKey("g"), col("status", tk.String("open"), 0)) // e.c may still have the index cached: its writes go on
}

func testIndexBatchAtomic(e *env) {
	spec := tk.IndexSpec{Name: "by_ab", Columns: []tk.KeyColumn{{Name: "a", Type: tk.TypeString}, {Name: "b", Type: tk.TypeString}}}
	t := e.indexTable("batch", tk.TableOptions{}, spec, byStatus)
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{
		tk.BatchPut(t.Name(), strKey("p"), []tk.Column{{Name: "status", Value: tk.String("s1")}, {Name: "a", Value: tk.String("x")}, {Name: "b", Value: tk.String("y")}}),
		tk.BatchUpdate(t.Name(), strKey("q"), []tk.Change{tk.Put("status", tk.String("s2"))}),
		tk.BatchPut(t.Name(), strKey("r"), []tk.Column{{Name: "status", Value: tk.Integer(1)}}),
	})
	if e.ok("BatchWriteRow", err) {
		e.ok("batch write 0", res[0].Err)
		e.ok("batch write 1", res[1].Err)
		e.wantErr("batch write of a wrongly typed index column", res[2].Err, tk.ErrInvalidArgument, "status")
	}
	e.diff("index after the batch", []string{"s1/p", "s2/q"}, e.indexKeys("batch", t.Index("by_status")))
	if !e.c.Capabilities().AtomicWrite {
		return
	}
	_, err = t.AtomicWrite(e.ctx, []tk.BatchWrite{
		tk.BatchUpdate("", strKey("p"), []tk.Change{tk.Put("b", tk.String("z")), tk.Put("status", tk.String("s3"))}),
	})
	e.must("AtomicWrite", err)
	_, err = t.AtomicWrite(e.ctx, []tk.BatchWrite{tk.BatchPut("", strKey("q"), []tk.Column{{Name: "status", Value: tk.String("s0")}})})
	e.must("AtomicWrite", err)
	e.diff("index after the atomic write", []string{"s0/q", "s3/p"}, e.indexKeys("atomic", t.Index("by_status")))
	var got []string
	lo := tk.Key("a", tk.InfMin).Add("b", tk.InfMin).Add("pk", tk.InfMin)
	hi := tk.Key("a", tk.InfMax).Add("b", tk.InfMax).Add("pk", tk.InfMax)
	for r, err := range t.Index("by_ab").Rows(e.ctx, lo, hi) {
		if e.ok("by_ab", err) {
			got = append(got, ixRowString(r))
		}
	}
	e.diff("two-column index after the atomic write", []string{"x/z/p"}, got)
	// A failed condition writes nothing, and the index does not show it.
	_, err = t.AtomicWrite(e.ctx, []tk.BatchWrite{
		tk.BatchUpdate("", strKey("p"), []tk.Change{tk.Put("status", tk.String("s9")), tk.Put("a", tk.String("w"))}, tk.ExpectNotExist),
	})
	e.wantErr("AtomicWrite with a failing condition", err, tk.ErrConditionFailed)
	e.diff("index after the failed atomic write", []string{"s0/q", "s3/p"}, e.indexKeys("atomic failed", t.Index("by_status")))
}

// testIndexAutoIncrementRefused: on a backend that claims auto-increment
// keys but cannot commit a row write with its index entries
// (Capabilities.IndexedWrite), a table with an auto-increment key column
// cannot be indexed (the index notes in index.go say why): CreateTable
// with an index and AddIndex are refused with ErrUnimplemented naming the
// table, the column and the missing capability, before anything is
// stored, and the table stays usable.
func testIndexAutoIncrementRefused(e *env) {
	caps := tk.CapabilitiesOf(e.b)
	if !caps.AutoIncrement {
		e.t.Skip("the backend has no auto-increment key columns (S14 checks their refusal)")
	}
	if caps.IndexedWrite {
		e.t.Skip("the backend has IndexedWrite: S16/AutoIncrement checks such an index")
	}
	byR := tk.IndexSpec{Name: "by_r", Columns: []tk.KeyColumn{{Name: "r", Type: tk.TypeInteger}}}
	byV := tk.IndexSpec{Name: "by_v", Columns: []tk.KeyColumn{{Name: "v", Type: tk.TypeString}}}
	name := e.name("aiidx")
	err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schemaAI, Indexes: []tk.IndexSpec{byV}})
	e.wantErr("CreateTable of an auto-increment table with an index", err, tk.ErrUnimplemented, name, `"s"`, "auto-increment", "IndexedWrite")
	if err == nil {
		e.cleanupTable(name)
	}
	if _, err := e.fresh().DescribeTable(e.ctx, name); !errors.Is(err, tk.ErrTableNotFound) {
		e.t.Errorf("the refused CreateTable left a table: DescribeTable says %v", err)
	}
	names, err := e.c.ListTables(e.ctx)
	e.must("ListTables", err)
	if slices.Contains(names, name) {
		e.t.Errorf("ListTables shows the refused table %q", name)
	}

	t := e.create("aiadd", schemaAI, tk.TableOptions{})
	for _, spec := range []tk.IndexSpec{byV, byR} {
		err := e.c.AddIndex(e.ctx, t.Name(), spec)
		e.wantErr("AddIndex "+spec.Name+" to an auto-increment table", err, tk.ErrUnimplemented, t.Name(), `"s"`, "auto-increment", "IndexedWrite")
	}
	m, err := e.fresh().DescribeTable(e.ctx, t.Name())
	if e.ok("DescribeTable", err) && len(m.Indexes) != 0 {
		e.t.Errorf("the refused AddIndex left indexes %+v", m.Indexes)
	}
	var key tk.PrimaryKey
	if e.ok("PutRow with AutoIncrement after the refusals", t.PutRow(e.ctx, aiKey("p", tk.AutoIncrement, 1), []tk.Column{col("v", tk.String("x"), 0)}, tk.ReturnKey(&key))) {
		e.assigned("PutRow's ReturnKey", key, aiKey("p", tk.AutoIncrement, 1))
	}
}
