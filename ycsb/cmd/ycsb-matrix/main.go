// Command ycsb-matrix runs YCSB workloads A–F on every tablekit backend
// and on the raw native clients, against local emulators, and prints a
// Markdown table of throughput and p50/p99 latency per operation.
//
// Usage (from the ycsb directory; dynalite needs `npm ci` at the
// repository root):
//
//	go run ./cmd/ycsb-matrix -records 10000 -duration 2s -threads 1,8,32
//
// Backends: mem (local engine), file (durable engine), bigtable (bttest in
// process), dynamodb (dynalite), tablestore (the Tablestore emulator in
// process); each of the last three also runs its raw native client on an
// emulator of its own, back to back with the adapter in every cell.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"

	tkycsb "github.com/tablekit/tablekit/ycsb"
)

func main() {
	records := flag.Int64("records", 10000, "records loaded")
	duration := flag.Duration("duration", 2e9, "time per cell")
	threads := flag.String("threads", "1,8,32", "thread counts")
	workloads := flag.String("workloads", "A,B,C,F,D,E", "workloads, in run order (D and E insert)")
	backends := flag.String("backends", "mem,file,bigtable,dynamodb,tablestore", "backends")
	out := flag.String("out", "", "also write the table to this file")
	quiet := flag.Bool("q", false, "no progress lines")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var ths []int
	for _, s := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("bad -threads %q", *threads)
		}
		ths = append(ths, n)
	}
	var targets []tkycsb.Target
	for _, b := range strings.Split(*backends, ",") {
		var ts []tkycsb.Target
		var err error
		switch strings.TrimSpace(b) {
		case "mem":
			ts = []tkycsb.Target{tkycsb.MemTarget()}
		case "file":
			var t tkycsb.Target
			t, err = tkycsb.FileTarget(os.TempDir())
			ts = []tkycsb.Target{t}
		case "bigtable":
			ts, err = tkycsb.BigtableTargets()
		case "dynamodb":
			ts, err = tkycsb.DynamoDBTargets()
		case "tablestore":
			ts, err = tkycsb.TablestoreTargets()
		default:
			err = fmt.Errorf("unknown backend %q", b)
		}
		if err != nil {
			log.Fatalf("%s: %v", b, err)
		}
		targets = append(targets, ts...)
	}
	cfg := tkycsb.MatrixConfig{
		Records:   *records,
		Threads:   ths,
		Workloads: strings.Split(*workloads, ","),
		Duration:  *duration,
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	rows := tkycsb.RunMatrix(ctx, targets, cfg)
	var sb strings.Builder
	fmt.Fprintf(&sb, "records %d, %v per cell, GOMAXPROCS default\n\n", *records, *duration)
	tkycsb.WriteTable(&sb, rows)
	if slices.Contains(ths, 1) {
		sp := tkycsb.Speedups(rows, "local (mem://)", "bigtable (bttest)", 1)
		if len(sp) > 0 {
			fmt.Fprintf(&sb, "\nlocal engine / bttest throughput, 1 thread:")
			for _, w := range cfg.Workloads {
				if v, ok := sp[w]; ok {
					fmt.Fprintf(&sb, " %s %.1f×", w, v)
				}
			}
			fmt.Fprintln(&sb)
		}
	}
	fmt.Print(sb.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(sb.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
