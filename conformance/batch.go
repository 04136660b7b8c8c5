package conformance

import (
	"fmt"
	"math"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §8 BatchGetRow and BatchWriteRow.

func batchCases() []testCase {
	return []testCase{
		{"GetLimits", testBatchGetLimits},
		{"WriteLimits", testBatchWriteLimits},
		{"WritePerRowResults", testBatchWritePerRow},
		{"GetPerRowResults", testBatchGetPerRow},
	}
}

// testBatchGetLimits: 0 and 101 reads fail as a whole; 100 succeed, in order.
func testBatchGetLimits(e *env) {
	t := e.create("bget", schemaI, tk.TableOptions{})
	var rows []tk.Row
	for i := int64(0); i < 100; i += 2 {
		rows = append(rows, row(intKey(i), col("i", iv(i), 0)))
	}
	e.seedBatch(t, rows)
	gets := func(n int) []tk.BatchGet {
		out := make([]tk.BatchGet, n)
		for i := range out {
			out[i] = tk.BatchGet{Table: t.Name(), Key: intKey(int64(99 - i%100))}
		}
		return out
	}
	for _, n := range []int{0, 101} {
		res, err := e.c.BatchGetRow(e.ctx, gets(n))
		e.wantErr(fmt.Sprintf("BatchGetRow of %d", n), err, tk.ErrInvalidArgument, "100")
		if res != nil {
			e.t.Errorf("BatchGetRow of %d: got results with the error", n)
		}
	}
	_, err := e.c.BatchGetRow(e.ctx, nil)
	e.wantErr("BatchGetRow(nil)", err, tk.ErrInvalidArgument)
	res, err := e.c.BatchGetRow(e.ctx, gets(100))
	if !e.ok("BatchGetRow of 100", err) {
		return
	}
	if len(res) != 100 {
		e.t.Fatalf("BatchGetRow of 100: %d results", len(res))
	}
	for j, r := range res {
		i := int64(99 - j)
		if !e.ok(fmt.Sprintf("result %d", j), r.Err) {
			continue
		}
		if r.Found != (i%2 == 0) {
			e.t.Errorf("result %d (key %d): found=%v", j, i, r.Found)
			continue
		}
		if r.Found {
			e.diff(fmt.Sprintf("result %d", j), e.want(intKey(i), col("i", iv(i), 0)), viewRow(r.Row))
		}
	}
}

// testBatchWriteLimits: 0 and 201 writes fail as a whole and write nothing;
// 200 succeed.
func testBatchWriteLimits(e *env) {
	t := e.create("bwrite", schemaI, tk.TableOptions{})
	writes := func(n int) []tk.BatchWrite {
		out := make([]tk.BatchWrite, n)
		for i := range out {
			out[i] = tk.BatchPut(t.Name(), intKey(int64(i)), []tk.Column{col("i", iv(int64(i)), 0)})
		}
		return out
	}
	for _, n := range []int{0, 201} {
		res, err := e.c.BatchWriteRow(e.ctx, writes(n))
		e.wantErr(fmt.Sprintf("BatchWriteRow of %d", n), err, tk.ErrInvalidArgument, "200")
		if res != nil {
			e.t.Errorf("BatchWriteRow of %d: got results with the error", n)
		}
	}
	_, err := e.c.BatchWriteRow(e.ctx, nil)
	e.wantErr("BatchWriteRow(nil)", err, tk.ErrInvalidArgument)
	e.expectScan("after refused batches", t, nil)
	res, err := e.c.BatchWriteRow(e.ctx, writes(200))
	if !e.ok("BatchWriteRow of 200", err) {
		return
	}
	if len(res) != 200 {
		e.t.Fatalf("BatchWriteRow of 200: %d results", len(res))
	}
	var want []rowView
	for i, r := range res {
		e.ok(fmt.Sprintf("result %d", i), r.Err)
		want = append(want, e.want(intKey(int64(i)), col("i", iv(int64(i)), 0)))
	}
	e.expectScan("after 200 writes", t, want)
}

// testBatchWritePerRow: across two tables and a missing one, each write
// succeeds or fails on its own; results come in request order and failed
// writes leave their rows as they were.
func testBatchWritePerRow(e *env) {
	t1 := e.create("bw1", schemaS, tk.TableOptions{})
	t2 := e.create("bw2", schemaI, tk.TableOptions{MaxVersions: 2})
	missing := e.name("bwmissing")
	T := e.now()
	// Every write names its own row: SPEC does not say whether a batch may
	// name one row twice.
	for _, k := range []string{"e2", "e6", "e10"} {
		e.put(t1, strKey(k), col("n", iv(1), 0))
	}
	for _, k := range []int64{4, 11} {
		e.put(t2, intKey(k), col("s", sv("str"), 0))
	}
	e.clock.Advance(time.Second)
	T1 := e.now()
	n1, n2 := t1.Name(), t2.Name()
	writes := []tk.BatchWrite{
		0:  tk.BatchPut(n1, strKey("a"), []tk.Column{col("x", iv(1), 0)}),
		1:  tk.BatchPut(n2, strKey("x"), []tk.Column{col("x", iv(1), 0)}),
		2:  tk.BatchPut(n1, strKey("e2"), []tk.Column{col("x", iv(1), 0)}, tk.ExpectNotExist),
		3:  tk.BatchPut(missing, strKey("a"), nil),
		4:  tk.BatchUpdate(n2, intKey(4), []tk.Change{tk.Put("x", iv(1)), tk.Increment("s", 1)}),
		5:  tk.BatchUpdate(n2, intKey(5), []tk.Change{tk.Put("c", sv("c")), tk.Increment("n", 5)}),
		6:  tk.BatchDelete(n1, strKey("e6"), tk.IfMatch(tk.SingleColumnValue("n", tk.Equal, iv(2)))),
		7:  tk.BatchUpdate(n1, strKey("b"), []tk.Change{tk.Put("d", dv(math.NaN()))}),
		8:  tk.BatchDelete(n2, intKey(8)),
		9:  tk.BatchPut(n1, strKey("c"), []tk.Column{col("x", iv(1), T1-200*86400*1000)}),
		10: tk.BatchUpdate(n1, strKey("e10"), []tk.Change{tk.Put("m", iv(1))}, tk.ExpectExist),
		11: tk.BatchUpdate(n2, intKey(11), []tk.Change{tk.Put("y", iv(2))}, tk.ExpectExist),
		12: tk.BatchPut(n1, strKey("d"), nil, tk.ExpectNotExist),
	}
	wantErr := []error{0: nil, 1: tk.ErrInvalidArgument, 2: tk.ErrConditionFailed, 3: tk.ErrTableNotFound,
		4: tk.ErrInvalidArgument, 5: nil, 6: tk.ErrConditionFailed, 7: tk.ErrInvalidArgument, 8: nil,
		9: tk.ErrInvalidArgument, 10: nil, 11: nil, 12: nil}
	mention := map[int][]string{1: {n2, "pk"}, 3: {missing}, 4: {n2, "s"}, 7: {n1, "d"}, 9: {n1, "x"}}
	res, err := e.c.BatchWriteRow(e.ctx, writes)
	if !e.ok("BatchWriteRow", err) {
		return
	}
	if len(res) != len(writes) {
		e.t.Fatalf("BatchWriteRow: %d results for %d writes", len(res), len(writes))
	}
	for i, r := range res {
		what := fmt.Sprintf("result %d", i)
		if wantErr[i] == nil {
			e.ok(what, r.Err)
		} else {
			e.wantErr(what, r.Err, wantErr[i], mention[i]...)
		}
	}
	e.diff("increments of result 5", []cellView{{"n", "Integer(5)", T1}}, viewRow(tk.Row{Columns: res[5].Increments}).Cells)
	for _, i := range []int{0, 1, 2, 4, 8, 10} {
		if len(res[i].Increments) != 0 {
			e.t.Errorf("result %d has increments %v", i, res[i].Increments)
		}
	}
	e.expectScan(n1, t1, []rowView{
		e.want(strKey("a"), col("x", iv(1), T1)),
		e.want(strKey("d")),
		e.want(strKey("e10"), col("m", iv(1), T1), col("n", iv(1), T)),
		e.want(strKey("e2"), col("n", iv(1), T)),
		e.want(strKey("e6"), col("n", iv(1), T)),
	})
	e.expectScan(n2, t2, []rowView{
		e.want(intKey(4), col("s", sv("str"), T)),
		e.want(intKey(5), col("c", sv("c"), T1), col("n", iv(5), T1)),
		e.want(intKey(11), col("s", sv("str"), T), col("y", iv(2), T1)),
	})
}

// testBatchGetPerRow: across two tables and a missing one, each read
// succeeds or fails on its own, in request order.
func testBatchGetPerRow(e *env) {
	t1 := e.create("bg1", schemaS, tk.TableOptions{})
	t2 := e.create("bg2", schemaI, tk.TableOptions{MaxVersions: 3})
	missing := e.name("bgmissing")
	T := e.now()
	// Every read names its own row: SPEC does not say whether a batch may
	// name one row twice.
	for _, k := range []string{"r0", "r5", "r7", "r8"} {
		e.put(t1, strKey(k), col("n", iv(1), 0))
	}
	for _, k := range []int64{4, 6, 9} {
		e.put(t2, intKey(k), col("s", sv("old"), T-1000), col("s", sv("new"), 0), col("t", bv(true), 0))
	}
	n1, n2 := t1.Name(), t2.Name()
	gets := []tk.BatchGet{
		0: {Table: n1, Key: strKey("r0")},
		1: {Table: n2, Key: intKey(404)},
		2: {Table: missing, Key: strKey("r")},
		3: {Table: n1, Key: intKey(1)},
		4: {Table: n2, Key: intKey(4), Options: []tk.ReadOption{tk.Columns("nope")}},
		5: {Table: n1, Key: strKey("r5"), Options: []tk.ReadOption{tk.WithFilter(tk.SingleColumnValue("n", tk.Equal, iv(2)))}},
		6: {Table: n2, Key: intKey(6), Options: []tk.ReadOption{tk.MaxVersions(2), tk.Columns("s")}},
		7: {Table: n1, Key: strKey("r7"), Options: []tk.ReadOption{tk.MaxVersions(-1)}},
		8: {Table: n1, Key: strKey("r8")},
		9: {Table: n2, Key: intKey(9), Options: []tk.ReadOption{tk.WithFilter(tk.SingleColumnValue("s", tk.Equal, sv("new")))}},
	}
	type result struct {
		Found bool
		Row   rowView
	}
	want := map[int]result{
		0: {true, e.want(strKey("r0"), col("n", iv(1), 0))},
		1: {false, rowView{}},
		4: {true, e.want(intKey(4))},
		5: {false, rowView{}},
		6: {true, e.want(intKey(6), col("s", sv("new"), T), col("s", sv("old"), T-1000))},
		8: {true, e.want(strKey("r8"), col("n", iv(1), 0))},
		9: {true, e.want(intKey(9), col("s", sv("new"), T), col("t", bv(true), T))},
	}
	wantErr := map[int]error{2: tk.ErrTableNotFound, 3: tk.ErrInvalidArgument, 7: tk.ErrInvalidArgument}
	mention := map[int][]string{2: {missing}, 3: {n1, "pk"}, 7: {n1, "-1"}}
	res, err := e.c.BatchGetRow(e.ctx, gets)
	if !e.ok("BatchGetRow", err) {
		return
	}
	if len(res) != len(gets) {
		e.t.Fatalf("BatchGetRow: %d results for %d reads", len(res), len(gets))
	}
	for i, r := range res {
		what := fmt.Sprintf("result %d", i)
		if target, ok := wantErr[i]; ok {
			e.wantErr(what, r.Err, target, mention[i]...)
			continue
		}
		if !e.ok(what, r.Err) {
			continue
		}
		got := result{Found: r.Found}
		if r.Found {
			got.Row = viewRow(r.Row)
		}
		e.diff(what, want[i], got)
	}
}
