package conformance

import (
	"fmt"
	"slices"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §9: conditions on writes. A failed condition returns
// ErrConditionFailed and writes nothing; every case checks the table's whole
// content (every version) afterwards.

func conditionCases() []testCase {
	return []testCase{
		{"RowExistence", testConditionRowExistence},
		{"ColumnCondition", testConditionColumn},
	}
}

// condCase is one conditional write on its own row.
type condCase struct {
	name   string
	exists bool // the row exists before the write
	op     string
	opts   []tk.WriteOption
	ok     bool
}

// runCondCases seeds the rows, runs every write, and checks each result and
// the table afterwards. seed gives an existing row's cells.
func (e *env) runCondCases(t tbl, cases []condCase, seed []tk.Column) {
	e.t.Helper()
	var rows []tk.Row
	for _, c := range cases {
		if c.exists {
			rows = append(rows, row(strKey(c.name), seed...))
		}
	}
	e.seedBatch(t, rows)
	e.clock.Advance(time.Second)
	written := col("w", iv(1), 0)
	want := map[string]rowView{}
	for _, c := range cases {
		k := strKey(c.name)
		var err error
		var after []tk.Column // the row's cells if the write succeeds
		switch c.op {
		case "put":
			err = t.PutRow(e.ctx, k, []tk.Column{written}, c.opts...)
			after = []tk.Column{written}
		case "update":
			_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Put(written.Name, written.Value)}, c.opts...)
			after = []tk.Column{written}
			if c.exists {
				after = append(after, seed...)
			}
		case "delete":
			err = t.DeleteRow(e.ctx, k, c.opts...)
		}
		what := fmt.Sprintf("%s %s (row exists: %v)", c.op, c.name, c.exists)
		if c.ok {
			e.ok(what, err)
		} else {
			e.wantErr(what, err, tk.ErrConditionFailed)
		}
		switch {
		case c.ok && c.op != "delete":
			want[c.name] = e.want(k, after...)
		case !c.ok && c.exists:
			want[c.name] = e.want(k, seed...)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	var rowsWant []rowView
	for _, n := range names {
		rowsWant = append(rowsWant, want[n])
	}
	e.expectScan("after the conditional writes", t, rowsWant)
}

// testConditionRowExistence: Ignore, ExpectExist and ExpectNotExist on
// PutRow, UpdateRow and DeleteRow, on an existing and a missing row.
func testConditionRowExistence(e *env) {
	t := e.create("rowcond", schemaS, tk.TableOptions{})
	var cases []condCase
	for _, op := range []string{"put", "update", "delete"} {
		for _, exp := range []tk.RowExistence{tk.Ignore, tk.ExpectExist, tk.ExpectNotExist} {
			for _, exists := range []bool{true, false} {
				ok := exp == tk.Ignore || (exp == tk.ExpectExist) == exists
				cases = append(cases, condCase{
					name: fmt.Sprintf("%s_%v_%v", op, exp, exists), exists: exists, op: op,
					opts: []tk.WriteOption{exp}, ok: ok,
				})
			}
		}
	}
	e.runCondCases(t, cases, []tk.Column{col("c", iv(1), e.now())})
}

// testConditionColumn: column conditions are filters over the row's visible
// data: latest version only unless told, PassIfMissing both ways, type
// mismatches never match, And/Or/Not, combined with row existence.
func testConditionColumn(e *env) {
	t := e.create("colcond", schemaS, tk.TableOptions{MaxVersions: 3})
	T := e.now()
	seed := []tk.Column{col("n", iv(5), T-2000), col("n", iv(1), T-1000), col("s", sv("x"), T-1000)}
	n := func(op tk.CompareOp, v tk.Value) tk.ColumnFilter { return tk.SingleColumnValue("n", op, v) }
	if1 := func(f tk.Filter) []tk.WriteOption { return []tk.WriteOption{tk.IfMatch(f)} }
	all := func(f tk.ColumnFilter) tk.ColumnFilter { f.AllVersions = true; return f }
	need := func(f tk.ColumnFilter) tk.ColumnFilter { f.FilterIfMissing = true; return f }
	cases := []condCase{
		{"eq_latest", true, "update", if1(n(tk.Equal, iv(1))), true},
		{"eq_older_latest_only", true, "update", if1(n(tk.Equal, iv(5))), false},
		{"eq_older_all_versions", true, "update", if1(all(n(tk.Equal, iv(5)))), true},
		{"missing_column_passes", true, "update", if1(tk.SingleColumnValue("zz", tk.Equal, iv(1))), true},
		{"missing_column_filtered", true, "update", if1(need(tk.SingleColumnValue("zz", tk.Equal, iv(1)))), false},
		{"type_mismatch_eq", true, "update", if1(n(tk.Equal, sv("1"))), false},
		{"type_mismatch_ne", true, "update", if1(n(tk.NotEqual, sv("1"))), false},
		{"type_mismatch_double", true, "update", if1(n(tk.Equal, dv(1))), false},
		{"ne_same", true, "update", if1(n(tk.NotEqual, iv(1))), false},
		{"ne_other", true, "update", if1(n(tk.NotEqual, iv(2))), true},
		{"gt", true, "update", if1(n(tk.Greater, iv(0))), true},
		{"ge", true, "update", if1(n(tk.GreaterEqual, iv(1))), true},
		{"lt", true, "update", if1(n(tk.Less, iv(1))), false},
		{"le", true, "update", if1(n(tk.LessEqual, iv(0))), false},
		{"and", true, "update", if1(tk.And(n(tk.Equal, iv(1)), tk.SingleColumnValue("s", tk.Equal, sv("x")))), true},
		{"and_fails", true, "update", if1(tk.And(n(tk.Equal, iv(1)), tk.SingleColumnValue("s", tk.Equal, sv("y")))), false},
		{"or_fails", true, "update", if1(tk.Or(n(tk.Equal, iv(9)), tk.SingleColumnValue("s", tk.Equal, sv("y")))), false},
		{"or", true, "update", if1(tk.Or(n(tk.Equal, iv(9)), tk.SingleColumnValue("s", tk.Equal, sv("x")))), true},
		{"not_fails", true, "update", if1(tk.Not(n(tk.Equal, iv(1)))), false},
		{"not", true, "update", if1(tk.Not(n(tk.Equal, iv(2)))), true},
		{"exist_and_column", true, "update", []tk.WriteOption{tk.ExpectExist, tk.IfMatch(n(tk.Equal, iv(1)))}, true},
		{"exist_and_column_fails", true, "update", []tk.WriteOption{tk.Condition{Row: tk.ExpectExist, Column: n(tk.Equal, iv(2))}}, false},
		{"not_exist_and_column", true, "update", []tk.WriteOption{tk.ExpectNotExist, tk.IfMatch(n(tk.Equal, iv(1)))}, false},
		{"missing_row_passes", false, "update", if1(n(tk.Equal, iv(1))), true},
		{"missing_row_filtered", false, "update", if1(need(n(tk.Equal, iv(1)))), false},
		{"missing_row_not_exist_filtered", false, "put", []tk.WriteOption{tk.ExpectNotExist, tk.IfMatch(need(n(tk.Equal, iv(1))))}, false},
		{"put_fails", true, "put", if1(n(tk.Equal, iv(2))), false},
		{"put", true, "put", if1(n(tk.Equal, iv(1))), true},
		{"delete_fails", true, "delete", if1(n(tk.Equal, iv(2))), false},
		{"delete", true, "delete", if1(all(n(tk.Equal, iv(5)))), true},
	}
	e.runCondCases(t, cases, seed)
}
