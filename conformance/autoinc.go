package conformance

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	tk "github.com/tablekit/tablekit"
)

// SPEC §14: auto-increment key columns. On a backend that claims
// Capabilities.AutoIncrement every case checks the contract; on one that
// does not, every case checks that creating such a table is refused with
// ErrUnimplemented and creates nothing.

func autoIncCases() []testCase {
	return []testCase{
		{"Placeholder", testAutoIncPlaceholder},
		{"Conditions", testAutoIncConditions},
		{"UniqueIncreasing16Writers", testAutoIncConcurrent},
		{"PartitionKeys", testAutoIncPartitions},
		{"RealKey", testAutoIncRealKey},
		{"AboveRealValues", testAutoIncAboveReal},
		{"BesideMaxInt64", testAutoIncMaxInt64},
		{"Refused", testAutoIncRefused},
		{"ChangeFeed", testAutoIncFeed},
	}
}

// schemaAI is a key whose second column is auto-increment: partition key
// p, sequence s, then part r.
var schemaAI = tk.KeySchema{
	{Name: "p", Type: tk.TypeString},
	{Name: "s", Type: tk.TypeInteger, AutoIncrement: true},
	{Name: "r", Type: tk.TypeInteger},
}

func aiKey(p string, s tk.Value, r int64) tk.PrimaryKey {
	return tk.Key("p", tk.String(p)).Add("s", s).Add("r", tk.Integer(r))
}

// autoIncTable creates an auto-increment table and reports true on a
// backend that claims auto-increment; on one that does not, it checks the
// refusal and reports false.
func (e *env) autoIncTable(hint string) (tbl, bool) {
	e.t.Helper()
	caps := tk.CapabilitiesOf(e.b)
	if got := e.c.Capabilities().AutoIncrement; got != caps.AutoIncrement {
		e.t.Errorf("Client.Capabilities().AutoIncrement = %v, the backend's is %v", got, caps.AutoIncrement)
	}
	if caps.AutoIncrement {
		t := e.create(hint, schemaAI, tk.TableOptions{})
		m, err := e.fresh().DescribeTable(e.ctx, t.Name())
		e.must("DescribeTable", err)
		var flags []bool
		for _, kc := range m.Key {
			flags = append(flags, kc.AutoIncrement)
		}
		if !slices.Equal(flags, []bool{false, true, false}) {
			e.t.Errorf("DescribeTable reports auto-increment flags %v, want [false true false]", flags)
		}
		return t, true
	}
	name := e.name(hint)
	err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schemaAI})
	e.wantErr("CreateTable with an auto-increment column on a backend without them", err, tk.ErrUnimplemented, name)
	if err == nil {
		e.cleanupTable(name)
	}
	if _, err := e.fresh().DescribeTable(e.ctx, name); err == nil {
		e.t.Errorf("the refused CreateTable created table %q", name)
	}
	return tbl{}, false
}

// assigned checks that key is the key of a write of want whose sequence was
// AutoIncrement: the same but for a positive Integer sequence. It returns
// the sequence, or 0 (after reporting) when key is not such a key.
func (e *env) assigned(what string, key, want tk.PrimaryKey) int64 {
	e.t.Helper()
	if len(key) != 3 || key.AutoIncrementIndex() >= 0 {
		e.t.Errorf("%s: returned key %v, want %v with its sequence assigned", what, fmtKey(key), fmtKey(want))
		return 0
	}
	s, ok := key[1].Value.Int()
	if !ok || s <= 0 || key[1].Name != "s" || !key.Equal(want.WithAutoIncrement(s)) {
		e.t.Errorf("%s: returned key %v, want %v with a positive Integer sequence", what, fmtKey(key), fmtKey(want))
		return 0
	}
	return s
}

// testAutoIncPlaceholder: a put, an update, a batch write and an atomic
// write whose key holds AutoIncrement each create a row and return its
// full key; the row reads back under that key; ReturnKey of a write with
// a real key gives that key.
func testAutoIncPlaceholder(e *env) {
	t, ok := e.autoIncTable("aiput")
	if !ok {
		return
	}
	ph := aiKey("a", tk.AutoIncrement, 1)
	var k1 tk.PrimaryKey
	e.ok("PutRow with AutoIncrement", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(1), 0)}, tk.ReturnKey(&k1)))
	s1 := e.assigned("PutRow's ReturnKey", k1, ph)
	res, err := t.UpdateRow(e.ctx, aiKey("a", tk.AutoIncrement, 2), []tk.Change{tk.Put("c", iv(2)), tk.Increment("n", 5)})
	var s2 int64
	if e.ok("UpdateRow with AutoIncrement", err) {
		s2 = e.assigned("UpdateRow's UpdateResult.Key", res.Key, aiKey("a", tk.AutoIncrement, 2))
		if len(res.Increments) != 1 || !res.Increments[0].Value.Equal(iv(5)) {
			e.t.Errorf("UpdateRow with AutoIncrement: increments %+v, want n = 5", res.Increments)
		}
	}
	var k3 tk.PrimaryKey
	bres, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{
		tk.BatchPut(t.Name(), aiKey("a", tk.AutoIncrement, 3), []tk.Column{col("c", iv(3), 0)}, tk.ReturnKey(&k3)),
		tk.BatchUpdate(t.Name(), aiKey("a", tk.AutoIncrement, 4), []tk.Change{tk.Put("c", iv(4))}),
		tk.BatchPut(t.Name(), aiKey("a", tk.AutoIncrement, 5), []tk.Column{col("c", iv(5), 0)}),
	})
	var s3, s4, s5 int64
	if e.ok("BatchWriteRow with AutoIncrement", err) && len(bres) == 3 {
		for i, r := range bres {
			e.ok(fmt.Sprintf("BatchWriteRow write %d", i), r.Err)
		}
		s3 = e.assigned("BatchPut's BatchWriteResult.Key", bres[0].Key, aiKey("a", tk.AutoIncrement, 3))
		s4 = e.assigned("BatchUpdate's BatchWriteResult.Key", bres[1].Key, aiKey("a", tk.AutoIncrement, 4))
		s5 = e.assigned("the second BatchPut's BatchWriteResult.Key", bres[2].Key, aiKey("a", tk.AutoIncrement, 5))
		if !k3.Equal(bres[0].Key) {
			e.t.Errorf("BatchPut's ReturnKey gave %v, its result's Key is %v", fmtKey(k3), fmtKey(bres[0].Key))
		}
	}
	var want []keyedView
	add := func(k tk.PrimaryKey, cells ...tk.Column) { want = append(want, keyedView{k, e.want(k, cells...)}) }
	if s1 != 0 && s2 != 0 {
		if s2 <= s1 {
			e.t.Errorf("UpdateRow after PutRow was assigned %d, not above the PutRow's %d", s2, s1)
		}
		add(aiKey("a", iv(s1), 1), col("c", iv(1), 0))
		add(aiKey("a", iv(s2), 2), col("c", iv(2), 0), col("n", iv(5), 0))
	}
	if s3 != 0 && s4 != 0 && s5 != 0 {
		if slices.Contains([]int64{s1, s2, s4, s5}, s3) || s4 == s5 || min(s3, s4, s5) <= s2 {
			e.t.Errorf("the batch was assigned %d, %d, %d after %d and %d: not distinct and above them", s3, s4, s5, s1, s2)
		}
		add(aiKey("a", iv(s3), 3), col("c", iv(3), 0))
		add(aiKey("a", iv(s4), 4), col("c", iv(4), 0))
		add(aiKey("a", iv(s5), 5), col("c", iv(5), 0))
	}
	if tk.CapabilitiesOf(e.b).AtomicWrite {
		var k6 tk.PrimaryKey
		ares, err := t.AtomicWrite(e.ctx, []tk.BatchWrite{
			tk.BatchPut("", aiKey("a", tk.AutoIncrement, 6), []tk.Column{col("c", iv(6), 0)}, tk.ReturnKey(&k6)),
			tk.BatchPut("", aiKey("a", tk.AutoIncrement, 6), []tk.Column{col("c", iv(7), 0)}),
			tk.BatchUpdate("", aiKey("a", tk.AutoIncrement, 8), []tk.Change{tk.Put("c", iv(8))}),
		})
		if e.ok("AtomicWrite of three writes with AutoIncrement (two of the same request key)", err) && len(ares) == 3 {
			s6 := e.assigned("AtomicWrite's first result Key", ares[0].Key, aiKey("a", tk.AutoIncrement, 6))
			s7 := e.assigned("AtomicWrite's second result Key", ares[1].Key, aiKey("a", tk.AutoIncrement, 6))
			s8 := e.assigned("AtomicWrite's third result Key", ares[2].Key, aiKey("a", tk.AutoIncrement, 8))
			if !k6.Equal(ares[0].Key) {
				e.t.Errorf("AtomicWrite's ReturnKey gave %v, its result's Key is %v", fmtKey(k6), fmtKey(ares[0].Key))
			}
			if s6 != 0 && s7 != 0 && s8 != 0 {
				if s6 == s7 || s6 == s8 || s7 == s8 || min(s6, s7, s8) <= max(s1, s2, s3, s4, s5) {
					e.t.Errorf("the atomic write was assigned %d, %d, %d: not distinct and above every earlier value", s6, s7, s8)
				}
				add(aiKey("a", iv(s6), 6), col("c", iv(6), 0))
				add(aiKey("a", iv(s7), 6), col("c", iv(7), 0))
				add(aiKey("a", iv(s8), 8), col("c", iv(8), 0))
			}
		}
	}
	slices.SortFunc(want, func(a, b keyedView) int { return tk.CompareKeys(a.k, b.k) })
	views := make([]rowView, len(want))
	for i, w := range want {
		views[i] = w.v
	}
	e.expectScan("after the writes with AutoIncrement", t, views)

	// A write with a real key: ReturnKey gives that key.
	var kr tk.PrimaryKey
	real := aiKey("a", iv(s1), 1)
	e.ok("PutRow with a real key", t.PutRow(e.ctx, real, []tk.Column{col("c", iv(10), 0)}, tk.ReturnKey(&kr)))
	if !kr.Equal(real) {
		e.t.Errorf("PutRow %v with ReturnKey gave %v", fmtKey(real), fmtKey(kr))
	}
	if res, err := t.UpdateRow(e.ctx, real, []tk.Change{tk.Put("d", iv(1))}); e.ok("UpdateRow with a real key", err) && res.Key != nil {
		e.t.Errorf("UpdateRow with a real key: UpdateResult.Key = %v, want nil", fmtKey(res.Key))
	}
}

// keyedView is an expected row and its key, to sort by.
type keyedView struct {
	k tk.PrimaryKey
	v rowView
}

// testAutoIncConditions: a write with AutoIncrement meets an absent row:
// ExpectNotExist holds, ExpectExist fails with ErrConditionFailed and
// writes nothing.
func testAutoIncConditions(e *env) {
	t, ok := e.autoIncTable("aicond")
	if !ok {
		return
	}
	ph := aiKey("a", tk.AutoIncrement, 1)
	var k tk.PrimaryKey
	e.ok("PutRow with AutoIncrement and ExpectNotExist", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(1), 0)}, tk.ExpectNotExist, tk.ReturnKey(&k)))
	s := e.assigned("PutRow's ReturnKey", k, ph)
	e.wantErr("PutRow with AutoIncrement and ExpectExist", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(2), 0)}, tk.ExpectExist), tk.ErrConditionFailed)
	_, err := t.UpdateRow(e.ctx, ph, []tk.Change{tk.Put("c", iv(3))}, tk.ExpectExist)
	e.wantErr("UpdateRow with AutoIncrement and ExpectExist", err, tk.ErrConditionFailed)
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchPut(t.Name(), ph, []tk.Column{col("c", iv(4), 0)}, tk.ExpectExist)})
	if e.ok("BatchWriteRow", err) && len(res) == 1 {
		e.wantErr("BatchPut with AutoIncrement and ExpectExist", res[0].Err, tk.ErrConditionFailed)
	}
	if s != 0 {
		e.expectScan("after the failed writes", t, []rowView{e.want(aiKey("a", iv(s), 1), col("c", iv(1), 0))})
	}
}

// testAutoIncConcurrent: 16 writers put rows with AutoIncrement in one
// partition key at once: every write gets its own value, each writer's
// values increase in the order of its writes, and every row is there.
func testAutoIncConcurrent(e *env) {
	t, ok := e.autoIncTable("aiconc")
	if !ok {
		return
	}
	const writers, each = 16, 8
	got := make([][]int64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ph := aiKey("a", tk.AutoIncrement, int64(w))
				var k tk.PrimaryKey
				if err := t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(int64(w*each+i)), 0)}, tk.ReturnKey(&k)); err != nil {
					e.t.Errorf("writer %d, put %d: %v", w, i, err)
					return
				}
				got[w] = append(got[w], e.assigned(fmt.Sprintf("writer %d, put %d", w, i), k, ph))
			}
		}()
	}
	wg.Wait()
	seen := map[int64]int{}
	for w, vals := range got {
		for i, v := range vals {
			if i > 0 && v <= vals[i-1] {
				e.t.Errorf("writer %d's put %d was assigned %d, not above its put %d's %d", w, i, v, i-1, vals[i-1])
			}
			if prev, dup := seen[v]; dup {
				e.t.Errorf("value %d was assigned to writers %d and %d", v, prev, w)
			}
			seen[v] = w
		}
	}
	rows, _ := e.rangeAll("scan", t, t.bound(tk.InfMin), t.bound(tk.InfMax))
	if len(rows) != writers*each {
		e.t.Errorf("the table holds %d rows after %d puts with AutoIncrement", len(rows), writers*each)
	}
	for _, r := range rows {
		s, _ := r.Key[1].Value.Int()
		w, _ := r.Key[2].Value.Int()
		if owner, ok := seen[s]; !ok || int64(owner) != w {
			e.t.Errorf("row %v was not written as its writer was told", fmtKey(r.Key))
		}
	}
}

// testAutoIncPartitions: puts alternating between two partition keys:
// each partition key's values increase, no row overwrites another.
func testAutoIncPartitions(e *env) {
	t, ok := e.autoIncTable("aipart")
	if !ok {
		return
	}
	last := map[string]int64{}
	n := map[string]int{}
	for i := range 12 {
		p := []string{"a", "b", "a"}[i%3]
		ph := aiKey(p, tk.AutoIncrement, int64(i))
		var k tk.PrimaryKey
		if !e.ok("PutRow", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(int64(i)), 0)}, tk.ReturnKey(&k))) {
			return
		}
		s := e.assigned(fmt.Sprintf("put %d in partition key %s", i, p), k, ph)
		if s <= last[p] {
			e.t.Errorf("put %d in partition key %s was assigned %d, not above the previous %d", i, p, s, last[p])
		}
		last[p] = s
		n[p]++
	}
	for p, want := range n {
		rows := 0
		for r, err := range t.PrefixRows(e.ctx, tk.Key("p", tk.String(p))) {
			if !e.ok("PrefixRows", err) {
				break
			}
			rows++
			_ = r
		}
		if rows != want {
			e.t.Errorf("partition key %s holds %d rows after %d puts", p, rows, want)
		}
	}
}

// testAutoIncRealKey: a row made with AutoIncrement is read, updated and
// deleted with its real key; a row put with a real sequence value is never
// overwritten by a later assigned one.
func testAutoIncRealKey(e *env) {
	t, ok := e.autoIncTable("aireal")
	if !ok {
		return
	}
	ph := aiKey("a", tk.AutoIncrement, 1)
	var k tk.PrimaryKey
	if !e.ok("PutRow", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(1), 0)}, tk.ReturnKey(&k))) {
		return
	}
	s := e.assigned("PutRow's ReturnKey", k, ph)
	if s == 0 {
		return
	}
	_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("d", iv(2))}, tk.ExpectExist)
	e.ok("UpdateRow of the real key", err)
	w := e.want(k, col("c", iv(1), 0), col("d", iv(2), 0))
	e.expectRow("GetRow of the real key", t, k, &w)
	e.ok("DeleteRow of the real key", t.DeleteRow(e.ctx, k, tk.ExpectExist))
	e.expectRow("after DeleteRow", t, k, nil)
	// Real sequence values just above the last assigned: a later
	// AutoIncrement never lands on them.
	var want []rowView
	for d := int64(1); d <= 3; d++ {
		rk := aiKey("a", iv(s+d), 1)
		e.put(t, rk, col("c", iv(100+d), 0))
		want = append(want, e.want(rk, col("c", iv(100+d), 0)))
	}
	for i := range 3 {
		var k2 tk.PrimaryKey
		if e.ok("PutRow", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(int64(200+i)), 0)}, tk.ExpectNotExist, tk.ReturnKey(&k2))) {
			e.assigned("PutRow's ReturnKey", k2, ph)
		}
	}
	for _, w := range want {
		found := false
		for _, r := range e.scan("scan", t) {
			if r.Key == w.Key {
				found = true
				e.diff("a row put with a real sequence value", w, r)
			}
		}
		if !found {
			e.t.Errorf("row %s, put with a real sequence value, is gone", w.Key)
		}
	}
	if got := len(e.scan("scan", t)); got != 6 {
		e.t.Errorf("%d rows after 3 real and 3 assigned puts (and one deleted), want 6", got)
	}
}

// testAutoIncAboveReal: a value written into the auto-increment column
// (a migrated row keeps its key) bounds later assignments from below, also
// after that row is deleted (SPEC §14: later assigned values are greater
// than it), and only in its own partition key.
func testAutoIncAboveReal(e *env) {
	t, ok := e.autoIncTable("aiabove")
	if !ok {
		return
	}
	e.put(t, aiKey("a", iv(1000), 1), col("c", iv(1), 0))
	ph := aiKey("a", tk.AutoIncrement, 1)
	var k tk.PrimaryKey
	if e.ok("PutRow with AutoIncrement after a real 1000", t.PutRow(e.ctx, ph, nil, tk.ReturnKey(&k))) {
		if s := e.assigned("PutRow's ReturnKey", k, ph); s != 0 && s <= 1000 {
			e.t.Errorf("assigned %d after a row was put with the real value 1000, want above 1000", s)
		}
	}
	// An update that creates a row counts as a put.
	_, err := t.UpdateRow(e.ctx, aiKey("a", iv(5000), 1), []tk.Change{tk.Put("c", iv(2))})
	e.must("UpdateRow of a real 5000", err)
	e.must("DeleteRow of 5000", t.DeleteRow(e.ctx, aiKey("a", iv(5000), 1)))
	if e.ok("PutRow with AutoIncrement after 5000 was deleted", t.PutRow(e.ctx, ph, nil, tk.ReturnKey(&k))) {
		if s := e.assigned("PutRow's ReturnKey", k, ph); s != 0 && s <= 5000 {
			e.t.Errorf("assigned %d after a row with the real value 5000 was written and deleted, want above 5000", s)
		}
	}
	if e.ok("PutRow with AutoIncrement in another partition key", t.PutRow(e.ctx, aiKey("b", tk.AutoIncrement, 1), nil, tk.ReturnKey(&k))) {
		if s := e.assigned("PutRow's ReturnKey", k, aiKey("b", tk.AutoIncrement, 1)); s >= 1000 {
			e.t.Errorf("partition key b was assigned %d: a's real values leaked into it", s)
		}
	}
}

// testAutoIncMaxInt64: once the auto-increment column held the largest
// Integer in a partition key, every AutoIncrement write there is
// ErrInvalidArgument (no value above it is left; a retry cannot help, so
// never ErrUnavailable), writes nothing, and stays refused after that row
// is deleted; other partition keys are unaffected.
func testAutoIncMaxInt64(e *env) {
	t, ok := e.autoIncTable("aimax")
	if !ok {
		return
	}
	ph := aiKey("a", tk.AutoIncrement, 1)
	stored := map[string]bool{fmtKey(aiKey("a", iv(1), 1)): true, fmtKey(aiKey("a", iv(math.MaxInt64), 1)): true}
	refused := func(what string) {
		e.t.Helper()
		for range 2 {
			var k tk.PrimaryKey
			err := t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(7), 0)}, tk.ReturnKey(&k))
			e.wantErr(what, err, tk.ErrInvalidArgument, "auto-increment")
			if errors.Is(err, tk.ErrUnavailable) {
				e.t.Errorf("%s: %v is retryable (ErrUnavailable)", what, err)
			}
		}
		for _, r := range e.scan("scan", t) {
			if !stored[r.Key] {
				e.t.Errorf("%s: a refused write left row %s", what, r.Key)
			}
		}
	}
	e.put(t, aiKey("a", iv(math.MaxInt64), 1), col("c", iv(1), 0))
	refused("AutoIncrement beside a row at MaxInt64")
	e.put(t, aiKey("a", iv(1), 1), col("c", iv(1), 0))
	refused("AutoIncrement beside rows at 1 and MaxInt64")
	e.must("DeleteRow of MaxInt64", t.DeleteRow(e.ctx, aiKey("a", iv(math.MaxInt64), 1)))
	refused("AutoIncrement after the MaxInt64 row was deleted")
	var k tk.PrimaryKey
	if e.ok("AutoIncrement in another partition key", t.PutRow(e.ctx, aiKey("b", tk.AutoIncrement, 1), nil, tk.ReturnKey(&k))) {
		e.assigned("PutRow's ReturnKey", k, aiKey("b", tk.AutoIncrement, 1))
	}
}

// testAutoIncRefused: AutoIncrement anywhere but the auto-increment
// column of a put's or update's key is ErrInvalidArgument naming the
// column, with nothing written; so is a schema with the column first, not
// Integer, or twice.
func testAutoIncRefused(e *env) {
	for _, tc := range []struct {
		hint, column string
		key          tk.KeySchema
	}{
		{"aifirst", "s", tk.KeySchema{{Name: "s", Type: tk.TypeInteger, AutoIncrement: true}, {Name: "r", Type: tk.TypeInteger}}},
		{"aistring", "s", tk.KeySchema{{Name: "p", Type: tk.TypeString}, {Name: "s", Type: tk.TypeString, AutoIncrement: true}}},
		{"aitwo", "r", tk.KeySchema{{Name: "p", Type: tk.TypeString}, {Name: "s", Type: tk.TypeInteger, AutoIncrement: true}, {Name: "r", Type: tk.TypeInteger, AutoIncrement: true}}},
	} {
		name := e.name(tc.hint)
		err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: tc.key})
		e.wantErr("CreateTable "+tc.hint, err, tk.ErrInvalidArgument, name, tc.column)
		if err == nil {
			e.cleanupTable(name)
		}
	}
	t, ok := e.autoIncTable("airefused")
	if !ok {
		return
	}
	e.put(t, aiKey("a", iv(5), 1), col("c", iv(1), 0))
	before := e.scan("before", t)
	ph := aiKey("a", tk.AutoIncrement, 1)
	real := aiKey("a", iv(5), 1)
	cols := []tk.Column{col("c", iv(9), 0)}
	refused := func(what string, err error, column string) {
		e.t.Helper()
		e.wantErr(what, err, tk.ErrInvalidArgument, t.Name(), column)
	}
	_, _, err := t.GetRow(e.ctx, ph)
	refused("GetRow", err, "s")
	refused("DeleteRow", t.DeleteRow(e.ctx, ph), "s")
	refused("PutRow with AutoIncrement in a column not auto-increment", t.PutRow(e.ctx, tk.Key("p", tk.String("a")).Add("s", iv(1)).Add("r", tk.AutoIncrement), cols), "r")
	refused("PutRow with AutoIncrement in the first column", t.PutRow(e.ctx, tk.Key("p", tk.AutoIncrement).Add("s", iv(1)).Add("r", iv(1)), cols), "p")
	refused("PutRow of AutoIncrement as a stored value", t.PutRow(e.ctx, real, []tk.Column{col("c", tk.AutoIncrement, 0)}), "c")
	_, err = t.UpdateRow(e.ctx, real, []tk.Change{tk.Put("c", tk.AutoIncrement)})
	refused("UpdateRow putting AutoIncrement", err, "c")
	refused("a condition on AutoIncrement", t.PutRow(e.ctx, real, cols, tk.IfMatch(tk.SingleColumnValue("c", tk.Equal, tk.AutoIncrement))), "c")
	_, _, err = t.GetRow(e.ctx, real, tk.WithFilter(tk.SingleColumnValue("c", tk.Less, tk.AutoIncrement)))
	refused("a filter on AutoIncrement", err, "c")
	_, err = t.GetRange(e.ctx, ph, t.bound(tk.InfMax))
	refused("a range starting at AutoIncrement", err, "s")
	_, err = t.GetRange(e.ctx, t.bound(tk.InfMin), ph)
	refused("a range ending at AutoIncrement", err, "s")
	_, _, err = t.PrefixRange(e.ctx, tk.Key("p", tk.String("a")).Add("s", tk.AutoIncrement))
	refused("PrefixRange with AutoIncrement", err, "s")
	gets, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: ph}})
	if e.ok("BatchGetRow", err) && len(gets) == 1 {
		refused("BatchGetRow of AutoIncrement", gets[0].Err, "s")
	}
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchDelete(t.Name(), ph)})
	if e.ok("BatchWriteRow", err) && len(res) == 1 {
		refused("BatchDelete of AutoIncrement", res[0].Err, "s")
	}
	if tk.CapabilitiesOf(e.b).AtomicWrite {
		_, err := t.AtomicWrite(e.ctx, []tk.BatchWrite{tk.BatchPut("", aiKey("a", tk.AutoIncrement, 2), cols), tk.BatchDelete("", ph)})
		e.wantAtomicErr("AtomicWrite deleting AutoIncrement", err, tk.ErrInvalidArgument, 1)
	}
	e.expectScan("after the refused calls", t, before)
}

// testAutoIncFeed: the change record of a write with AutoIncrement carries
// the key written.
func testAutoIncFeed(e *env) {
	if !tk.CapabilitiesOf(e.b).ChangeFeed {
		e.t.Skip("the backend has no change feed")
	}
	t, ok := e.autoIncTable("aifeed")
	if !ok {
		return
	}
	if _, err := t.EnableChangeFeed(e.ctx, 0); err != nil {
		e.t.Fatalf("EnableChangeFeed: %v", err)
	}
	ph := aiKey("a", tk.AutoIncrement, 1)
	var k1 tk.PrimaryKey
	e.ok("PutRow", t.PutRow(e.ctx, ph, []tk.Column{col("c", iv(1), 0)}, tk.ReturnKey(&k1)))
	res, err := t.UpdateRow(e.ctx, ph, []tk.Change{tk.Put("c", iv(2))})
	e.ok("UpdateRow", err)
	recs := e.readAll(t)
	var keys []string
	for _, r := range recs {
		keys = append(keys, fmtKey(r.Key))
	}
	want := []string{fmtKey(k1), fmtKey(res.Key)}
	slices.Sort(keys)
	slices.Sort(want)
	e.diff("the keys of the change records", want, keys)
}
