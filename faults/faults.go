// Package faults injects failures into any tablekit.Backend, for unit tests
// of what a program does when its store throttles, fails, slows down or
// loses answers: wrap the backend, give rules, and run the program's code
// against a Client over the wrapper.
//
//	inj := faults.New(42, faults.Rule{Ops: faults.OpWrites, Prob: 0.2, Err: tablekit.ErrThrottled})
//	db := tablekit.NewClient(inj.Wrap(localengine.New()))
//
// A rule matches calls by operation and table and then acts:
//
//   - Err fails the call with a portable error (ErrThrottled,
//     ErrUnavailable, ErrPermissionDenied, ...) and writes nothing, or with
//     context.DeadlineExceeded as a timed-out call does;
//   - Latency delays the call (a caller's deadline shorter than it times
//     the call out, with the context's error);
//   - Lost applies a write and then fails it with ErrUnavailable: "the
//     write was applied but the answer was lost", which SPEC §12 allows
//     ErrUnavailable to mean;
//   - Rows, on a batch call, fails that fraction of its rows on their own
//     (each row's error in its result) and applies the others.
//
// Decisions are deterministic: whether a rule hits a call is a hash of the
// seed, the rule, the operation, the table, the row key and how many times
// that rule was asked about that row before, not of timing or goroutine
// order. The same program with the same seed meets the same faults, even
// when its batches run in parallel. Rules with Times (a budget of hits)
// are the exception when calls race for the last hits.
//
// The wrapper is one type with every optional method (BatchReader,
// BatchWriter, RangeScanner, AtomicWriter, ChangeFeeder, As); each answers
// tablekit.ErrSkip (or false) where the wrapped backend lacks it, and the wrapper's capabilities are
// the wrapped backend's, so the Client takes the same paths with and
// without it, and faults reach those paths
// too (OpGetRange covers the page reads of Table.Scan); with faults
// disabled (or no rule matching) it is transparent, which package
// conformance checks.
package faults

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/base"
)

// Op is a set of backend operations.
type Op uint32

// The backend's operations.
const (
	OpCreateTable Op = 1 << iota
	OpDescribeTable
	OpListTables
	OpUpdateTable
	OpDeleteTable
	OpGetRow
	OpGetRange
	OpWrite // PutRow, UpdateRow and DeleteRow
	OpBatchGetRow
	OpBatchWriteRow
	OpAtomicWrite // AtomicWrite, decided as one call (by its table and first key)

	// OpReads are the row reads.
	OpReads = OpGetRow | OpGetRange | OpBatchGetRow
	// OpWrites are the row writes.
	OpWrites = OpWrite | OpBatchWriteRow | OpAtomicWrite
	// OpTables are the table operations.
	OpTables = OpCreateTable | OpDescribeTable | OpListTables | OpUpdateTable | OpDeleteTable
	// OpAll is every operation.
	OpAll = OpReads | OpWrites | OpTables
)

var opNames = [...]string{"CreateTable", "DescribeTable", "ListTables", "UpdateTable", "DeleteTable",
	"GetRow", "GetRange", "Write", "BatchGetRow", "BatchWriteRow", "AtomicWrite"}

// String returns the operation's name, or the names of a set joined by "|".
func (o Op) String() string {
	s := ""
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if s == "" {
		return "Op(0)"
	}
	return s
}

// ErrInjected is wrapped by every error this package makes up: errors.Is(err,
// faults.ErrInjected) tells an injected failure from a real one (context
// errors, returned as they are, excepted).
var ErrInjected = errors.New("injected fault")

// Rule is one kind of fault. The zero Rule matches every call and does
// nothing.
type Rule struct {
	// Ops are the operations the rule applies to; 0 means all.
	Ops Op
	// Table restricts the rule to one table; "" means every table (and
	// ListTables, which has none).
	Table string
	// Prob is the probability that a matching call is hit, in (0, 1]; 0
	// means 1 (every call).
	Prob float64
	// Times, if positive, is how many calls (or batch rows) the rule hits
	// at most; after that it is spent.
	Times int

	// Latency is added before a hit call goes on (or fails). The wait
	// ends early, with the context's error, when the caller's context
	// ends.
	Latency time.Duration
	// Err is the error a hit call fails with, without reaching the
	// backend: one of tablekit's portable sentinels (ErrThrottled,
	// ErrUnavailable, ErrPermissionDenied, ...) becomes an *tablekit.Error
	// with that Code; context.DeadlineExceeded and context.Canceled are
	// returned as they are, as a backend returns a timed-out call.
	Err error
	// Lost makes a hit call reach the backend and then, if it succeeded,
	// fail with ErrUnavailable: a write is applied but its answer is
	// lost. On a batch call it loses the answers of the hit rows (with
	// Rows) or of the whole call.
	Lost bool
	// Rows, on a batch call (OpBatchGetRow, OpBatchWriteRow), makes the
	// rule act on each row of the call with this probability, in (0, 1],
	// instead of on the call (Prob is then unused): those rows get Err
	// (and are not applied) or, with Lost, are applied and get
	// ErrUnavailable; the call itself succeeds. Only rows of Table count
	// when Table is set. Times then counts rows, and Latency delays a call
	// in which the rule hit a row. Zero means the rule acts on the whole
	// call. On AtomicWrite, which succeeds or fails as one, a rule always
	// acts on the call.
	Rows float64
}

// Injector holds a set of rules and makes the faults of every backend it
// wraps. It is safe for concurrent use.
type Injector struct {
	seed    uint64
	rules   []Rule
	enabled atomic.Bool
	hits    []atomic.Int64

	mu    sync.Mutex
	asked map[askKey]uint64 // how often a rule was asked about a call or row
}

type askKey struct {
	rule  int
	op    Op
	table string
	key   string
}

// New returns an enabled Injector with the given seed and rules.
func New(seed uint64, rules ...Rule) *Injector {
	inj := &Injector{seed: seed, rules: rules, hits: make([]atomic.Int64, len(rules)), asked: map[askKey]uint64{}}
	inj.enabled.Store(true)
	return inj
}

// Enable turns faults on (the default).
func (inj *Injector) Enable() { inj.enabled.Store(true) }

// Disable turns faults off: every call goes through unchanged.
func (inj *Injector) Disable() { inj.enabled.Store(false) }

// Hits returns how many calls (or batch rows) rule i has hit so far.
func (inj *Injector) Hits(i int) int { return int(inj.hits[i].Load()) }

// TotalHits returns the hits of every rule.
func (inj *Injector) TotalHits() int {
	n := 0
	for i := range inj.hits {
		n += int(inj.hits[i].Load())
	}
	return n
}

// Wrap returns b with faults. Closing the wrapper closes b. The wrapper
// is one type with every optional method of a tablekit.Backend; each
// forwards to b's, or answers tablekit.ErrSkip where b lacks it, so that
// the Client takes the same paths with and without the wrapper (its
// capabilities are b's: it adds none and removes none). Their calls meet
// faults too: BatchGetRow and BatchWriteRow as OpBatchGetRow and
// OpBatchWriteRow, ScanRange (Table.Scan's page reads) as OpGetRange.
func (inj *Injector) Wrap(b tablekit.Backend) tablekit.Backend {
	return &backend{inj: inj, b: b}
}

// hit reports whether rule i hits the call or row (op, table, key), and
// counts the hit.
func (inj *Injector) hit(i int, prob float64, op Op, table, key string) bool {
	r := &inj.rules[i]
	if r.Ops != 0 && r.Ops&op == 0 || r.Table != "" && r.Table != table {
		return false
	}
	if prob > 0 && prob < 1 {
		k := askKey{rule: i, op: op, table: table, key: key}
		inj.mu.Lock()
		n := inj.asked[k]
		inj.asked[k] = n + 1
		inj.mu.Unlock()
		if draw(inj.seed, k, n) >= prob {
			return false
		}
	}
	if r.Times > 0 {
		for {
			h := inj.hits[i].Load()
			if h >= int64(r.Times) {
				return false
			}
			if inj.hits[i].CompareAndSwap(h, h+1) {
				return true
			}
		}
	}
	inj.hits[i].Add(1)
	return true
}

// draw is a uniform number in [0, 1) from the seed, the question and how
// many times it was asked before.
func draw(seed uint64, k askKey, n uint64) float64 {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range [...]uint64{seed, uint64(k.rule), uint64(k.op), n} {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	h.Write([]byte(k.table))
	h.Write([]byte{0})
	h.Write([]byte(k.key))
	// splitmix64's finaliser (base.Mix64) makes every bit of the draw
	// depend on every bit of the question.
	return float64(base.Mix64(h.Sum64())>>11) / (1 << 53)
}

// fault is what the rules decided for one call.
type fault struct {
	latency time.Duration
	err     error // fail before the call
	lost    bool  // fail after the call
}

// decide runs the whole-call rules (those without Rows, or every rule on a
// call that is not a batch) for a call.
func (inj *Injector) decide(op Op, table, key string, batch bool) fault {
	var f fault
	if !inj.enabled.Load() {
		return f
	}
	for i := range inj.rules {
		r := &inj.rules[i]
		if batch && r.Rows > 0 {
			continue
		}
		if !inj.hit(i, r.Prob, op, table, key) {
			continue
		}
		f.latency += r.Latency
		if f.err == nil && r.Err != nil {
			f.err = inj.makeErr(i, r.Err, op)
		}
		f.lost = f.lost || r.Lost
	}
	return f
}

func (inj *Injector) makeErr(i int, code error, op Op) error {
	if errors.Is(code, context.DeadlineExceeded) || errors.Is(code, context.Canceled) {
		return code
	}
	return tablekit.WrapError(code, ErrInjected, "%s: rule %d", op, i)
}

func (inj *Injector) lostErr(op Op) error {
	return tablekit.WrapError(tablekit.ErrUnavailable, ErrInjected, "%s: applied, answer lost", op)
}

// before applies a call's latency and error. (Not driver.Sleep: that one
// reports a retry.)
func (f fault) before(ctx context.Context) error {
	if f.latency > 0 {
		t := time.NewTimer(f.latency)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			// Both may be ready after a long pause of this goroutine,
			// and select then picks either: a deadline that passed
			// during the wait still fails the call, even before the
			// context's own timer has run to set its Err.
			if err := ctx.Err(); err != nil {
				return err
			}
			if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
				return context.DeadlineExceeded
			}
		}
	}
	return f.err
}

// backend is the wrapper: one type whatever the wrapped backend
// implements.
type backend struct {
	inj *Injector
	b   tablekit.Backend
}

// The wrapper has every optional method of a tablekit.Backend.
var (
	_ tablekit.Wrapper        = (*backend)(nil)
	_ tablekit.BatchReader    = (*backend)(nil)
	_ tablekit.BatchWriter    = (*backend)(nil)
	_ tablekit.RangeScanner   = (*backend)(nil)
	_ tablekit.AtomicWriter   = (*backend)(nil)
	_ tablekit.ChangeFeeder   = (*backend)(nil) // feed.go
	_ tablekit.FeedCreator    = (*backend)(nil) // feed.go
	_ tablekit.FeedWaiter     = (*backend)(nil) // feed.go
	_ tablekit.IndexWriter    = (*backend)(nil) // index.go
	_ tablekit.NativeAccessor = (*backend)(nil)
)

// Unwrap returns the wrapped backend.
func (w *backend) Unwrap() tablekit.Backend { return w.b }

// do runs one non-batch call with the faults its rules decide.
func do[T any](ctx context.Context, w *backend, op Op, table, key string, call func() (T, error)) (T, error) {
	f := w.inj.decide(op, table, key, false)
	var zero T
	if err := f.before(ctx); err != nil {
		return zero, err
	}
	v, err := call()
	if err == nil && f.lost {
		return zero, w.inj.lostErr(op)
	}
	return v, err
}

func (w *backend) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	_, err := do(ctx, w, OpCreateTable, meta.Name, "", func() (struct{}, error) {
		return struct{}{}, w.b.CreateTable(ctx, meta)
	})
	return err
}

func (w *backend) DescribeTable(ctx context.Context, table string) (*tablekit.TableMeta, error) {
	return do(ctx, w, OpDescribeTable, table, "", func() (*tablekit.TableMeta, error) { return w.b.DescribeTable(ctx, table) })
}

func (w *backend) ListTables(ctx context.Context) ([]string, error) {
	return do(ctx, w, OpListTables, "", "", func() ([]string, error) { return w.b.ListTables(ctx) })
}

func (w *backend) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	return do(ctx, w, OpUpdateTable, req.Meta.Name, "", func() (*tablekit.TableMeta, error) { return w.b.UpdateTable(ctx, req) })
}

func (w *backend) DeleteTable(ctx context.Context, table string) error {
	_, err := do(ctx, w, OpDeleteTable, table, "", func() (struct{}, error) {
		return struct{}{}, w.b.DeleteTable(ctx, table)
	})
	return err
}

func (w *backend) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	return do(ctx, w, OpGetRow, req.Meta.Name, req.Key.String(), func() (*tablekit.Row, error) { return w.b.GetRow(ctx, req) })
}

func (w *backend) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	return do(ctx, w, OpGetRange, req.Meta.Name, req.Start.String(), func() (*tablekit.GetRangeResponse, error) { return w.b.GetRange(ctx, req) })
}

func (w *backend) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	return do(ctx, w, OpWrite, req.Meta.Name, req.Key.String(), func() (*tablekit.UpdateResult, error) { return w.b.Write(ctx, req) })
}

func (w *backend) Close() error { return w.b.Close() }

// rowFaults decides the per-row rules of a batch call: the error each row
// fails with before the call (nil: it goes ahead) and whether its answer
// is lost.
func (inj *Injector) rowFaults(op Op, n int, row func(i int) (table, key string)) (errs []error, lost []bool, latency time.Duration) {
	if !inj.enabled.Load() {
		return nil, nil, 0
	}
	for ri := range inj.rules {
		r := &inj.rules[ri]
		if r.Rows <= 0 || r.Ops != 0 && r.Ops&op == 0 {
			continue
		}
		hit := false
		for i := range n {
			table, key := row(i)
			if !inj.hit(ri, r.Rows, op, table, key) {
				continue
			}
			hit = true
			if errs == nil {
				errs, lost = make([]error, n), make([]bool, n)
			}
			if r.Err != nil && errs[i] == nil {
				errs[i] = inj.makeErr(ri, r.Err, op)
			}
			lost[i] = lost[i] || r.Lost
		}
		if hit {
			latency += r.Latency
		}
	}
	return errs, lost, latency
}

// batch runs one batch call with its faults: whole-call rules first, then
// the rows some per-row rule fails are left out of the call, and the
// answers of rows whose answer is lost are replaced.
func batch[Req, Res any](ctx context.Context, w *backend, op Op, reqs []Req,
	meta func(Req) (*tablekit.TableMeta, tablekit.PrimaryKey),
	call func(reqs []Req) ([]Res, error), setErr func(*Res, error), failed func(Res) bool) ([]Res, error) {
	// Whole-call rules see the batch's table ("" when it spans several)
	// and its first key, which makes their decisions independent of the
	// order parallel batches run in.
	table, first := "", ""
	if len(reqs) > 0 {
		m, k := meta(reqs[0])
		table, first = m.Name, k.String()
		for _, r := range reqs[1:] {
			if m, _ := meta(r); m.Name != table {
				table = ""
				break
			}
		}
	}
	f := w.inj.decide(op, table, first, true)
	if err := f.before(ctx); err != nil {
		return nil, err
	}
	errs, lost, latency := w.inj.rowFaults(op, len(reqs), func(i int) (string, string) {
		m, k := meta(reqs[i])
		return m.Name, k.String()
	})
	if err := (fault{latency: latency}).before(ctx); err != nil {
		return nil, err
	}
	sub, idx := reqs, []int(nil)
	if errs != nil {
		sub = make([]Req, 0, len(reqs))
		for i, r := range reqs {
			if errs[i] == nil {
				sub = append(sub, r)
				idx = append(idx, i)
			}
		}
	}
	var res []Res
	var err error
	if len(sub) > 0 {
		if res, err = call(sub); err != nil {
			return nil, err
		}
		if len(res) != len(sub) { // the Client reports a wrong answer
			return res, nil
		}
	}
	if f.lost {
		return nil, w.inj.lostErr(op)
	}
	out := res
	if errs != nil {
		out = make([]Res, len(reqs))
		for j, i := range idx {
			out[i] = res[j]
		}
		for i, e := range errs {
			if e != nil {
				setErr(&out[i], e)
			}
		}
	}
	for i := range lost {
		if lost[i] && errs[i] == nil && !failed(out[i]) {
			setErr(&out[i], w.inj.lostErr(op))
		}
	}
	return out, nil
}

// BatchGetRow is the wrapped backend's, with faults; tablekit.ErrSkip
// when it has none.
func (w *backend) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	br, err := inside[tablekit.BatchReader](w)
	if err != nil {
		return nil, err
	}
	return batch(ctx, w, OpBatchGetRow, reqs,
		func(q *tablekit.GetRowRequest) (*tablekit.TableMeta, tablekit.PrimaryKey) { return q.Meta, q.Key },
		func(sub []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
			return br.BatchGetRow(ctx, sub)
		},
		func(res *tablekit.GetRowResponse, err error) { *res = tablekit.GetRowResponse{Err: err} },
		func(res tablekit.GetRowResponse) bool { return res.Err != nil })
}

// BatchWriteRow is the wrapped backend's, with faults; tablekit.ErrSkip
// when it has none.
func (w *backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	bw, err := inside[tablekit.BatchWriter](w)
	if err != nil {
		return nil, err
	}
	return batch(ctx, w, OpBatchWriteRow, reqs,
		func(q *tablekit.WriteRequest) (*tablekit.TableMeta, tablekit.PrimaryKey) { return q.Meta, q.Key },
		func(sub []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
			return bw.BatchWriteRow(ctx, sub)
		},
		func(res *tablekit.WriteResponse, err error) { *res = tablekit.WriteResponse{Err: err} },
		func(res tablekit.WriteResponse) bool { return res.Err != nil })
}

// AtomicWrite is the wrapped backend's, with the faults of OpAtomicWrite,
// decided for the whole call (an atomic write fails as one: per-row rules
// do not apply); tablekit.ErrSkip when it has none. A lost answer comes
// after the writes were applied.
func (w *backend) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	aw, err := inside[tablekit.AtomicWriter](w)
	if err != nil {
		return nil, err
	}
	table, first := "", ""
	if len(reqs) > 0 {
		table, first = reqs[0].Meta.Name, reqs[0].Key.String()
	}
	return do(ctx, w, OpAtomicWrite, table, first, func() ([]tablekit.WriteResponse, error) { return aw.AtomicWrite(ctx, reqs) })
}

// ScanRange is the wrapped backend's, with the faults of OpGetRange: the
// same page read as GetRange, decided as GetRange's would be (by the table
// and the page's start key). A lost answer reads the page and hands fn
// none of its rows. It answers tablekit.ErrSkip when the wrapped backend
// lends no rows.
func (w *backend) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	rs, err := inside[tablekit.RangeScanner](w)
	if err != nil {
		return nil, err
	}
	f := w.inj.decide(OpGetRange, req.Meta.Name, req.Start.String(), false)
	if err := f.before(ctx); err != nil {
		return nil, err
	}
	if !f.lost {
		return rs.ScanRange(ctx, req, fn)
	}
	if _, err := rs.ScanRange(ctx, req, func(tablekit.Row) bool { return true }); err != nil {
		return nil, err
	}
	return nil, w.inj.lostErr(OpGetRange)
}

// inside returns the wrapped backend's optional interface I, or
// tablekit.ErrSkip when it lacks it: every optional method of the wrapper
// forwards through it.
func inside[I any](w *backend) (I, error) {
	i, ok := w.b.(I)
	if !ok {
		return i, tablekit.ErrSkip
	}
	return i, nil
}

// As is the wrapped backend's.
func (w *backend) As(target any) bool {
	a, ok := w.b.(tablekit.NativeAccessor)
	return ok && a.As(target)
}
