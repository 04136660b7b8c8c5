package conformance

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	tk "github.com/tablekit/tablekit"
)

// The linearizability check of atomic writes (SPEC §13 with §11), as the
// single-row one (linearizability.go) but over two rows A and B of one
// partition key, one porcupine partition: workers race atomic writes that
// increment both rows' counter n (some guarded by a condition on A's or
// B's counter, which then fails now and then, at index 0 or 1), single-row
// increments and single-row reads. The state is both counters; porcupine
// decides whether one sequential order, consistent with real time,
// explains every answer, so a read never sees half of an atomic write, and
// a failed one never at all. The clock does not move during the run.

type atomicLinKind uint8

const (
	alRead   atomicLinKind = iota // GetRow of Row -> n
	alIncr                        // UpdateRow of Row: Increment(n, DA) -> n
	alAtomic                      // AtomicWrite: A n+=DA, B n+=DB; if Cond>=0, row Cond's n must be Arg -> both n
)

type atomicLinInput struct {
	Kind   atomicLinKind
	Row    int // alRead, alIncr
	DA, DB int64
	Cond   int // -1: none; 0: on A (write 0); 1: on B (write 1)
	Arg    int64
}

type atomicLinOutput struct {
	OK      bool // false: ErrConditionFailed
	Unknown bool
	N       [2]int64 // read: N[0]; incr: N[0]; atomic: A's and B's
	Err     string
}

type atomicLinState [2]int64

func atomicLinStep(s atomicLinState, in atomicLinInput, out atomicLinOutput) []atomicLinState {
	next, holds := s, true
	switch in.Kind {
	case alRead:
		if out.Unknown || out.N[0] == s[in.Row] {
			return []atomicLinState{s}
		}
		return nil
	case alIncr:
		next[in.Row] += in.DA
	case alAtomic:
		holds = in.Cond < 0 || s[in.Cond] == in.Arg
		next[0] += in.DA
		next[1] += in.DB
	}
	switch {
	case out.Unknown && holds:
		return []atomicLinState{s, next}
	case out.Unknown || !holds && !out.OK:
		return []atomicLinState{s}
	case holds != out.OK:
		return nil
	case in.Kind == alIncr && out.N[0] != next[in.Row]:
		return nil
	case in.Kind == alAtomic && out.N != next:
		return nil
	}
	return []atomicLinState{next}
}

func atomicLinModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{atomicLinState{}} },
		Step: func(state, input, output any) []any {
			return anys(atomicLinStep(state.(atomicLinState), input.(atomicLinInput), output.(atomicLinOutput)))
		},
		Equal: func(a, b any) bool { return a.(atomicLinState) == b.(atomicLinState) },
		Hash: func(state any) uint64 {
			s := state.(atomicLinState)
			h := fnv.New64a()
			fmt.Fprintf(h, "%d,%d", s[0], s[1])
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%+v → %+v", input, output)
		},
		DescribeState: func(state any) string { return fmt.Sprint(state.(atomicLinState)) },
	}
	return nm.ToModel()
}

// testAtomicLinearizable runs the check with 4 workers of 50 operations.
func testAtomicLinearizable(e *env) {
	t := e.create("atomiclin", schemaPR, tk.TableOptions{})
	keys := [2]tk.PrimaryKey{prKey("lin", 0), prKey("lin", 1)}
	e.seedBatch(t, []tk.Row{row(keys[0], col("n", iv(0), 0)), row(keys[1], col("n", iv(0), 0))})
	inc := func(d int64) []tk.Change { return []tk.Change{tk.Increment("n", d)} }
	probe := []tk.BatchWrite{tk.BatchUpdate("", keys[0], inc(0)), tk.BatchUpdate("", keys[1], inc(0))}
	if !e.atomicClaimed(t, probe, []rowView{e.want(keys[0], col("n", iv(0), 0)), e.want(keys[1], col("n", iv(0), 0))}) {
		return
	}
	const workers, perWorker = 4, 50
	var seq atomic.Int64
	var mu sync.Mutex
	var fatal []string
	exec := func(ctx context.Context, in atomicLinInput) (out atomicLinOutput) {
		var err error
		switch in.Kind {
		case alRead:
			var r tk.Row
			var found bool
			r, found, err = t.GetRow(ctx, keys[in.Row])
			if err == nil {
				out.N[0] = math.MinInt64
				if _, n := intColumn(r, "n"); found {
					out.N[0] = n
				}
			}
		case alIncr:
			var res tk.UpdateResult
			res, err = t.UpdateRow(ctx, keys[in.Row], inc(in.DA))
			if err == nil && len(res.Increments) == 1 {
				out.N[0], _ = res.Increments[0].Value.Int()
			}
		case alAtomic:
			ws := []tk.BatchWrite{tk.BatchUpdate("", keys[0], inc(in.DA)), tk.BatchUpdate("", keys[1], inc(in.DB))}
			if in.Cond >= 0 {
				ws[in.Cond].Condition = cond(tk.IfMatch(tk.SingleColumnValue("n", tk.Equal, iv(in.Arg))))
			}
			var res []tk.BatchWriteResult
			res, err = t.AtomicWrite(ctx, ws)
			if err == nil {
				out.N = [2]int64{math.MinInt64, math.MinInt64}
				for i := range 2 {
					if len(res) == 2 && len(res[i].Increments) == 1 {
						out.N[i], _ = res[i].Increments[0].Value.Int()
					}
				}
			}
		}
		var ae *tk.AtomicWriteError
		switch {
		case err == nil:
			out.OK = true
		case in.Kind == alAtomic && errors.Is(err, tk.ErrConditionFailed):
			if !errors.As(err, &ae) || ae.Index != in.Cond {
				mu.Lock()
				fatal = append(fatal, fmt.Sprintf("%+v: %v: not an AtomicWriteError of index %d", in, err, in.Cond))
				mu.Unlock()
			}
		default:
			out.Unknown, out.Err = true, err.Error()
			if !errors.Is(err, tk.ErrThrottled) && !errors.Is(err, tk.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
				mu.Lock()
				fatal = append(fatal, fmt.Sprintf("%+v: %v", in, err))
				mu.Unlock()
			}
		}
		return out
	}
	histories := make([][]porcupine.Operation, workers)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(13, uint64(w)))
			var known [2]int64
			<-gate
			for range perWorker {
				in := atomicLinInput{Kind: atomicLinKind(rng.IntN(3)), Row: rng.IntN(2), DA: 1 + int64(rng.IntN(3)), DB: 1 + int64(rng.IntN(3)), Cond: -1}
				if in.Kind == alAtomic && rng.IntN(2) == 0 {
					in.Cond = rng.IntN(2)
					in.Arg = known[in.Cond]
				}
				ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
				call := seq.Add(1)
				runtime.Gosched()
				out := exec(ctx, in)
				ret := seq.Add(1)
				cancel()
				switch {
				case out.Unknown && in.Kind == alRead:
					continue
				case out.Unknown:
					ret = math.MaxInt64
				case in.Kind == alRead:
					known[in.Row] = out.N[0]
				case in.Kind == alAtomic && out.OK:
					known = out.N
				}
				histories[w] = append(histories[w], porcupine.Operation{ClientId: w, Input: in, Call: call, Output: out, Return: ret})
			}
		})
	}
	close(gate)
	wg.Wait()
	var history []porcupine.Operation
	for _, h := range histories {
		history = append(history, h...)
	}
	for r := range 2 {
		in := atomicLinInput{Kind: alRead, Row: r, Cond: -1}
		call := seq.Add(1)
		out := exec(e.ctx, in)
		history = append(history, porcupine.Operation{ClientId: workers, Input: in, Call: call, Output: out, Return: seq.Add(1)})
	}
	for _, f := range fatal {
		e.t.Errorf("atomic linearizability: %s", f)
	}
	switch porcupine.CheckOperationsTimeout(atomicLinModel(), history, linCheckTimeout) {
	case porcupine.Illegal:
		e.t.Errorf("atomic writes and single-row operations on rows A and B are not linearizable (%d operations): a read saw half of an atomic write, a failed one, or an increment's answer does not fit", len(history))
	case porcupine.Unknown:
		e.t.Logf("atomic linearizability: porcupine timed out after %v; the history is not checked", linCheckTimeout)
	}
}
