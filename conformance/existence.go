package conformance

import (
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §7: a row exists iff it has a visible cell or is a key-only row.

func existenceCases() []testCase {
	return []testCase{
		{"KeyOnlyRow", testKeyOnlyRow},
		{"KeyOnlyMarkerSurvivesUpdate", testKeyOnlyMarkerSurvivesUpdate},
		{"PutRowWithColumnsIsNotKeyOnly", testPutRowWithColumnsIsNotKeyOnly},
		{"InvisibleCellsMakeNoRow", testInvisibleCellsMakeNoRow},
	}
}

// testKeyOnlyRow: PutRow with no columns makes a row that exists, is read
// back with its key and no columns by every read, satisfies ExpectExist,
// and does not expire.
func testKeyOnlyRow(e *env) {
	t := e.create("keyonly", schemaS, tk.TableOptions{TTL: 86400 * time.Second})
	k := strKey("k")
	e.ok("PutRow with no columns", t.PutRow(e.ctx, k, nil))
	e.ok("PutRow with an empty column list", t.PutRow(e.ctx, strKey("k2"), []tk.Column{}))
	w, w2 := e.want(k), e.want(strKey("k2"))
	check := func(when string) {
		e.t.Helper()
		e.expectRow(when, t, k, &w)
		e.expectRow(when+", every version", t, k, &w, allVersions)
		e.expectRow(when+", projection", t, k, &w, tk.Columns("a"))
		e.expectScan(when, t, []rowView{w, w2})
		res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: k}})
		if e.ok(when+": BatchGetRow", err) {
			if !res[0].Found {
				e.t.Errorf("%s: BatchGetRow: key-only row not found", when)
			} else {
				e.diff(when+": BatchGetRow", w, viewRow(res[0].Row))
			}
		}
		e.wantErr(when+": DeleteRow ExpectNotExist", t.DeleteRow(e.ctx, k, tk.ExpectNotExist), tk.ErrConditionFailed)
	}
	check("key-only row")
	e.clock.Advance(30 * 24 * time.Hour)
	check("30 days later under TTL 86400")
	e.wantErr("PutRow ExpectExist on a missing row", t.PutRow(e.ctx, strKey("k3"), nil, tk.ExpectExist), tk.ErrConditionFailed)
	e.ok("PutRow ExpectExist on the key-only row", t.PutRow(e.ctx, k, nil, tk.ExpectExist))
	e.expectScan("at the end", t, []rowView{w, w2})
}

// testKeyOnlyMarkerSurvivesUpdate: a key-only row stays a row when an
// UpdateRow adds columns and they go again (deleted or expired).
func testKeyOnlyMarkerSurvivesUpdate(e *env) {
	t := e.create("marker", schemaS, tk.TableOptions{TTL: 86400 * time.Second})
	k := strKey("k")
	e.put(t, k)
	e.update(t, k, tk.Put("a", iv(1)))
	wa := e.want(k, col("a", iv(1), 0))
	e.expectRow("key-only row with a column added", t, k, &wa)
	e.update(t, k, tk.DeleteColumn("a"))
	w := e.want(k)
	e.expectRow("after the added column is deleted", t, k, &w, allVersions)
	e.update(t, k, tk.Put("b", iv(2)))
	e.clock.Advance(2 * 24 * time.Hour)
	e.expectRow("after the added column expires", t, k, &w, allVersions)
	e.expectScan("table", t, []rowView{w})
}

// testPutRowWithColumnsIsNotKeyOnly: PutRow replaces the whole row, so a
// key-only row rewritten with columns disappears when they go.
func testPutRowWithColumnsIsNotKeyOnly(e *env) {
	t := e.create("nomarker", schemaS, tk.TableOptions{})
	k := strKey("k")
	e.put(t, k)
	e.put(t, k, col("a", iv(1), 0))
	w := e.want(k, col("a", iv(1), 0))
	e.expectRow("rewritten with a column", t, k, &w)
	e.update(t, k, tk.DeleteColumn("a"))
	e.expectRow("after its only column is deleted", t, k, nil)
	e.expectScan("table", t, nil)
}

// testInvisibleCellsMakeNoRow: a row whose cells have all expired does not
// exist for any read or condition.
func testInvisibleCellsMakeNoRow(e *env) {
	t := e.create("invis", schemaS, tk.TableOptions{TTL: 86400 * time.Second})
	T := e.now()
	k, k2 := strKey("gone"), strKey("gone2")
	e.put(t, k, col("a", iv(1), T-86000*1000), col("b", iv(2), T-86399*1000))
	e.put(t, k2, col("a", iv(1), T-86000*1000))
	e.clock.Advance(401 * time.Second)
	e.expectRow("expired row", t, k, nil, allVersions)
	e.expectRow("expired row, projection", t, k, nil, tk.Columns("a"))
	e.expectScan("expired rows", t, nil)
	res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: k}})
	if e.ok("BatchGetRow", err) && (res[0].Found || res[0].Err != nil) {
		e.t.Errorf("BatchGetRow of an expired row: found=%v err=%v", res[0].Found, res[0].Err)
	}
	e.wantErr("DeleteRow ExpectExist", t.DeleteRow(e.ctx, k, tk.ExpectExist), tk.ErrConditionFailed)
	_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("c", iv(3))}, tk.ExpectExist)
	e.wantErr("UpdateRow ExpectExist", err, tk.ErrConditionFailed)
	e.expectScan("after failed conditions", t, nil)
	e.ok("PutRow ExpectNotExist", t.PutRow(e.ctx, k, []tk.Column{col("c", iv(3), 0)}, tk.ExpectNotExist))
	_, err = t.UpdateRow(e.ctx, k2, []tk.Change{tk.Put("c", iv(4))}, tk.ExpectNotExist)
	e.ok("UpdateRow ExpectNotExist", err)
	e.expectScan("after ExpectNotExist writes", t, []rowView{
		e.want(k, col("c", iv(3), 0)),
		e.want(k2, col("c", iv(4), 0)),
	})
}
