package tkycsb

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Target is one thing the matrix drives: a backend through tablekit, or a
// raw native client.
type Target struct {
	Backend string // the store, e.g. "bigtable (bttest)"
	Client  string // "tablekit" or "raw"
	URL     string // the tablekit URL, when Client is "tablekit"
	// Open opens a fresh binding; Close, if set, releases what Open made
	// (an emulator) after the binding's Close.
	Open  func(ctx context.Context) (Binding, error)
	Close func()
}

// Row is one cell of the matrix.
type Row struct {
	Target Target
	Result Result
	Err    error
}

// MatrixConfig is the matrix's shape.
type MatrixConfig struct {
	Records   int64
	Threads   []int
	Workloads []string
	Duration  time.Duration // per cell
	// MaxOps ends a cell after this many operations (0: DefaultMaxOps),
	// if Duration has not ended it before.
	MaxOps int64
	// LoadThreads load the records (default 8).
	LoadThreads int
	// Progress, if set, receives a line per cell as it completes.
	Progress io.Writer
}

// RunMatrix loads every target, then runs each workload with each thread
// count on every target in turn, the targets of one cell back to back so
// that they share the machine's state. Workload D and E insert records,
// so the order is YCSB's (A, B, C, F, D, E when given in that order). A
// target that fails to open or load reports its error in every cell.
func RunMatrix(ctx context.Context, targets []Target, cfg MatrixConfig) []Row {
	dbs := make([]Binding, len(targets))
	errs := make([]error, len(targets))
	for i, t := range targets {
		db, err := t.Open(ctx)
		if err == nil {
			lt := cfg.LoadThreads
			if lt <= 0 {
				lt = 8
			}
			err = Load(ctx, db, Config{Records: cfg.Records, Threads: lt})
			if err != nil {
				db.Close()
				db = nil
			}
		}
		dbs[i], errs[i] = db, err
		if err != nil {
			errs[i] = fmt.Errorf("%s %s: %w", t.Backend, t.Client, err)
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "loaded %s / %s: %v\n", t.Backend, t.Client, err)
		}
	}
	defer func() {
		for i, db := range dbs {
			if db != nil {
				db.Close()
			}
			if targets[i].Close != nil {
				targets[i].Close()
			}
		}
	}()
	var rows []Row
	for _, w := range cfg.Workloads {
		for _, th := range cfg.Threads {
			for i, t := range targets {
				row := Row{Target: t, Err: errs[i]}
				if row.Err == nil {
					row.Result, row.Err = Run(ctx, dbs[i], w, Config{Records: cfg.Records, Threads: th, Duration: cfg.Duration, MaxOps: cfg.MaxOps})
					if row.Err == nil && row.Result.Errors > 0 {
						row.Err = fmt.Errorf("%d failed operations; first: %w", row.Result.Errors, row.Result.FirstErr)
					}
				} else {
					row.Result = Result{Workload: w, Threads: th}
				}
				rows = append(rows, row)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "%s %s %s t=%d: %.0f ops/s %v\n", t.Backend, t.Client, w, th, row.Result.OpsPerSec(), row.Err)
				}
				if ctx.Err() != nil {
					return rows
				}
			}
		}
	}
	return rows
}

var opOrder = []string{"READ", "UPDATE", "INSERT", "SCAN"}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0f", float64(d)/1e6)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3f", float64(d)/1e6)
}

// WriteTable writes rows as a Markdown table: throughput, p50/p99 per
// operation in milliseconds, and for a tablekit row the ratio of the raw
// client's throughput to its own in the same cell (>1 means the adapter is
// slower).
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| workload | threads | backend | client | ops/s | raw/tablekit | READ p50/p99 ms | UPDATE p50/p99 ms | INSERT p50/p99 ms | SCAN p50/p99 ms | note |")
	fmt.Fprintln(w, "|---|---:|---|---|---:|---:|---|---|---|---|---|")
	type cell struct {
		w  string
		th int
		b  string
	}
	raw := map[cell]float64{}
	for _, r := range rows {
		if r.Target.Client == "raw" && r.Err == nil {
			raw[cell{r.Result.Workload, r.Result.Threads, r.Target.Backend}] = r.Result.OpsPerSec()
		}
	}
	for _, r := range rows {
		res := r.Result
		ratio := ""
		if rw, ok := raw[cell{res.Workload, res.Threads, r.Target.Backend}]; ok && r.Target.Client != "raw" && r.Err == nil && res.OpsPerSec() > 0 {
			ratio = fmt.Sprintf("%.2f", rw/res.OpsPerSec())
		}
		var lat []string
		for _, op := range opOrder {
			l, ok := res.PerOp[op]
			if !ok || l.Count == 0 {
				lat = append(lat, "")
				continue
			}
			lat = append(lat, ms(l.P50)+" / "+ms(l.P99))
		}
		note := ""
		if r.Err != nil {
			note = strings.ReplaceAll(r.Err.Error(), "|", "/")
			if len(note) > 120 {
				note = note[:120] + "…"
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %.0f | %s | %s | %s |\n", res.Workload, res.Threads, r.Target.Backend, r.Target.Client,
			res.OpsPerSec(), ratio, strings.Join(lat, " | "), note)
	}
}

// Speedups returns, per workload, the throughput of backend a over that of
// backend b (tablekit clients) at the given thread count.
func Speedups(rows []Row, a, b string, threads int) map[string]float64 {
	get := func(backend, w string) float64 {
		for _, r := range rows {
			if r.Target.Backend == backend && r.Target.Client == "tablekit" && r.Result.Workload == w && r.Result.Threads == threads && r.Err == nil {
				return r.Result.OpsPerSec()
			}
		}
		return 0
	}
	out := map[string]float64{}
	for _, r := range rows {
		w := r.Result.Workload
		if _, done := out[w]; done {
			continue
		}
		if x, y := get(a, w), get(b, w); x > 0 && y > 0 {
			out[w] = x / y
		}
	}
	return out
}
