package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §13: atomic writes within one partition key. On a backend that
// claims Capabilities.AtomicWrite every case checks the contract; on one
// that does not, every case checks that the call is refused with
// ErrUnimplemented (as is the backend's own method, if it has one: there
// is no fallback) and that nothing is written.

func atomicCases() []testCase {
	return []testCase{
		{"AllOrNothing", testAtomicAllOrNothing},
		{"Increments", testAtomicIncrements},
		{"Limits", testAtomicLimits},
		{"BadInput", testAtomicBadInput},
		{"ConcurrentReader", testAtomicConcurrentReader},
		{"Linearizable", testAtomicLinearizable},
	}
}

// schemaPR is a two-column key: partition key p, row r.
var schemaPR = tk.KeySchema{{Name: "p", Type: tk.TypeString}, {Name: "r", Type: tk.TypeInteger}}

func prKey(p string, r int64) tk.PrimaryKey { return tk.Key("p", tk.String(p)).Add("r", tk.Integer(r)) }

// atomicClaimed reports whether the backend claims atomic writes. When it
// does not, it checks the refusal of writes on t (ErrUnimplemented from
// the Client and from the backend's own method) and that nothing was
// written: the table must still read as want.
func (e *env) atomicClaimed(t tbl, writes []tk.BatchWrite, want []rowView) bool {
	e.t.Helper()
	caps := tk.CapabilitiesOf(e.b)
	if got := e.c.Capabilities().AtomicWrite; got != caps.AtomicWrite {
		e.t.Errorf("Client.Capabilities().AtomicWrite = %v, the backend's is %v", got, caps.AtomicWrite)
	}
	if caps.AtomicWrite {
		return true
	}
	res, err := t.AtomicWrite(e.ctx, writes)
	e.wantErr("AtomicWrite on a backend without atomic writes", err, tk.ErrUnimplemented)
	if res != nil {
		e.t.Errorf("refused AtomicWrite returned results %+v", res)
	}
	if aw, ok := e.b.(tk.AtomicWriter); ok {
		m, err := e.c.DescribeTable(e.ctx, t.Name())
		e.must("DescribeTable", err)
		reqs := make([]*tk.WriteRequest, len(writes))
		for i, w := range writes {
			reqs[i] = &tk.WriteRequest{Meta: &m, Kind: w.Kind, Key: w.Key, Columns: slices.Clone(w.Columns), Changes: w.Changes, Condition: w.Condition, Now: e.now()}
			for j := range reqs[i].Columns {
				reqs[i].Columns[j].Version = e.now()
			}
		}
		if _, err := aw.AtomicWrite(e.ctx, reqs); !errors.Is(err, tk.ErrUnimplemented) {
			e.t.Errorf("the backend does not claim AtomicWrite, but its AtomicWrite answered %v, want an error matching ErrUnimplemented", err)
		}
	}
	e.expectScan("after a refused AtomicWrite", t, want)
	return false
}

// wantAtomicErr checks that err is code for write index: an
// *AtomicWriteError with that Index, and a message naming the write.
func (e *env) wantAtomicErr(what string, err, code error, index int) {
	e.t.Helper()
	if !e.wantErr(what, err, code, fmt.Sprintf("write %d", index)) {
		return
	}
	var ae *tk.AtomicWriteError
	switch {
	case !errors.As(err, &ae):
		e.t.Errorf("%s: errors.As(err, *tablekit.AtomicWriteError) is false for %q", what, err)
	case ae.Index != index:
		e.t.Errorf("%s: AtomicWriteError.Index = %d, want %d (%v)", what, ae.Index, index, err)
	}
}

// testAtomicAllOrNothing: five writes (put, update, delete, a new row,
// a column condition, deleting the row's one column and so the row); a failing condition at any index fails the call
// with that index and writes nothing; with every condition holding, all
// apply.
func testAtomicAllOrNothing(e *env) {
	t := e.create("atomic", schemaPR, tk.TableOptions{})
	T := e.now()
	var seed []tk.Row
	var want []rowView
	for r := range int64(5) {
		seed = append(seed, row(prKey("a", r), col("c", iv(r), T)))
		want = append(want, e.want(prKey("a", r), col("c", iv(r), T)))
	}
	e.seedBatch(t, seed)
	e.clock.Advance(time.Second)
	eq := func(v int64) tk.WriteOption { return tk.IfMatch(tk.SingleColumnValue("c", tk.Equal, iv(v))) }
	writes := func(fail int) []tk.BatchWrite {
		conds := []tk.WriteOption{tk.ExpectExist, tk.ExpectExist, tk.ExpectExist, tk.ExpectNotExist, eq(4)}
		if fail >= 0 {
			conds[fail] = []tk.WriteOption{tk.ExpectNotExist, tk.ExpectNotExist, tk.ExpectNotExist, tk.ExpectExist, eq(999)}[fail]
		}
		return []tk.BatchWrite{
			{Key: prKey("a", 0), Kind: tk.WritePut, Columns: []tk.Column{col("c", iv(100), 0)}, Condition: cond(conds[0])},
			{Key: prKey("a", 1), Kind: tk.WriteUpdate, Changes: []tk.Change{tk.Put("d", sv("x"))}, Condition: cond(conds[1])},
			{Key: prKey("a", 2), Kind: tk.WriteDelete, Condition: cond(conds[2])},
			{Key: prKey("a", 7), Kind: tk.WritePut, Columns: []tk.Column{col("c", iv(7), 0)}, Condition: cond(conds[3])},
			{Key: prKey("a", 4), Kind: tk.WriteUpdate, Changes: []tk.Change{tk.DeleteColumn("c")}, Condition: cond(conds[4])},
		}
	}
	if !e.atomicClaimed(t, writes(-1), want) {
		return
	}
	for fail := range 5 {
		res, err := t.AtomicWrite(e.ctx, writes(fail))
		e.wantAtomicErr(fmt.Sprintf("AtomicWrite whose write %d's condition fails", fail), err, tk.ErrConditionFailed, fail)
		if res != nil {
			e.t.Errorf("failed AtomicWrite returned results %+v", res)
		}
		e.expectScan(fmt.Sprintf("after the AtomicWrite whose write %d failed", fail), t, want)
	}
	res, err := t.AtomicWrite(e.ctx, writes(-1))
	if e.ok("AtomicWrite with every condition holding", err) && len(res) != 5 {
		e.t.Errorf("AtomicWrite of 5 writes returned %d results", len(res))
	}
	now := e.now()
	e.expectScan("after the AtomicWrite", t, []rowView{
		e.want(prKey("a", 0), col("c", iv(100), now)),
		e.want(prKey("a", 1), col("c", iv(1), T), col("d", sv("x"), now)),
		e.want(prKey("a", 3), col("c", iv(3), T)),
		e.want(prKey("a", 7), col("c", iv(7), now)),
	})
}

// cond is the condition of one write option.
func cond(o tk.WriteOption) tk.Condition { return tk.BatchDelete("", nil, o).Condition }

// testAtomicIncrements: increments inside an atomic write return their
// values, in order; a failed atomic write increments nothing.
func testAtomicIncrements(e *env) {
	t := e.create("atomicinc", schemaPR, tk.TableOptions{})
	e.put(t, prKey("a", 1), col("n", iv(5), 0))
	want := []rowView{e.want(prKey("a", 1), col("n", iv(5), e.now()))}
	e.clock.Advance(time.Second)
	writes := []tk.BatchWrite{
		tk.BatchUpdate("", prKey("a", 1), []tk.Change{tk.Increment("n", 2)}),
		tk.BatchUpdate("", prKey("a", 2), []tk.Change{tk.Increment("n", 3), tk.Put("s", sv("x")), tk.Increment("m", -1)}),
		tk.BatchPut("", prKey("a", 3), []tk.Column{col("c", iv(1), 0)}),
	}
	if !e.atomicClaimed(t, writes, want) {
		return
	}
	res, err := t.AtomicWrite(e.ctx, writes)
	if e.ok("AtomicWrite with increments", err) {
		got := make([]string, len(res))
		for i, r := range res {
			for _, c := range r.Increments {
				got[i] += c.Name + "=" + fmtValue(c.Value) + " "
			}
		}
		wantInc := []string{"n=" + fmtValue(iv(7)) + " ", "n=" + fmtValue(iv(3)) + " m=" + fmtValue(iv(-1)) + " ", ""}
		e.diff("AtomicWrite's increments, per write", wantInc, got)
	}
	now := e.now()
	after := []rowView{
		e.want(prKey("a", 1), col("n", iv(7), now)),
		e.want(prKey("a", 2), col("m", iv(-1), now), col("n", iv(3), now), col("s", sv("x"), now)),
		e.want(prKey("a", 3), col("c", iv(1), now)),
	}
	e.expectScan("after the AtomicWrite with increments", t, after)
	e.clock.Advance(time.Second)
	_, err = t.AtomicWrite(e.ctx, []tk.BatchWrite{
		tk.BatchUpdate("", prKey("a", 1), []tk.Change{tk.Increment("n", 1)}),
		tk.BatchUpdate("", prKey("a", 2), []tk.Change{tk.Increment("n", 1)}, tk.ExpectNotExist),
	})
	e.wantAtomicErr("AtomicWrite whose second write's condition fails", err, tk.ErrConditionFailed, 1)
	e.expectScan("after the failed AtomicWrite with increments", t, after)
}

// testAtomicLimits: 100 writes apply, 101 and none are refused; 4 MiB in
// all is the limit. Nothing refused is written.
func testAtomicLimits(e *env) {
	t := e.create("atomiclim", schemaPR, tk.TableOptions{})
	puts := func(lo, n int, size int) []tk.BatchWrite {
		ws := make([]tk.BatchWrite, n)
		for i := range ws {
			v := iv(int64(lo + i))
			if size > 0 {
				v = tk.BinaryString(strings.Repeat("x", size))
			}
			ws[i] = tk.BatchPut("", prKey("a", int64(lo+i)), []tk.Column{col("c", v, 0)})
		}
		return ws
	}
	if !e.atomicClaimed(t, puts(0, 2, 0), nil) {
		return
	}
	_, err := t.AtomicWrite(e.ctx, nil)
	e.wantErr("AtomicWrite of no writes", err, tk.ErrInvalidArgument)
	_, err = t.AtomicWrite(e.ctx, puts(0, tk.MaxAtomicWrite+1, 0))
	e.wantErr("AtomicWrite of 101 writes", err, tk.ErrInvalidArgument, "100")
	e.expectScan("after the refused AtomicWrite of 101 writes", t, nil)
	res, err := t.AtomicWrite(e.ctx, puts(0, tk.MaxAtomicWrite, 0))
	if e.ok("AtomicWrite of 100 writes", err) && len(res) != 100 {
		e.t.Errorf("AtomicWrite of 100 writes returned %d results", len(res))
	}
	if got := len(e.scan("after the AtomicWrite of 100 writes", t)); got != 100 {
		e.t.Errorf("after the AtomicWrite of 100 writes the table has %d rows, want 100", got)
	}
	// 3 values of 1.5 MiB pass the 4 MiB limit at the third write.
	const big = 3 << 19
	_, err = t.AtomicWrite(e.ctx, puts(200, 3, big))
	e.wantAtomicErr("AtomicWrite of 4.5 MiB", err, tk.ErrInvalidArgument, 2)
	if got := len(e.scan("after the refused AtomicWrite of 4.5 MiB", t)); got != 100 {
		e.t.Errorf("after the refused AtomicWrite of 4.5 MiB the table has %d rows, want 100", got)
	}
	// 3 MiB in 8 values of 384 KiB: rows within every backend's row
	// limit (DynamoDB's items are at most 400 KB).
	_, err = t.AtomicWrite(e.ctx, puts(200, 8, 3<<17))
	e.ok("AtomicWrite of 3 MiB", err)
	if got := len(e.scan("after the AtomicWrite of 3 MiB", t)); got != 108 {
		e.t.Errorf("after the AtomicWrite of 3 MiB the table has %d rows, want 108", got)
	}
}

// testAtomicBadInput: a write of another partition key, of another
// table, a row twice, or a malformed write is ErrInvalidArgument naming
// the write; nothing is written.
func testAtomicBadInput(e *env) {
	t := e.create("atomicbad", schemaPR, tk.TableOptions{})
	other := e.create("atomicbad2", schemaPR, tk.TableOptions{})
	put := func(p string, r int64) tk.BatchWrite {
		return tk.BatchPut("", prKey(p, r), []tk.Column{col("c", iv(r), 0)})
	}
	if !e.atomicClaimed(t, []tk.BatchWrite{put("a", 1), put("a", 2)}, nil) {
		return
	}
	otherTable := put("a", 3)
	otherTable.Table = other.Name()
	badKey := tk.BatchPut("", tk.Key("p", tk.String("a")).Add("r", tk.String("x")), nil)
	cases := []struct {
		what   string
		writes []tk.BatchWrite
		index  int
	}{
		{"another partition key", []tk.BatchWrite{put("a", 1), put("a", 2), put("b", 3)}, 2},
		{"a row twice", []tk.BatchWrite{put("a", 1), put("a", 2), put("a", 1)}, 2},
		{"another table", []tk.BatchWrite{put("a", 1), otherTable}, 1},
		{"a key of the wrong type", []tk.BatchWrite{put("a", 1), put("a", 2), badKey}, 2},
	}
	for _, c := range cases {
		_, err := t.AtomicWrite(e.ctx, c.writes)
		e.wantAtomicErr("AtomicWrite with "+c.what, err, tk.ErrInvalidArgument, c.index)
	}
	e.expectScan("after the refused AtomicWrites", t, nil)
	e.expectScan("after the refused AtomicWrites, the other table", other, nil)
}

// testAtomicConcurrentReader: writers increment two rows of one partition
// key together in atomic writes (and others try to, with a condition that
// fails), while readers read one row, then the other. Both rows always
// hold the number of atomic writes applied so far, so by linearizability
// a row read after the other never holds less; and in the end both hold
// the number of writes that succeeded.
func testAtomicConcurrentReader(e *env) {
	t := e.create("atomicconc", schemaPR, tk.TableOptions{})
	k1, k2 := prKey("a", 1), prKey("a", 2)
	e.seedBatch(t, []tk.Row{row(k1, col("n", iv(0), 0)), row(k2, col("n", iv(0), 0))})
	inc := []tk.Change{tk.Increment("n", 1)}
	both := []tk.BatchWrite{tk.BatchUpdate("", k1, inc), tk.BatchUpdate("", k2, inc)}
	if !e.atomicClaimed(t, both, []rowView{e.want(k1, col("n", iv(0), e.now())), e.want(k2, col("n", iv(0), e.now()))}) {
		return
	}
	failing := []tk.BatchWrite{tk.BatchUpdate("", k1, inc), tk.BatchUpdate("", k2, inc, tk.IfMatch(tk.SingleColumnValue("n", tk.Equal, iv(-1))))}
	const writers, perWriter = 4, 40
	var applied atomic.Int64
	var wg, rg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWriter {
				if w%2 == 1 {
					if _, err := t.AtomicWrite(e.ctx, failing); !errors.Is(err, tk.ErrConditionFailed) {
						e.t.Errorf("AtomicWrite whose condition fails: %v, want ErrConditionFailed", err)
						return
					}
					continue
				}
				if _, err := t.AtomicWrite(e.ctx, both); err != nil {
					e.t.Errorf("AtomicWrite: %v", err)
					return
				}
				applied.Add(1)
			}
		}()
	}
	read := func(k tk.PrimaryKey) (int64, bool) {
		r, found, err := t.GetRow(e.ctx, k)
		if err != nil || !found {
			e.t.Errorf("GetRow %v: found %v, %v", k, found, err)
			return 0, false
		}
		v, _ := r.Get("n")
		n, _ := v.Int()
		return n, true
	}
	for rd := range 2 {
		rg.Add(1)
		go func() {
			defer rg.Done()
			first, second := k1, k2
			if rd == 1 {
				first, second = k2, k1
			}
			for {
				select {
				case <-done:
					return
				default:
				}
				a, ok := read(first)
				if !ok {
					return
				}
				b, ok := read(second)
				if !ok {
					return
				}
				if b < a {
					e.t.Errorf("read %v = %d, then %v = %d: the later read saw an older state, so an atomic write was seen half applied", first, a, second, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	n := applied.Load()
	e.expectScan("after the concurrent atomic writes", t, []rowView{e.want(k1, col("n", iv(n), e.now())), e.want(k2, col("n", iv(n), e.now()))})
}
