package tkycsb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/client"
	"github.com/pingcap/go-ycsb/pkg/measurement"
	"github.com/pingcap/go-ycsb/pkg/prop"
	_ "github.com/pingcap/go-ycsb/pkg/workload" // registers "core"
	"github.com/pingcap/go-ycsb/pkg/ycsb"
)

// Table is the name of the table every run uses.
const Table = "usertable"

// Workloads are YCSB's core workloads A–F as go-ycsb properties: zipfian
// requests (constant 0.99; D reads the latest inserts, zipfian over
// recency, as YCSB defines it), records of 10 fields × 100 bytes, reads of
// every field, scans of 1–100 rows, uniform.
var Workloads = map[string]map[string]string{
	"A": {"readproportion": "0.5", "updateproportion": "0.5"},
	"B": {"readproportion": "0.95", "updateproportion": "0.05"},
	"C": {"readproportion": "1"},
	"D": {"readproportion": "0.95", "insertproportion": "0.05", "requestdistribution": "latest"},
	"E": {"scanproportion": "0.95", "insertproportion": "0.05"},
	"F": {"readproportion": "0.5", "readmodifywriteproportion": "0.5"},
}

// WorkloadNames are the keys of Workloads in order.
var WorkloadNames = []string{"A", "B", "C", "D", "E", "F"}

// Binding is what Run drives: a go-ycsb DB that can create its table.
type Binding interface {
	ycsb.DB
	// Setup creates table unless it exists.
	Setup(ctx context.Context, table string) error
}

// DefaultMaxOps is the operation count of a run whose Config.MaxOps is 0.
const DefaultMaxOps = 1_000_000

// Config is one run's shape.
type Config struct {
	Records  int64         // records loaded (and the key space of the run)
	Threads  int           // client goroutines
	Duration time.Duration // how long the run lasts
	MaxOps   int64         // stop after this many operations (0: no limit)
}

// props returns the go-ycsb properties of workload w under cfg.
func props(w string, cfg Config, load bool) (*properties.Properties, error) {
	wl, ok := Workloads[w]
	if !ok {
		return nil, fmt.Errorf("tkycsb: unknown workload %q", w)
	}
	p := properties.NewProperties()
	set := func(k, v string) { p.Set(k, v) }
	for k, v := range map[string]string{
		prop.Workload: "core", prop.TableName: Table,
		prop.RecordCount: strconv.FormatInt(cfg.Records, 10),
		prop.FieldCount:  "10", prop.FieldLength: "100",
		prop.ReadAllFields: "true", prop.WriteAllFields: "false",
		prop.ReadProportion: "0", prop.UpdateProportion: "0", prop.InsertProportion: "0",
		prop.ScanProportion: "0", prop.ReadModifyWriteProportion: "0",
		prop.RequestDistribution: "zipfian", // go-ycsb's constant is 0.99
		prop.MaxScanLength:       "100", prop.ScanLengthDistribution: "uniform",
		prop.ThreadCount: strconv.Itoa(max(cfg.Threads, 1)),
		prop.LogInterval: "3600", prop.Silence: "true",
	} {
		set(k, v)
	}
	for k, v := range wl {
		set(k, v)
	}
	if load {
		set(prop.DoTransactions, "false")
		set(prop.Command, "load")
	} else {
		// operationcount also sizes the key range of D and E (which
		// expect 2 × insertproportion × operationcount new keys), so it
		// is a plausible bound, not infinity; Duration ends most runs.
		ops := cfg.MaxOps
		if ops <= 0 {
			ops = DefaultMaxOps
		}
		set(prop.OperationCount, strconv.FormatInt(max(ops, int64(cfg.Threads)), 10))
		set(prop.DoTransactions, "true")
		set(prop.Command, "run")
	}
	return p, nil
}

// Latency is one operation's figures in a run.
type Latency struct {
	Count    int64
	Errors   int64
	P50, P99 time.Duration
}

// Result is one run's figures.
type Result struct {
	Workload string
	Threads  int
	Ops      int64 // YCSB operations (transactions) completed
	Elapsed  time.Duration
	Errors   int64
	Misses   int64 // reads of a key that does not exist (not errors)
	FirstErr error
	PerOp    map[string]Latency // by binding call: READ, SCAN, UPDATE, INSERT, DELETE
}

// OpsPerSec is the run's throughput in YCSB operations per second.
func (r Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// runMu serialises runs: go-ycsb's measurement package is global.
var runMu sync.Mutex

// Load creates the table and inserts cfg.Records records with cfg.Threads
// goroutines. It fails on the first insert error.
func Load(ctx context.Context, db Binding, cfg Config) error {
	if err := db.Setup(ctx, Table); err != nil {
		return err
	}
	res, err := run(ctx, db, "A", cfg, true)
	if err != nil {
		return err
	}
	if res.Errors > 0 {
		return fmt.Errorf("tkycsb: load: %d of %d inserts failed; first: %w", res.Errors, cfg.Records, res.FirstErr)
	}
	return nil
}

// Run runs workload w (a key of Workloads) against db, whose table Load
// filled with cfg.Records records, for cfg.Duration.
func Run(ctx context.Context, db Binding, w string, cfg Config) (Result, error) {
	return run(ctx, db, w, cfg, false)
}

func run(ctx context.Context, db Binding, w string, cfg Config, load bool) (Result, error) {
	runMu.Lock()
	defer runMu.Unlock()
	p, err := props(w, cfg, load)
	if err != nil {
		return Result{}, err
	}
	measurement.InitMeasure(p)
	wc := ycsb.GetWorkloadCreator("core")
	wl, err := wc.Create(p)
	if err != nil {
		return Result{}, err
	}
	defer wl.Close()
	threads := max(cfg.Threads, 1)
	m := &measured{db: db, threads: make([]threadRec, threads)}
	counted := &countingWorkload{Workload: wl, m: m}
	rctx := ctx
	if !load && cfg.Duration > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	start := time.Now()
	client.NewClient(p, counted, m).Run(rctx)
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return m.result(w, threads, elapsed), nil
}

// countingWorkload counts the transactions and inserts a run completes.
type countingWorkload struct {
	ycsb.Workload
	m *measured
}

func (c *countingWorkload) DoTransaction(ctx context.Context, db ycsb.DB) error {
	err := c.Workload.DoTransaction(ctx, db)
	c.m.thread(ctx).ops++
	return err
}

func (c *countingWorkload) DoInsert(ctx context.Context, db ycsb.DB) error {
	err := c.Workload.DoInsert(ctx, db)
	c.m.thread(ctx).ops++
	return err
}

// threadRec is one goroutine's measurements (no locking: one writer).
type threadRec struct {
	ops    int64
	misses int64
	lat    map[string][]time.Duration
	errs   map[string]int64
	first  error
	_      [64]byte // keep neighbours off one cache line
}

// measured wraps a binding and times each call into its thread's record.
// Calls run without the run's cancellation: the end of a run stops the
// workers between operations, never in the middle of one (a cut request
// is not a measurement, and dynalite does not survive many of them).
type measured struct {
	db      Binding
	threads []threadRec
}

type threadKey struct{}

func (m *measured) thread(ctx context.Context) *threadRec {
	if i, ok := ctx.Value(threadKey{}).(int); ok {
		return &m.threads[i]
	}
	panic("tkycsb: a binding call outside a worker thread")
}

func (m *measured) record(ctx context.Context, op string, start time.Time, err error) {
	d := time.Since(start)
	t := m.thread(ctx)
	if errors.Is(err, ErrNotFound) {
		// A completed read of a missing key: go-ycsb's key choosers
		// include the key range's upper bound, one past the last record
		// loaded (as YCSB's do), so a few reads miss. Counted apart.
		t.misses++
		err = nil
	}
	if err != nil {
		if t.errs == nil {
			t.errs = map[string]int64{}
		}
		t.errs[op]++
		if t.first == nil {
			t.first = fmt.Errorf("%s: %w", op, err)
		}
		return
	}
	if t.lat == nil {
		t.lat = map[string][]time.Duration{}
	}
	t.lat[op] = append(t.lat[op], d)
}

func (m *measured) result(w string, threads int, elapsed time.Duration) Result {
	r := Result{Workload: w, Threads: threads, Elapsed: elapsed, PerOp: map[string]Latency{}}
	all := map[string][]time.Duration{}
	errs := map[string]int64{}
	for i := range m.threads {
		t := &m.threads[i]
		r.Ops += t.ops
		r.Misses += t.misses
		for op, l := range t.lat {
			all[op] = append(all[op], l...)
		}
		for op, n := range t.errs {
			errs[op] += n
			r.Errors += n
		}
		if r.FirstErr == nil {
			r.FirstErr = t.first
		}
	}
	for op, l := range all {
		slices.Sort(l)
		r.PerOp[op] = Latency{Count: int64(len(l)), Errors: errs[op], P50: pct(l, 50), P99: pct(l, 99)}
	}
	for op, n := range errs {
		if _, ok := r.PerOp[op]; !ok {
			r.PerOp[op] = Latency{Errors: n}
		}
	}
	return r
}

// pct returns the p-th percentile of sorted l (nearest rank).
func pct(l []time.Duration, p int) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := (len(l)*p + 99) / 100
	return l[min(max(i-1, 0), len(l)-1)]
}

func (m *measured) Close() error { return nil }

func (m *measured) InitThread(ctx context.Context, id, n int) context.Context {
	return m.db.InitThread(context.WithValue(ctx, threadKey{}, id), id, n)
}

func (m *measured) CleanupThread(ctx context.Context) { m.db.CleanupThread(ctx) }

func (m *measured) Read(ctx context.Context, table, key string, fields []string) (map[string][]byte, error) {
	start := time.Now()
	v, err := m.db.Read(context.WithoutCancel(ctx), table, key, fields)
	m.record(ctx, "READ", start, err)
	return v, err
}

func (m *measured) Scan(ctx context.Context, table, key string, count int, fields []string) ([]map[string][]byte, error) {
	start := time.Now()
	v, err := m.db.Scan(context.WithoutCancel(ctx), table, key, count, fields)
	m.record(ctx, "SCAN", start, err)
	return v, err
}

func (m *measured) Update(ctx context.Context, table, key string, values map[string][]byte) error {
	start := time.Now()
	err := m.db.Update(context.WithoutCancel(ctx), table, key, values)
	m.record(ctx, "UPDATE", start, err)
	return err
}

func (m *measured) Insert(ctx context.Context, table, key string, values map[string][]byte) error {
	start := time.Now()
	err := m.db.Insert(context.WithoutCancel(ctx), table, key, values)
	m.record(ctx, "INSERT", start, err)
	return err
}

func (m *measured) Delete(ctx context.Context, table, key string) error {
	start := time.Now()
	err := m.db.Delete(context.WithoutCancel(ctx), table, key)
	m.record(ctx, "DELETE", start, err)
	return err
}
