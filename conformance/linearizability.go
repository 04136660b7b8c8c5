package conformance

// The linearizability check (SPEC §11): several clients race conditional
// writes, increments, reads and deletes on a few rows of one table; every
// operation's invocation, response and answer is recorded, and
// github.com/anishathalye/porcupine decides whether some sequential order
// consistent with real time explains every answer.
//
// Rows and what the model sees. Each row's state is just what the
// operations observe: the Integer column "v" (a version counter moved by
// compare-and-set) and the Integer column "n" (a counter moved by
// increments), each present or absent; the row exists iff one of them is
// present (no key-only rows are written). Rows "stable0" and "stable1" are
// never deleted or blindly overwritten, so their counters only grow and the
// final value must equal the sum of the acknowledged increments (no lost
// update). Row "churn" also sees unconditional PutRow and DeleteRow, which
// reset it.
//
// Time. The clock is a ManualClock that does not move during the run, so
// every write is at the same version: a later write to a column replaces
// the cell an earlier one wrote (SPEC §5: writing an existing (column,
// version) replaces its value). In linearization order that is exactly "the
// last write wins", which is what the model does. A clock that moved between
// operations would not be safe: each request takes its Now when the client
// builds it, so a write linearized later could carry an older version and
// lose to an earlier one; the model would then have to track versions, and
// answers would depend on client-side timing rather than on the backend.
//
// Outcomes. A write that fails with ErrConditionFailed did nothing. A write
// that fails otherwise (a timeout, ErrUnavailable) may or may not have
// happened: it is recorded as pending forever and the model lets it take
// effect or not (porcupine's NondeterministicModel). Errors that are not
// transient fail the check.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tablekit/tablekit"
)

// LinearizabilityOptions configure [RunLinearizabilityWith]; zero fields
// take the defaults.
type LinearizabilityOptions struct {
	// Workers is how many goroutines run operations at once (default 6). Each
	// has at most one operation in flight, so a row never has more than
	// Workers; porcupine's search stays fast up to about 12.
	Workers int
	// OpsPerWorker is how many operations each worker runs (default 100;
	// spread over three rows that is about 200 per row).
	OpsPerWorker int
	// Seed chooses the operations (the interleaving is the scheduler's).
	Seed int64
}

const (
	defaultLinWorkers = 6
	defaultLinOps     = 100
	defaultLinSeed    = 11
	linCheckTimeout   = 30 * time.Second
)

// RunLinearizability checks that single-row operations are linearizable and
// that no increment is lost, under concurrent conditional writes,
// increments, reads and deletes through one client. On failure it writes
// porcupine's visualization (an HTML file) and the history to t.ArtifactDir
// and logs their paths.
func RunLinearizability(t *testing.T, h Harness) {
	t.Helper()
	RunLinearizabilityWith(t, h, LinearizabilityOptions{})
}

// RunLinearizabilityWith is [RunLinearizability] with options.
func RunLinearizabilityWith(t *testing.T, h Harness, o LinearizabilityOptions) {
	t.Helper()
	if err := runLinearizability(t, h, o); err != nil {
		t.Fatal(err)
	}
}

// The rows of the check: linStable of them keep their counters.
var linRows = []string{"stable0", "stable1", "churn"}

const linStable = 2

type linKind uint8

const (
	linRead           linKind = iota // GetRow
	linIncr                          // UpdateRow Increment(n, Delta) -> new n
	linCAS                           // UpdateRow Put(v, Arg+1) if v == Arg
	linCASIncr                       // UpdateRow Put(v, Arg+1), Increment(n, Delta) if v == Arg -> new n
	linCreate                        // PutRow v=Arg if the row does not exist
	linIncrIfExists                  // UpdateRow Increment(n, Delta) if the row exists -> new n
	linPut                           // PutRow v=Arg (the row loses n); churn row only
	linDelete                        // DeleteRow; churn row only
	linDeleteIfExists                // DeleteRow if the row exists; churn row only
)

var linKindNames = [...]string{"read", "incr", "cas", "cas+incr", "create", "incr-if-exists", "put", "delete", "delete-if-exists"}

func (k linKind) String() string { return linKindNames[k] }

// linInput is a porcupine operation's input.
type linInput struct {
	Row   int
	Kind  linKind
	Arg   int64
	Delta int64
}

// linOutput is a porcupine operation's output.
type linOutput struct {
	OK      bool // the write happened (false: ErrConditionFailed)
	Unknown bool // the write may or may not have happened
	Found   bool // read: the row exists
	HasV    bool
	V       int64
	HasN    bool
	N       int64 // read, or the new counter of an increment
	Err     string
}

// linState is one row's state as the operations observe it.
type linState struct {
	HasV bool
	V    int64
	HasN bool
	N    int64
}

func (s linState) exists() bool { return s.HasV || s.HasN }

func (s linState) String() string {
	if !s.exists() {
		return "absent"
	}
	var parts []string
	if s.HasV {
		parts = append(parts, "v="+strconv.FormatInt(s.V, 10))
	}
	if s.HasN {
		parts = append(parts, "n="+strconv.FormatInt(s.N, 10))
	}
	return strings.Join(parts, " ")
}

// linStep is the sequential specification: the states an operation with
// this answer can lead to from s (none: the answer is impossible).
func linStep(s linState, in linInput, out linOutput) []linState {
	base := int64(0)
	if s.HasN {
		base = s.N
	}
	withN := s
	withN.HasN, withN.N = true, base+in.Delta
	var holds bool
	var next linState
	switch in.Kind {
	case linRead:
		if out.Unknown {
			return []linState{s}
		}
		got := linState{HasV: out.HasV, V: out.V, HasN: out.HasN, N: out.N}
		if out.Found != s.exists() || (out.Found && got != s) {
			return nil
		}
		return []linState{s}
	case linIncr:
		holds, next = true, withN
	case linCAS:
		holds = s.HasV && s.V == in.Arg
		next = s
		next.V = in.Arg + 1
	case linCASIncr:
		holds = s.HasV && s.V == in.Arg
		next = withN
		next.V = in.Arg + 1
	case linCreate:
		holds, next = !s.exists(), linState{HasV: true, V: in.Arg}
	case linIncrIfExists:
		holds, next = s.exists(), withN
	case linPut:
		holds, next = true, linState{HasV: true, V: in.Arg}
	case linDelete:
		holds, next = true, linState{}
	case linDeleteIfExists:
		holds, next = s.exists(), linState{}
	}
	switch {
	case out.Unknown && holds:
		return []linState{s, next}
	case out.Unknown || (!holds && !out.OK):
		return []linState{s}
	case holds != out.OK:
		return nil
	case returnsCounter(in.Kind) && out.N != next.N:
		return nil
	}
	return []linState{next}
}

func returnsCounter(k linKind) bool {
	return k == linIncr || k == linCASIncr || k == linIncrIfExists
}

func describeLinOp(in linInput, out linOutput) string {
	var s string
	switch in.Kind {
	case linRead:
		s = "read"
	case linIncr, linIncrIfExists:
		s = fmt.Sprintf("%v n+=%d", in.Kind, in.Delta)
	case linCAS:
		s = fmt.Sprintf("cas v %d→%d", in.Arg, in.Arg+1)
	case linCASIncr:
		s = fmt.Sprintf("cas v %d→%d, n+=%d", in.Arg, in.Arg+1, in.Delta)
	case linCreate, linPut:
		s = fmt.Sprintf("%v v=%d", in.Kind, in.Arg)
	default:
		s = in.Kind.String()
	}
	s = linRows[in.Row] + ": " + s + " → "
	switch {
	case out.Unknown:
		return s + "unknown (" + out.Err + ")"
	case in.Kind == linRead && !out.Found:
		return s + "absent"
	case in.Kind == linRead:
		return s + linState{HasV: out.HasV, V: out.V, HasN: out.HasN, N: out.N}.String()
	case !out.OK:
		return s + "condition failed"
	case returnsCounter(in.Kind):
		return s + "n=" + strconv.FormatInt(out.N, 10)
	}
	return s + "ok"
}

func linModel() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byRow := make([][]porcupine.Operation, len(linRows))
			for _, op := range history {
				r := op.Input.(linInput).Row
				byRow[r] = append(byRow[r], op)
			}
			var out [][]porcupine.Operation
			for _, p := range byRow {
				if len(p) > 0 {
					out = append(out, p)
				}
			}
			return out
		},
		Init: func() []any { return []any{linState{}} },
		Step: func(state, input, output any) []any {
			return anys(linStep(state.(linState), input.(linInput), output.(linOutput)))
		},
		Equal: func(a, b any) bool { return a.(linState) == b.(linState) },
		Hash: func(state any) uint64 {
			s := state.(linState)
			h := fnv.New64a()
			fmt.Fprintf(h, "%t%d%t%d", s.HasV, s.V, s.HasN, s.N)
			return h.Sum64()
		},
		DescribeOperation: func(input, output any) string {
			return describeLinOp(input.(linInput), output.(linOutput))
		},
		DescribeState: func(state any) string { return state.(linState).String() },
	}
	return nm.ToModel()
}

// linRun is one run of the check.
type linRun struct {
	tbl   *tablekit.Table
	seq   atomic.Int64 // logical time: call and return stamps in real-time order
	mu    sync.Mutex
	fatal []string // non-transient errors
	trans int      // transient errors
}

func (l *linRun) key(row int) tablekit.PrimaryKey {
	return tablekit.Key("k", tablekit.String(linRows[row]))
}

// exec runs one operation and returns its answer.
func (l *linRun) exec(ctx context.Context, in linInput) linOutput {
	var out linOutput
	key := l.key(in.Row)
	casIf := tablekit.IfMatch(tablekit.ColumnFilter{Column: "v", Op: tablekit.Equal, Value: tablekit.Integer(in.Arg), FilterIfMissing: true})
	var err error
	var res tablekit.UpdateResult
	switch in.Kind {
	case linRead:
		var row tablekit.Row
		row, out.Found, err = l.tbl.GetRow(ctx, key)
		if err == nil {
			out.HasV, out.V = intColumn(row, "v")
			out.HasN, out.N = intColumn(row, "n")
		}
	case linIncr:
		res, err = l.tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", in.Delta)})
	case linCAS:
		res, err = l.tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("v", tablekit.Integer(in.Arg+1))}, casIf)
	case linCASIncr:
		res, err = l.tbl.UpdateRow(ctx, key, []tablekit.Change{
			tablekit.Put("v", tablekit.Integer(in.Arg+1)), tablekit.Increment("n", in.Delta)}, casIf)
	case linCreate:
		err = l.tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(in.Arg)}}, tablekit.ExpectNotExist)
	case linIncrIfExists:
		res, err = l.tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", in.Delta)}, tablekit.ExpectExist)
	case linPut:
		err = l.tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(in.Arg)}})
	case linDelete:
		err = l.tbl.DeleteRow(ctx, key)
	case linDeleteIfExists:
		err = l.tbl.DeleteRow(ctx, key, tablekit.ExpectExist)
	}
	switch {
	case err == nil:
		out.OK = true
		if returnsCounter(in.Kind) {
			out.N = math.MinInt64 // impossible unless the backend reports n
			if len(res.Increments) == 1 && res.Increments[0].Name == "n" {
				if n, ok := res.Increments[0].Value.Int(); ok {
					out.N = n
				}
			}
		}
	case errors.Is(err, tablekit.ErrConditionFailed) && in.Kind != linRead:
		out.OK = false
	default:
		out.Unknown, out.Err = true, err.Error()
		transient := errors.Is(err, tablekit.ErrThrottled) || errors.Is(err, tablekit.ErrUnavailable) ||
			errors.Is(err, context.DeadlineExceeded)
		l.mu.Lock()
		if transient {
			l.trans++
		} else {
			l.fatal = append(l.fatal, fmt.Sprintf("%v: %v", describeLinOp(in, linOutput{OK: true}), err))
		}
		l.mu.Unlock()
	}
	return out
}

// intColumn returns the latest value of an Integer column; a value of
// another type reads as MinInt64, which no model state holds.
func intColumn(r tablekit.Row, name string) (bool, int64) {
	v, ok := r.Get(name)
	if !ok {
		return false, 0
	}
	if i, ok := v.Int(); ok {
		return true, i
	}
	return true, math.MinInt64
}

// genLinInput picks a worker's next operation. known[r] is the value of v
// the worker last saw or wrote on row r, so that its CAS usually has a
// chance.
func genLinInput(rng *rand.Rand, known []int64, worker int) linInput {
	in := linInput{Row: rng.IntN(len(linRows)), Delta: 1 + int64(rng.IntN(3))}
	kinds := []linKind{linRead, linRead, linRead, linIncr, linIncr, linIncr, linCAS, linCAS, linCAS, linCASIncr, linCreate, linIncrIfExists}
	if in.Row >= linStable {
		kinds = append(kinds, linPut, linDelete, linDelete, linDeleteIfExists)
	}
	in.Kind = kinds[rng.IntN(len(kinds))]
	switch in.Kind {
	case linCAS, linCASIncr:
		in.Arg = known[in.Row]
	case linCreate, linPut:
		// Distinct per worker and small, so that CAS chains meet.
		in.Arg = int64(worker*1000 + rng.IntN(3))
	}
	return in
}

// linEpoch is the fixed time of the run.
var linEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func runLinearizability(t testing.TB, h Harness, o LinearizabilityOptions) error {
	t.Helper()
	if o.Workers <= 0 {
		o.Workers = defaultLinWorkers
	}
	if o.OpsPerWorker <= 0 {
		o.OpsPerWorker = defaultLinOps
	}
	if o.Seed == 0 {
		o.Seed = defaultLinSeed
	}
	ctx := t.Context()
	clock := tablekit.NewManualClock(linEpoch) // never moves: see the top of the file
	b, err := h.NewBackend(ctx, t, clock)
	if err != nil {
		return fmt.Errorf("linearizability: harness: NewBackend: %w", err)
	}
	client := tablekit.NewClient(b, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(0))
	defer client.Close()
	name := "lin_" + strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.FormatInt(diffTableSeq.Add(1), 36)
	if err := client.CreateTable(ctx, tablekit.TableMeta{
		Name: name, Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}},
	}); err != nil {
		return fmt.Errorf("linearizability: CreateTable: %w", err)
	}
	defer func() {
		if err := client.DeleteTable(context.WithoutCancel(ctx), name); err != nil {
			t.Logf("linearizability: cleanup: DeleteTable %s: %v", name, err)
		}
	}()
	l := &linRun{tbl: client.Table(name)}

	// Run the workers; each keeps its own history.
	start := time.Now()
	histories := make([][]porcupine.Operation, o.Workers)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for w := range o.Workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(o.Seed), uint64(w)))
			known := make([]int64, len(linRows))
			<-gate
			for range o.OpsPerWorker {
				if ctx.Err() != nil {
					return
				}
				in := genLinInput(rng, known, w)
				opCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				call := l.seq.Add(1)
				// Let another worker start: on a backend that answers in
				// microseconds a worker would otherwise finish a burst
				// of operations alone and the history would be sequential.
				runtime.Gosched()
				out := l.exec(opCtx, in)
				ret := l.seq.Add(1)
				cancel()
				switch {
				case out.Unknown && in.Kind == linRead:
					continue // says nothing
				case out.Unknown:
					ret = math.MaxInt64 // may take effect at any time after call
				case in.Kind == linRead && out.HasV:
					known[in.Row] = out.V
				case (in.Kind == linCAS || in.Kind == linCASIncr) && out.OK:
					known[in.Row] = in.Arg + 1
				case (in.Kind == linCreate || in.Kind == linPut) && out.OK:
					known[in.Row] = in.Arg
				}
				histories[w] = append(histories[w], porcupine.Operation{
					ClientId: w, Input: in, Call: call, Output: out, Return: ret,
				})
			}
		})
	}
	close(gate)
	wg.Wait()
	elapsed := time.Since(start)
	var history []porcupine.Operation
	for _, hs := range histories {
		history = append(history, hs...)
	}

	// Final reads, after everything: part of the history, and the counters.
	final := make([]linOutput, len(linRows))
	for r := range linRows {
		in := linInput{Row: r, Kind: linRead}
		call := l.seq.Add(1)
		final[r] = l.exec(ctx, in)
		ret := l.seq.Add(1)
		if !final[r].Unknown {
			history = append(history, porcupine.Operation{ClientId: o.Workers, Input: in, Call: call, Output: final[r], Return: ret})
		}
	}

	var problems []string
	if len(l.fatal) > 0 {
		problems = append(problems, fmt.Sprintf("%d operations failed with errors that are neither ErrConditionFailed nor transient; the first: %s",
			len(l.fatal), l.fatal[0]))
	}

	// No lost increments on the rows that are never reset.
	var counters []string
	for r := range linStable {
		var acked, maybe int64
		for _, op := range history {
			in, out := op.Input.(linInput), op.Output.(linOutput)
			if in.Row != r || !returnsCounter(in.Kind) {
				continue
			}
			switch {
			case out.Unknown:
				maybe += in.Delta
			case out.OK:
				acked += in.Delta
			}
		}
		f := final[r]
		switch {
		case f.Unknown:
			problems = append(problems, fmt.Sprintf("row %s: the final read failed: %s", linRows[r], f.Err))
		case !f.HasN && acked > 0, f.N < acked || f.N > acked+maybe:
			problems = append(problems, fmt.Sprintf("row %s: lost update: the counter reads %s after %d acknowledged increments summing to %d (%d more in doubt)",
				linRows[r], linState{HasN: f.HasN, N: f.N}, countAcked(history, r), acked, maybe))
		}
		counters = append(counters, fmt.Sprintf("%s n=%d", linRows[r], f.N))
	}

	// Linearizability, row by row (porcupine would partition the same way;
	// checking each row alone names the row that fails).
	model := linModel()
	checkStart := time.Now()
	illegal := false
	var concurrency []string
	for r := range linRows {
		var ops []porcupine.Operation
		for _, op := range history {
			if op.Input.(linInput).Row == r {
				ops = append(ops, op)
			}
		}
		maxIn, overlapped := linConcurrency(ops)
		concurrency = append(concurrency, fmt.Sprintf("%s %d ops, ≤%d in flight, %d%% overlapped", linRows[r], len(ops), maxIn, 100*overlapped/max(1, len(ops))))
		switch porcupine.CheckOperationsTimeout(model, ops, linCheckTimeout) {
		case porcupine.Illegal:
			illegal = true
			problems = append(problems, fmt.Sprintf("row %s: the %d operations on it are not linearizable\n%s", linRows[r], len(ops), linWitness(model, ops)))
		case porcupine.Unknown:
			problems = append(problems, fmt.Sprintf("row %s: porcupine could not decide within %v (%d operations, %d workers); lower OpsPerWorker or Workers",
				linRows[r], linCheckTimeout, len(ops), o.Workers))
		}
	}
	checked := time.Since(checkStart)
	t.Logf("linearizability: %d operations by %d workers in %v, checked in %v (%s); final %s; %d transient errors",
		len(history), o.Workers, elapsed.Round(time.Millisecond), checked.Round(time.Millisecond),
		strings.Join(concurrency, "; "), strings.Join(counters, ", "), l.trans)
	// An operation that failed transiently is "in doubt" and constrains
	// nothing; a backend failing most of them would pass vacuously.
	if l.trans*10 > len(history) {
		problems = append(problems, fmt.Sprintf("%d of %d operations failed transiently (more than 10%%): the history proves too little", l.trans, len(history)))
	}
	if len(problems) == 0 {
		return nil
	}
	msg := "linearizability: " + strings.Join(problems, "\n  ")
	if dir := t.ArtifactDir(); dir != "" {
		if illegal {
			_, info := porcupine.CheckOperationsVerbose(model, history, linCheckTimeout)
			path := filepath.Join(dir, "linearizability.html")
			if err := porcupine.VisualizePath(model, info, path); err == nil {
				msg += "\n  visualization: " + path + " (kept with go test -artifacts)"
			} else {
				msg += "\n  visualization failed: " + err.Error()
			}
		}
		path := filepath.Join(dir, "linearizability-history.txt")
		if err := os.WriteFile(path, []byte(formatLinHistory(history)), 0o644); err == nil {
			msg += "\n  history: " + path
		}
	}
	return errors.New(msg)
}

func countAcked(history []porcupine.Operation, row int) int {
	n := 0
	for _, op := range history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		if in.Row == row && returnsCounter(in.Kind) && out.OK && !out.Unknown {
			n++
		}
	}
	return n
}

// formatLinHistory lists the history by call time, one operation a line.
func formatLinHistory(history []porcupine.Operation) string {
	ops := append([]porcupine.Operation(nil), history...)
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	for _, op := range ops {
		b.WriteString(formatLinOp(op) + "\n")
	}
	return b.String()
}

// linConcurrency returns the most operations in flight at once and how many
// operations overlap another in time.
func linConcurrency(ops []porcupine.Operation) (maxInFlight, overlapped int) {
	type event struct {
		at    int64
		delta int
	}
	events := make([]event, 0, 2*len(ops))
	for i, a := range ops {
		events = append(events, event{a.Call, 1}, event{a.Return, -1})
		for j, b := range ops {
			if i != j && a.Call < b.Return && b.Call < a.Return {
				overlapped++
				break
			}
		}
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	n := 0
	for _, e := range events {
		n += e.delta
		maxInFlight = max(maxInFlight, n)
	}
	return maxInFlight, overlapped
}

// linWitness describes where the longest linearization porcupine found for
// one row's operations gets stuck.
func linWitness(model porcupine.Model, ops []porcupine.Operation) string {
	_, info := porcupine.CheckOperationsVerbose(model, ops, linCheckTimeout)
	parts := info.PartialLinearizationsOperations()
	if len(parts) == 0 {
		return ""
	}
	var best []porcupine.Operation
	for _, p := range parts[0] {
		if len(p) > len(best) {
			best = p
		}
	}
	states := []linState{{}}
	placed := map[int64]bool{}
	for _, op := range best {
		var next []linState
		for _, s := range states {
			for _, n := range linStep(s, op.Input.(linInput), op.Output.(linOutput)) {
				if !slices.Contains(next, n) {
					next = append(next, n)
				}
			}
		}
		states = next
		placed[op.Call] = true
	}
	var rest []porcupine.Operation
	for _, op := range ops {
		if !placed[op.Call] {
			rest = append(rest, op)
		}
	}
	slices.SortFunc(rest, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = s.String()
	}
	fmt.Fprintf(&b, "    the longest linearization found places %d of %d operations and ends in state %s after\n",
		len(best), len(ops), strings.Join(names, " or "))
	for _, op := range best[max(0, len(best)-3):] {
		b.WriteString("      " + formatLinOp(op) + "\n")
	}
	b.WriteString("    and no remaining operation can come next; the earliest of them:\n")
	for _, op := range rest[:min(3, len(rest))] {
		b.WriteString("      " + formatLinOp(op) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func formatLinOp(op porcupine.Operation) string {
	ret := strconv.FormatInt(op.Return, 10)
	if op.Return == math.MaxInt64 {
		ret = "∞"
	}
	return fmt.Sprintf("[%d, %s] client %d: %s", op.Call, ret, op.ClientId,
		describeLinOp(op.Input.(linInput), op.Output.(linOutput)))
}

// anys boxes a model step's next states for porcupine.
func anys[S any](states []S) []any {
	out := make([]any, len(states))
	for i, s := range states {
		out[i] = s
	}
	return out
}
