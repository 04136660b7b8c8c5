package conformance

import (
	"github.com/tablekit/tablekit/rowmodel"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §6: TTL and visibility.

func ttlCases() []testCase {
	return []testCase{
		// SPEC §6's worked example: version 1468972800000 is 2016-07-20
		// 00:00:00 UTC, and the wall times are read in UTC. Tablestore's own
		// text gives 1468944000000, the same midnight in UTC+8: that
		// reading runs as an extra check.
		{"WorkedExample_UTC", func(e *env) { testTTLWorkedExample(e, 1468972800000, time.UTC) }},
		{"WorkedExample_UTC8", func(e *env) { testTTLWorkedExample(e, 1468944000000, time.FixedZone("UTC+8", 8*3600)) }},
		{"ExpiredCellsHidden", testExpiredCellsHidden},
		{"IncrementIgnoresExpired", testIncrementIgnoresExpired},
		{"NoExpiry", testNoExpiry},
		{"UpdateTableTTL", testUpdateTableTTL},
	}
}

// testTTLWorkedExample: TTL 86400 and a cell at 2016-07-20 00:00:00.000:
// visible at 23:59:59.999, invisible from 2016-07-21 00:00:00.000, and at
// that instant a write of that version is refused.
func testTTLWorkedExample(e *env, version int64, zone *time.Location) {
	day := time.Date(2016, 7, 20, 0, 0, 0, 0, zone)
	if day.UnixMilli() != version {
		e.t.Fatalf("the example's version %d is not %v (%d)", version, day, day.UnixMilli())
	}
	t := e.create("ttlx", schemaS, tk.TableOptions{TTL: 86400 * time.Second})
	ka, kb, kc := strKey("A"), strKey("B"), strKey("C")
	cell := col("c", sv("x"), version)
	e.clock.Set(day.Add(12 * time.Hour))
	e.ok("PutRow at noon", t.PutRow(e.ctx, ka, []tk.Column{cell}))

	e.clock.Set(time.Date(2016, 7, 20, 23, 59, 59, 999_000_000, zone))
	wa := e.want(ka, cell)
	e.expectRow("at 23:59:59.999", t, ka, &wa)
	match := tk.ColumnFilter{Column: "c", Op: tk.Equal, Value: sv("x"), FilterIfMissing: true}
	rows, _ := e.rangeAll("filtered GetRange at 23:59:59.999", t, t.lo(), t.hi(), tk.WithFilter(match))
	e.diff("filtered GetRange at 23:59:59.999", []rowView{wa}, viewRows(rows))
	// One millisecond before expiry, a write of that version is still accepted.
	e.ok("PutRow of the version at 23:59:59.999", t.PutRow(e.ctx, kb, []tk.Column{cell}))

	e.clock.Set(time.Date(2016, 7, 21, 0, 0, 0, 0, zone))
	e.expectRow("at 00:00:00.000", t, ka, nil)
	e.expectRow("at 00:00:00.000", t, kb, nil)
	e.expectRow("at 00:00:00.000, every version", t, ka, nil, allVersions)
	e.expectScan("at 00:00:00.000", t, nil)
	res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: ka}, {Table: t.Name(), Key: kb}})
	if e.ok("BatchGetRow", err) {
		for i, r := range res {
			if r.Err != nil || r.Found {
				e.t.Errorf("BatchGetRow %d at 00:00:00.000: found=%v err=%v, want not found", i, r.Found, r.Err)
			}
		}
	}
	_, err = t.UpdateRow(e.ctx, ka, []tk.Change{tk.Put("d", sv("d"))}, tk.ExpectExist)
	e.wantErr("ExpectExist on the expired row", err, tk.ErrConditionFailed)
	_, err = t.UpdateRow(e.ctx, ka, []tk.Change{tk.Put("d", sv("d"))}, tk.IfMatch(match))
	e.wantErr("column condition on the expired cell", err, tk.ErrConditionFailed)
	e.wantErr("PutRow of the version at 00:00:00.000", t.PutRow(e.ctx, kc, []tk.Column{cell}), tk.ErrInvalidArgument, t.Name(), "c")
	_, err = t.UpdateRow(e.ctx, kc, []tk.Change{tk.PutAt("c", sv("x"), version)})
	e.wantErr("UpdateRow PutAt of the version at 00:00:00.000", err, tk.ErrInvalidArgument, t.Name(), "c")
	e.expectScan("after the refused writes", t, nil)

	// The next second is still writable and visible.
	next := col("c", sv("y"), version+1000)
	e.ok("PutRow of the next second", t.PutRow(e.ctx, kc, []tk.Column{next}))
	wc := e.want(kc, next)
	e.expectRow("the next second", t, kc, &wc)
	// A row whose only cells are invisible does not exist.
	e.ok("PutRow ExpectNotExist on the expired row", t.PutRow(e.ctx, ka, nil, tk.ExpectNotExist))
}

// testExpiredCellsHidden: expired versions disappear from reads, filters and
// conditions while newer versions of the same column stay.
func testExpiredCellsHidden(e *env) {
	t := e.create("expired", schemaS, tk.TableOptions{TTL: 86400 * time.Second, MaxVersions: 3})
	T := e.now()
	old := T - 80000*1000
	k := strKey("r")
	e.put(t, k, col("c", sv("old"), old), col("c", sv("new"), T), col("d", sv("d"), old))
	w := e.want(k, col("c", sv("new"), T), col("c", sv("old"), old), col("d", sv("d"), old))
	e.expectRow("before expiry", t, k, &w, allVersions)

	e.clock.Advance(7000 * time.Second) // old is 87000 s old, new 7000 s
	w = e.want(k, col("c", sv("new"), T))
	e.expectRow("after the old cells expire", t, k, &w, allVersions)
	e.expectRow("time range over the expired version", t, k, ptr(e.want(k)), tk.Versions(old, old+1))
	oldC := tk.ColumnFilter{Column: "c", Op: tk.Equal, Value: sv("old"), AllVersions: true}
	e.expectRow("filter on an expired version", t, k, nil, allVersions, tk.WithFilter(oldC))
	needD := tk.ColumnFilter{Column: "d", Op: tk.Equal, Value: sv("d"), FilterIfMissing: true}
	e.expectRow("filter on an expired column", t, k, nil, tk.WithFilter(needD))
	passD := tk.ColumnFilter{Column: "d", Op: tk.NotEqual, Value: sv("d")}
	e.expectRow("an expired column counts as missing", t, k, &w, allVersions, tk.WithFilter(passD))
	for _, c := range []tk.Filter{oldC, needD} {
		_, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("x", sv("x"))}, tk.IfMatch(c))
		e.wantErr("condition on an expired cell", err, tk.ErrConditionFailed)
	}
	e.expectRow("after the failed conditions", t, k, &w, allVersions)
}

func ptr[T any](v T) *T { return &v }

// testIncrementIgnoresExpired: an expired Integer counts as absent.
func testIncrementIgnoresExpired(e *env) {
	t := e.create("incexp", schemaS, tk.TableOptions{TTL: 86400 * time.Second})
	T := e.now()
	k := strKey("r")
	e.put(t, k, col("n", iv(100), T-80000*1000), col("s", sv("not a number"), T-80000*1000), col("keep", iv(1), 0))
	e.clock.Advance(7000 * time.Second)
	res, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("n", 1), tk.Increment("s", 2)})
	if e.ok("Increment over expired cells", err) {
		e.diff("increments", []cellView{{"n", "Integer(1)", e.now()}, {"s", "Integer(2)", e.now()}}, viewRow(tk.Row{Columns: res.Increments}).Cells)
	}
	w := e.want(k, col("keep", iv(1), T), col("n", iv(1), 0), col("s", iv(2), 0))
	e.expectRow("after increments", t, k, &w, allVersions)
}

// testNoExpiry: with TTL -1 nothing expires, however far the clock moves.
func testNoExpiry(e *env) {
	t := e.create("noexp", schemaS, tk.TableOptions{})
	k := strKey("r")
	oldest := (rowmodel.Seconds(e.now()) - 86400) * 1000
	e.put(t, k, col("c", sv("x"), oldest))
	e.clock.Advance(10 * 365 * 24 * time.Hour)
	w := e.want(k, col("c", sv("x"), oldest))
	e.expectRow("ten years later", t, k, &w)
}

// testUpdateTableTTL: lowering the TTL hides cells at once and narrows the
// write window.
func testUpdateTableTTL(e *env) {
	t := e.create("ttlupd", schemaS, tk.TableOptions{MaxVersionOffset: 10 * 86400 * time.Second})
	T := e.now()
	ka, kb := strKey("a"), strKey("b")
	threeDays := int64(3 * 86400 * 1000)
	e.put(t, ka, col("c", sv("old"), T-threeDays))
	e.put(t, kb, col("c", sv("new"), T))
	e.must("UpdateTable TTL 86400", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: 86400 * time.Second}))
	e.expectRow("3-day-old row after TTL 86400", t, ka, nil)
	e.expectRow("3-day-old row after TTL 86400, through another client", tbl{Table: e.fresh().Table(t.Name()), schema: t.schema}, ka, nil)
	wb := e.want(kb, col("c", sv("new"), T))
	e.expectScan("after TTL 86400", t, []rowView{wb})
	err := t.PutRow(e.ctx, strKey("c"), []tk.Column{col("c", sv("x"), T-2*86400*1000)})
	e.wantErr("writing a 2-day-old version under TTL 86400", err, tk.ErrInvalidArgument, t.Name(), "c")
	e.expectRow("refused write", t, strKey("c"), nil)

	e.must("UpdateTable TTL 5 days", e.c.UpdateTable(e.ctx, t.Name(), tk.TableOptions{TTL: 5 * 86400 * time.Second}))
	twoDays := col("c", sv("x"), T-2*86400*1000)
	e.ok("writing a 2-day-old version under TTL 5 days", t.PutRow(e.ctx, strKey("c"), []tk.Column{twoDays}))
	wc := e.want(strKey("c"), twoDays)
	e.expectRow("2-day-old version under TTL 5 days", t, strKey("c"), &wc)
}
