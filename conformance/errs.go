package conformance

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §12: errors. Portable sentinels with errors.Is, *tablekit.Error with
// errors.As, messages that name the table and what was wrong, no panics, no
// writes on bad input, and context errors as they are.

func errorCases() []testCase {
	return []testCase{
		{"SentinelsAndAs", testErrorsAs},
	}
}

func badInputCases() []testCase {
	return []testCase{
		{"Writes", testBadWrites},
		{"Reads", testBadReads},
		{"LimitsAccepted", testLimitsAccepted},
		{"MaxSizes", testMaxSizes},
	}
}

func contextCases() []testCase {
	return []testCase{
		{"Canceled", func(e *env) { testContext(e, false) }},
		{"DeadlineExceeded", func(e *env) { testContext(e, true) }},
	}
}

var sentinels = []error{tk.ErrInvalidArgument, tk.ErrTableNotFound, tk.ErrAlreadyExists, tk.ErrConditionFailed,
	tk.ErrThrottled, tk.ErrUnavailable, tk.ErrUnimplemented}

// testErrorsAs: each kind of failure matches its own sentinel and no other,
// and errors.As reaches a *tablekit.Error carrying the operation and table.
func testErrorsAs(e *env) {
	t := e.create("errs", schemaS, tk.TableOptions{})
	missing := e.name("errsmissing")
	cases := []struct {
		what, op, table string
		code            error
		err             error
	}{
		{"invalid argument", "PutRow", t.Name(), tk.ErrInvalidArgument,
			t.PutRow(e.ctx, strKey("r"), []tk.Column{col("c", dv(math.Inf(1)), 0)})},
		{"condition failed", "PutRow", t.Name(), tk.ErrConditionFailed,
			t.PutRow(e.ctx, strKey("r"), nil, tk.ExpectExist)},
		{"table not found", "GetRow", missing, tk.ErrTableNotFound,
			func() error { _, _, err := e.c.Table(missing).GetRow(e.ctx, strKey("r")); return err }()},
		{"already exists", "CreateTable", t.Name(), tk.ErrAlreadyExists,
			e.c.CreateTable(e.ctx, tk.TableMeta{Name: t.Name(), Key: schemaS})},
		{"invalid primary key", "UpdateRow", t.Name(), tk.ErrInvalidArgument,
			func() error {
				_, err := t.UpdateRow(e.ctx, intKey(1), []tk.Change{tk.Put("c", iv(1))})
				return err
			}()},
	}
	for _, c := range cases {
		if !e.wantErr(c.what, c.err, c.code, c.table) {
			continue
		}
		for _, s := range sentinels {
			if s != c.code && errors.Is(c.err, s) {
				e.t.Errorf("%s: error %q also matches %v", c.what, c.err, s)
			}
		}
		var te *tk.Error
		if errors.As(c.err, &te) {
			if te.Op != c.op || te.Table != c.table {
				e.t.Errorf("%s: *tablekit.Error has Op %q Table %q, want %q %q", c.what, te.Op, te.Table, c.op, c.table)
			}
		}
		if errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded) {
			e.t.Errorf("%s: error %q matches a context error", c.what, c.err)
		}
	}
}

// badCase is one bad request: run returns its error.
type badCase struct {
	what    string
	run     func() error
	mention []string
}

// checkBad runs each case: ErrInvalidArgument naming the table and what was
// wrong, no panic, and the table's content unchanged.
func (e *env) checkBad(t tbl, cases []badCase, write bool) {
	e.t.Helper()
	before := e.scan("before", t, allVersions)
	for _, c := range cases {
		err := e.safe(c.what, c.run)
		if err == errPanicked {
			continue
		}
		e.wantErr(c.what, err, tk.ErrInvalidArgument, append([]string{t.Name()}, c.mention...)...)
		if write {
			e.diff(c.what+": table after the refused write", before, e.scan(c.what, t, allVersions))
		}
	}
}

var schemaBad = tk.KeySchema{{Name: "pk", Type: tk.TypeString}, {Name: "sk", Type: tk.TypeInteger}, {Name: "bk", Type: tk.TypeBinary}}

func badKey(pk string, bk []byte) tk.PrimaryKey {
	return tk.Key("pk", tk.String(pk)).Add("sk", tk.Integer(1)).Add("bk", tk.Binary(bk))
}

// testBadWrites: every kind of bad write is refused and writes nothing.
func testBadWrites(e *env) {
	t := e.create("badw", schemaBad, tk.TableOptions{MaxVersions: 2})
	k := badKey("s", []byte{1})
	e.put(t, k, col("c", sv("keep"), 0), col("d", iv(1), 0))
	big := strings.Repeat("x", tk.MaxValueSize+1)
	chunk := tk.Binary(make([]byte, 3<<19)) // 1.5 MiB: three make a write over 4 MiB
	many := make([]tk.Column, tk.MaxColumnsPerWrite+1)
	manyChanges := make([]tk.Change, tk.MaxColumnsPerWrite+1)
	for i := range many {
		many[i] = col(fmt.Sprintf("c%d", i), iv(int64(i)), 0)
		manyChanges[i] = tk.Put(many[i].Name, many[i].Value)
	}
	put := func(key tk.PrimaryKey, cols ...tk.Column) func() error {
		return func() error { return t.PutRow(e.ctx, key, cols) }
	}
	putIf := func(opt tk.WriteOption) func() error {
		return func() error { return t.PutRow(e.ctx, k, []tk.Column{col("c", sv("new"), 0)}, opt) }
	}
	upd := func(key tk.PrimaryKey, changes ...tk.Change) func() error {
		return func() error { _, err := t.UpdateRow(e.ctx, key, changes); return err }
	}
	batch := func(w tk.BatchWrite) func() error {
		return func() error {
			res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{w})
			if err != nil {
				return err
			}
			return res[0].Err
		}
	}
	good := col("good", iv(1), 0)
	eqNaN := tk.SingleColumnValue("c", tk.Equal, dv(math.NaN()))
	cases := []badCase{
		{"PutRow invalid UTF-8 value", put(k, good, col("c", sv("a\xffb"), 0)), []string{"c"}},
		{"PutRow invalid UTF-8 key", put(badKey("\xff", nil), good), []string{"pk"}},
		{"PutRow NaN", put(k, good, col("c", dv(math.NaN()), 0)), []string{"c"}},
		{"PutRow +Inf", put(k, good, col("c", dv(math.Inf(1)), 0)), []string{"c"}},
		{"PutRow -Inf", put(k, good, col("c", dv(math.Inf(-1)), 0)), []string{"c"}},
		{"PutRow String key of 1025 bytes", put(badKey(strings.Repeat("k", 1025), nil), good), []string{"pk", "1024"}},
		{"PutRow Binary key of 1025 bytes", put(badKey("s", make([]byte, 1025)), good), []string{"bk", "1024"}},
		{"PutRow String value over 2 MiB", put(k, good, col("c", sv(big), 0)), []string{"c", "2097152"}},
		{"PutRow Binary value over 2 MiB", put(k, good, col("c", tk.Binary([]byte(big)), 0)), []string{"c", "2097152"}},
		{"PutRow 1025 columns", put(k, many...), []string{"1024"}},
		{"PutRow over 4 MiB", put(k, col("a", chunk, 0), col("b", chunk, 0), col("c", chunk, 0)), []string{"4194304"}},
		{"PutRow zero Value", put(k, good, col("c", tk.Value{}, 0)), []string{"c"}},
		{"PutRow InfMin as a value", put(k, good, col("c", tk.InfMin, 0)), []string{"c"}},
		{"PutRow negative version", put(k, good, col("c", iv(1), -5)), []string{"c"}},
		{"UpdateRow invalid UTF-8 value", upd(k, tk.Put("good", iv(1)), tk.Put("c", sv("\xc3\x28"))), []string{"c"}},
		{"UpdateRow NaN", upd(k, tk.Put("good", iv(1)), tk.Put("c", dv(math.NaN()))), []string{"c"}},
		{"UpdateRow value over 2 MiB", upd(k, tk.Put("c", sv(big))), []string{"c", "2097152"}},
		{"UpdateRow 1025 changes", upd(k, manyChanges...), []string{"1024"}},
		{"UpdateRow over 4 MiB", upd(k, tk.Put("a", chunk), tk.Put("b", chunk), tk.Put("c", chunk)), []string{"4194304"}},
		{"UpdateRow no changes", upd(k), nil},
		{"UpdateRow unknown change kind", upd(k, tk.Put("good", iv(1)), tk.Change{Kind: 99, Column: "c"}), []string{"c"}},
		{"UpdateRow DeleteVersion of a negative version", upd(k, tk.DeleteColumn("d"), tk.DeleteVersion("c", -1)), []string{"c"}},
		{"UpdateRow key of 1025 bytes", upd(badKey(strings.Repeat("k", 1025), nil), tk.Put("c", iv(1))), []string{"pk"}},
		{"UpdateRow invalid UTF-8 key", upd(badKey("a\xff", nil), tk.Put("c", iv(1))), []string{"pk"}},
		{"condition: unknown row existence", putIf(tk.RowExistence(9)), nil},
		{"condition: empty And", putIf(tk.IfMatch(tk.And())), nil},
		{"condition: empty Or", putIf(tk.IfMatch(tk.Or())), nil},
		{"condition: Not of two", putIf(tk.IfMatch(tk.CompositeFilter{Op: tk.LogicNot, Filters: []tk.Filter{eqNaN, eqNaN}})), nil},
		{"condition: nil in And", putIf(tk.IfMatch(tk.And(tk.SingleColumnValue("c", tk.Equal, iv(1)), nil))), nil},
		{"condition: unknown operator", putIf(tk.IfMatch(tk.ColumnFilter{Column: "c", Op: 0, Value: iv(1)})), []string{"c"}},
		{"condition: NaN", putIf(tk.IfMatch(eqNaN)), []string{"c"}},
		{"condition: zero Value", putIf(tk.IfMatch(tk.SingleColumnValue("c", tk.Equal, tk.Value{}))), []string{"c"}},
		{"condition: invalid UTF-8", putIf(tk.IfMatch(tk.SingleColumnValue("c", tk.Equal, sv("\xff")))), []string{"c"}},
		{"DeleteRow invalid UTF-8 key", func() error { return t.DeleteRow(e.ctx, badKey("\xfe", nil)) }, []string{"pk"}},
		{"DeleteRow bad condition", func() error { return t.DeleteRow(e.ctx, k, tk.IfMatch(eqNaN)) }, []string{"c"}},
		{"BatchWriteRow unknown kind", batch(tk.BatchWrite{Table: t.Name(), Key: k, Kind: 99}), nil},
		{"BatchWriteRow NaN", batch(tk.BatchPut(t.Name(), k, []tk.Column{good, col("c", dv(math.NaN()), 0)})), []string{"c"}},
		{"BatchWriteRow update over 2 MiB", batch(tk.BatchUpdate(t.Name(), k, []tk.Change{tk.Put("c", sv(big))})), []string{"c", "2097152"}},
		{"BatchWriteRow bad condition", batch(tk.BatchDelete(t.Name(), k, tk.IfMatch(eqNaN))), []string{"c"}},
	}
	e.checkBad(t, cases, true)
}

// testBadReads: every kind of bad read is refused.
func testBadReads(e *env) {
	t := e.create("badr", schemaBad, tk.TableOptions{})
	k := badKey("s", []byte{1})
	e.put(t, k, col("c", sv("keep"), 0))
	get := func(key tk.PrimaryKey, opts ...tk.ReadOption) func() error {
		return func() error { _, _, err := t.GetRow(e.ctx, key, opts...); return err }
	}
	rng := func(start, end tk.PrimaryKey, opts ...tk.RangeOption) func() error {
		return func() error { _, err := t.GetRange(e.ctx, start, end, opts...); return err }
	}
	rows := func(start, end tk.PrimaryKey, opts ...tk.RangeOption) func() error {
		return func() error {
			for _, err := range t.Rows(e.ctx, start, end, opts...) {
				if err != nil {
					return err
				}
			}
			return nil
		}
	}
	lo, hi := t.lo(), t.hi()
	withPK := func(v tk.Value) tk.PrimaryKey { b := lo.Clone(); b[0].Value = v; return b }
	cases := []badCase{
		{"GetRow MaxVersions(-1)", get(k, tk.MaxVersions(-1)), []string{"-1"}},
		{"GetRow empty time range", get(k, tk.Versions(10, 10)), []string{"10"}},
		{"GetRow inverted time range", get(k, tk.Versions(20, 10)), []string{"20"}},
		{"GetRow negative time range", get(k, tk.Versions(-5, 10)), []string{"-5"}},
		{"GetRow empty column name", get(k, tk.Columns("ok", "")), nil},
		{"GetRow NaN filter", get(k, tk.WithFilter(tk.SingleColumnValue("c", tk.Less, dv(math.NaN())))), []string{"c"}},
		{"GetRow filter of a foreign type", get(k, tk.WithFilter(foreignFilter{})), nil},
		{"GetRow invalid UTF-8 key", get(badKey("\xff", nil)), []string{"pk"}},
		{"GetRow key of 1025 bytes", get(badKey("s", make([]byte, 1025))), []string{"bk", "1024"}},
		{"GetRange Limit(-1)", rng(lo, hi, tk.Limit(-1)), []string{"-1"}},
		{"GetRange PageSize(-1)", rng(lo, hi, tk.PageSize(-1)), []string{"-1"}},
		{"GetRange PageSize(5001)", rng(lo, hi, tk.PageSize(5001)), []string{"5000"}},
		{"GetRange MaxVersions(-1)", rng(lo, hi, tk.MaxVersions(-1)), []string{"-1"}},
		{"GetRange inverted time range", rng(lo, hi, tk.Versions(20, 10)), nil},
		{"GetRange forward, start == end", rng(k, k), nil},
		{"GetRange forward, start > end", rng(hi, lo), nil},
		{"GetRange backward, start < end", rng(lo, hi, tk.Backward()), nil},
		{"GetRange backward, start == end", rng(k, k, tk.Backward()), nil},
		{"GetRange forward, InfMax to InfMax", rng(hi, hi), nil},
		{"GetRange invalid UTF-8 bound", rng(withPK(sv("\xff")), hi), []string{"pk"}},
		{"GetRange bound of 1025 bytes", rng(lo, withPK(sv(strings.Repeat("k", 1025)))), []string{"pk", "1024"}},
		{"GetRange NaN filter", rng(lo, hi, tk.WithFilter(tk.SingleColumnValue("c", tk.Equal, dv(math.Inf(-1))))), []string{"c"}},
		{"Rows Limit(-1)", rows(lo, hi, tk.Limit(-1)), []string{"-1"}},
		{"Rows backward, start < end", rows(lo, hi, tk.Backward()), nil},
		{"BatchGetRow MaxVersions(-1)", func() error {
			res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: k, Options: []tk.ReadOption{tk.MaxVersions(-1)}}})
			if err != nil {
				return err
			}
			return res[0].Err
		}, []string{"-1"}},
	}
	e.checkBad(t, cases, false)
}

// foreignFilter is a Filter that is not one of tablekit's.
type foreignFilter struct{ tk.Filter }

// testLimitsAccepted: a write of exactly 1024 columns is accepted.
func testLimitsAccepted(e *env) {
	t := e.create("limits", schemaS, tk.TableOptions{})
	cols := make([]tk.Column, tk.MaxColumnsPerWrite)
	for i := range cols {
		cols[i] = col(fmt.Sprintf("c%04d", i), iv(int64(i)), 0)
	}
	e.ok("PutRow of 1024 columns", t.PutRow(e.ctx, strKey("r"), cols))
	w := e.want(strKey("r"), cols...)
	e.expectRow("1024 columns", t, strKey("r"), &w)
	// A row may hold more columns than one write may carry (SPEC §7).
	var changes []tk.Change
	for i := range 8 {
		c := col(fmt.Sprintf("d%d", i), iv(int64(i)), 0)
		cols = append(cols, c)
		changes = append(changes, tk.Put(c.Name, c.Value))
	}
	_, err := t.UpdateRow(e.ctx, strKey("r"), changes)
	e.ok("UpdateRow adding 8 more columns", err)
	w = e.want(strKey("r"), cols...)
	e.expectRow("1032 columns", t, strKey("r"), &w)
}

// testMaxSizes: rows at SPEC's size limits (1024-byte key values, a 2 MiB
// value, a write of almost 4 MiB) are stored exactly. A backend whose
// harness declares NarrowLimits may instead refuse such a row (DESIGN.md: "a
// row that cannot fit gets a clear ErrInvalidArgument"); then the error must
// be ErrInvalidArgument naming the table, and nothing may be written.
func testMaxSizes(e *env) {
	schema := tk.KeySchema{{Name: "s", Type: tk.TypeString}, {Name: "b", Type: tk.TypeBinary}}
	t := e.create("maxsize", schema, tk.TableOptions{})
	key := func(s string, b []byte) tk.PrimaryKey { return tk.Key("s", sv(s)).Add("b", tk.Binary(b)) }
	big := make([]byte, tk.MaxValueSize)
	for i := range big {
		big[i] = byte(i * 7)
	}
	cases := []struct {
		what string
		key  tk.PrimaryKey
		cols []tk.Column
	}{
		{"1024-byte String key value", key(strings.Repeat("é", 512), nil), []tk.Column{col("c", iv(1), 0)}},
		{"1024-byte Binary key value", key("b", make([]byte, 1024)), []tk.Column{col("c", iv(1), 0)}},
		{"two 1024-byte key values", key(strings.Repeat("k", 1024), make([]byte, 1024)), []tk.Column{col("c", iv(1), 0)}},
		{"2 MiB Binary value", key("v", nil), []tk.Column{col("c", tk.Binary(big), 0)}},
		{"2 MiB String value", key("w", nil), []tk.Column{col("c", sv(strings.Repeat("s", tk.MaxValueSize)), 0)}},
		{"write of almost 4 MiB", key("x", nil), []tk.Column{col("c", tk.Binary(big), 0), col("d", tk.Binary(big[:tk.MaxWriteSize-tk.MaxValueSize-64]), 0)}},
	}
	var stored []tk.Row
	for _, c := range cases {
		err := t.PutRow(e.ctx, c.key, c.cols)
		if err == nil {
			stored = append(stored, row(c.key, c.cols...))
			w := e.want(c.key, c.cols...)
			e.expectRow(c.what, t, c.key, &w)
			continue
		}
		if nl, ok := e.s.h.(NarrowLimits); ok {
			e.t.Logf("%s: refused (the harness declares narrower limits: %s): %v", c.what, nl.NarrowLimits(), err)
		} else {
			e.t.Errorf("%s: refused a row SPEC allows, and the harness declares no NarrowLimits: %v", c.what, err)
		}
		e.wantErr(c.what+": refused", err, tk.ErrInvalidArgument, t.Name())
		e.expectRow(c.what+": refused", t, c.key, nil)
	}
	slices.SortFunc(stored, func(a, b tk.Row) int { return storedKeyCompare(a.Key, b.Key) })
	var want []rowView
	for _, r := range stored {
		want = append(want, e.want(r.Key, r.Columns...))
	}
	e.expectScan("rows at the size limits", t, want)
}

// testContext: with a cancelled (or expired) context every operation fails
// with the context's error and changes nothing, through a client that has
// the table's schema cached and through one that has not.
func testContext(e *env, deadline bool) {
	t := e.create("ctx", schemaS, tk.TableOptions{})
	victim := e.create("ctxvictim", schemaS, tk.TableOptions{})
	k := strKey("r")
	e.put(t, k, col("c", sv("keep"), 0))
	before := e.scan("before", t, allVersions)
	var ctx context.Context
	var cancel context.CancelFunc
	target := context.Canceled
	if deadline {
		ctx, cancel = context.WithDeadline(e.ctx, time.Now().Add(-time.Second))
		target = context.DeadlineExceeded
	} else {
		ctx, cancel = context.WithCancel(e.ctx)
		cancel()
	}
	defer cancel()
	created := e.name("ctxnew")
	for _, c := range []struct {
		name string
		c    *tk.Client
	}{{"warm client", e.c}, {"cold client", e.fresh()}} {
		cl, tt := c.c, c.c.Table(t.Name())
		check := func(op string, err error) {
			e.t.Helper()
			e.wantErr(c.name+": "+op, err, target)
		}
		check("CreateTable", cl.CreateTable(ctx, tk.TableMeta{Name: created, Key: schemaS}))
		_, err := cl.DescribeTable(ctx, t.Name())
		check("DescribeTable", err)
		_, err = cl.ListTables(ctx)
		check("ListTables", err)
		check("UpdateTable", cl.UpdateTable(ctx, t.Name(), tk.TableOptions{TTL: 86400 * time.Second}))
		check("DeleteTable", cl.DeleteTable(ctx, victim.Name()))
		check("PutRow", tt.PutRow(ctx, strKey("new"), []tk.Column{col("c", sv("x"), 0)}))
		check("PutRow key-only", tt.PutRow(ctx, strKey("new"), nil))
		_, err = tt.UpdateRow(ctx, k, []tk.Change{tk.Put("c", sv("changed"))})
		check("UpdateRow", err)
		check("DeleteRow", tt.DeleteRow(ctx, k))
		_, _, err = tt.GetRow(ctx, k)
		check("GetRow", err)
		_, err = tt.GetRange(ctx, t.lo(), t.hi())
		check("GetRange", err)
		var rowsErr error
		for _, err := range tt.Rows(ctx, t.lo(), t.hi()) {
			rowsErr = err
			break
		}
		check("Rows", rowsErr)
		gets, err := cl.BatchGetRow(ctx, []tk.BatchGet{{Table: t.Name(), Key: k}, {Table: victim.Name(), Key: k}})
		check("BatchGetRow", batchErr(err, target, len(gets), func(i int) error { return gets[i].Err }))
		writes, err := cl.BatchWriteRow(ctx, []tk.BatchWrite{tk.BatchPut(t.Name(), strKey("new"), nil), tk.BatchDelete(t.Name(), k)})
		check("BatchWriteRow", batchErr(err, target, len(writes), func(i int) error { return writes[i].Err }))
	}
	e.diff("table after cancelled writes", before, e.scan("after", t, allVersions))
	e.describeBoth("table after cancelled UpdateTable", tk.TableMeta{Name: t.Name(), Key: schemaS, Options: defaultOptions})
	_, err := e.c.DescribeTable(e.ctx, victim.Name())
	e.ok("DescribeTable after cancelled DeleteTable", err)
	_, err = e.c.DescribeTable(e.ctx, created)
	e.wantErr("DescribeTable after cancelled CreateTable", err, tk.ErrTableNotFound, created)
}

// batchErr is the context error of a batch call: the call's own error, or,
// when the backend reported per row instead, target if every row carries it.
func batchErr(err, target error, n int, row func(int) error) error {
	if err != nil || n == 0 {
		return err
	}
	for i := range n {
		if e := row(i); !errors.Is(e, target) {
			return fmt.Errorf("no error for the call, and row %d has error %v", i, e)
		}
	}
	return target
}
