package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	tk "github.com/tablekit/tablekit"
)

// SPEC §11: single-row operations are atomic; concurrent conditional writes
// and increments lose nothing. (RunLinearizability checks histories in depth;
// these are the plain counting checks.)

func consistencyCases() []testCase {
	return []testCase{
		{"ConcurrentIncrements", testConcurrentIncrements},
		{"ConcurrentExpectNotExist", testConcurrentExpectNotExist},
		{"ConcurrentCompareAndSet", testConcurrentCAS},
	}
}

// testConcurrentIncrements: every increment is applied once, and each
// returns a distinct value.
func testConcurrentIncrements(e *env) {
	t := e.create("cinc", schemaS, tk.TableOptions{})
	const workers, each = 4, 8
	k := strKey("counter")
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				res, err := t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("n", 1)})
				if err != nil {
					e.t.Errorf("Increment: %v", err)
					return
				}
				if len(res.Increments) != 1 {
					e.t.Errorf("Increment returned %d values", len(res.Increments))
					return
				}
				v, _ := res.Increments[0].Value.Int()
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	var want []int64
	for i := range int64(workers * each) {
		want = append(want, i+1)
	}
	e.diff("values returned by concurrent increments", want, got)
	w := e.want(k, col("n", iv(workers*each), 0))
	e.expectRow("counter", t, k, &w)
}

// testConcurrentExpectNotExist: of concurrent creations of one row, exactly
// one succeeds and the row holds its value.
func testConcurrentExpectNotExist(e *env) {
	t := e.create("cnew", schemaS, tk.TableOptions{})
	const workers = 6
	k := strKey("r")
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			errs[i] = t.PutRow(e.ctx, k, []tk.Column{col("w", iv(int64(i)), 0)}, tk.ExpectNotExist)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			e.t.Errorf("writers %d and %d both created the row", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, tk.ErrConditionFailed):
			e.t.Errorf("writer %d: %v, want nil or ErrConditionFailed", i, err)
		}
	}
	if winner < 0 {
		e.t.Fatalf("no writer created the row")
	}
	w := e.want(k, col("w", iv(int64(winner)), 0))
	e.expectRow("row", t, k, &w)
}

// testConcurrentCAS: read-then-conditional-update loops lose no update.
func testConcurrentCAS(e *env) {
	t := e.create("ccas", schemaS, tk.TableOptions{})
	const workers, each = 3, 4
	k := strKey("r")
	e.put(t, k, col("v", iv(0), 0))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for done, tries := 0, 0; done < each; tries++ {
				if tries > 200 {
					e.t.Errorf("worker %d: no progress after 200 tries", w)
					return
				}
				r, found, err := t.GetRow(e.ctx, k)
				if err != nil || !found {
					e.t.Errorf("worker %d: GetRow: found=%v err=%v", w, found, err)
					return
				}
				cur, _ := r.Get("v")
				n, _ := cur.Int()
				_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Put("v", iv(n+1))},
					tk.ExpectExist, tk.IfMatch(tk.ColumnFilter{Column: "v", Op: tk.Equal, Value: iv(n), FilterIfMissing: true}))
				switch {
				case err == nil:
					done++
				case !errors.Is(err, tk.ErrConditionFailed):
					e.t.Errorf("worker %d: UpdateRow: %v", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	w := e.want(k, col("v", iv(workers*each), 0))
	e.expectRow(fmt.Sprintf("after %d compare-and-set updates", workers*each), t, k, &w)
}
