package main

// Benchmarks of copy, in process (the code the command runs, without the
// process around it), each reporting rows/s:
//
//	go test -run '^$' -bench CopyLocal -benchtime 3x -count 6 ./cmd/tablekit/
//	go test -run '^$' -bench CopyEmulators -benchtime 2x -count 3 ./cmd/tablekit/
//	go test -run '^$' -bench 'Copy.*/interleaved' -benchtime 4x -count 3 ./cmd/tablekit/
//
// CopyLocal copies a table of TABLEKIT_BENCH_ROWS rows (default 100,000)
// of ~1 KB (a String+Integer key and one 1,000-byte Binary cell) from one
// local engine (mem://) to another, side by side with the raw rates of
// the two halves: reading the source (raw-read) and batch-writing the same
// rows, prepared in advance, into the destination (raw-write).
//
// CopyEmulators does the same from the Tablestore emulator (tsemu, in
// process) to dynalite (the DynamoDB emulator, a Node.js process) with
// TABLEKIT_BENCH_EMU_ROWS rows (default 5,000), and measures the raw
// batch-write rate of both sides.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

func benchRows(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return def
}

var benchMeta = tablekit.TableMeta{
	Name: "bench",
	Key:  tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}, {Name: "n", Type: tablekit.TypeInteger}},
}

// benchBatches are n rows of ~1 KB in batches of 200 puts.
func benchBatches(n int) [][]tablekit.BatchWrite {
	rng := rand.New(rand.NewPCG(1, 2))
	version := time.Now().Add(-time.Hour).UnixMilli()
	var out [][]tablekit.BatchWrite
	for i := 0; i < n; i += tablekit.MaxBatchWrite {
		var bw []tablekit.BatchWrite
		for j := i; j < min(n, i+tablekit.MaxBatchWrite); j++ {
			val := make([]byte, 1000)
			for k := range val {
				val[k] = byte(rng.Uint32())
			}
			key := tablekit.Key("k", tablekit.String(fmt.Sprintf("user%08d", j))).Add("n", tablekit.Integer(int64(j)))
			bw = append(bw, tablekit.BatchPut(benchMeta.Name, key, []tablekit.Column{{Name: "v", Value: tablekit.Binary(val), Version: version}}))
		}
		out = append(out, bw)
	}
	return out
}

// rawWrite writes the batches with workers concurrent BatchWriteRow calls.
func rawWrite(ctx context.Context, db *tablekit.Client, batches [][]tablekit.BatchWrite, workers int) error {
	next := make(chan []tablekit.BatchWrite)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range next {
				if err := writeBatch(ctx, db, b); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for _, b := range batches {
		next <- b
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func mustCreate(b *testing.B, db *tablekit.Client, name string) {
	b.Helper()
	m := benchMeta
	m.Name = name
	if err := db.CreateTable(context.Background(), m); err != nil {
		b.Fatal(err)
	}
}

func mustDrop(b *testing.B, db *tablekit.Client, name string) {
	b.Helper()
	if err := db.DeleteTable(context.Background(), name); err != nil {
		b.Fatal(err)
	}
}

// renamed is batches writing into table name instead.
func renamed(batches [][]tablekit.BatchWrite, name string) [][]tablekit.BatchWrite {
	out := make([][]tablekit.BatchWrite, len(batches))
	for i, bw := range batches {
		out[i] = make([]tablekit.BatchWrite, len(bw))
		for j, w := range bw {
			w.Table = name
			out[i][j] = w
		}
	}
	return out
}

// benchCopySides runs the copy and raw sub-benchmarks from src to dst.
func benchCopySides(b *testing.B, src, dst *tablekit.Client, rows int, rawWriteOthers map[string]*tablekit.Client) {
	ctx := context.Background()
	batches := benchBatches(rows)
	mustCreate(b, src, benchMeta.Name)
	if err := rawWrite(ctx, src, batches, 4); err != nil {
		b.Fatal(err)
	}
	// perSec reports rows/s of elapsed time and rows per CPU-second the
	// whole process used (cpu0: its CPU time when the sub-benchmark
	// started; untimed setup inside it is included, so it is a lower bound).
	// On a shared machine elapsed time swings with other people's load; CPU
	// time does not.
	var cpu0 time.Duration
	start := func() { cpu0 = benchstat.ProcessCPU() }
	perSec := func(b *testing.B) {
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(rows)*float64(b.N)/(benchstat.ProcessCPU()-cpu0).Seconds(), "rows/cpu-s")
	}
	for _, verify := range []bool{false, true} {
		name := "copy"
		if verify {
			name = "copy+verify"
		}
		b.Run(name, func(b *testing.B) {
			start()
			for b.Loop() {
				// The destination table exists (created untimed, as the
				// raw-write side's is), so the timed part is the rows:
				// copy's own CreateTable would add a backend's table
				// creation latency that raw-write does not pay.
				b.StopTimer()
				mustCreate(b, dst, benchMeta.Name)
				b.StartTimer()
				cfg := copyConfig{tables: []string{benchMeta.Name}, verify: verify, workers: 4, batch: tablekit.MaxBatchWrite, quiet: true, existing: true}
				if err := copyTables(ctx, src, dst, &checkpoint{Tables: map[string]*tableCheckpoint{}}, cfg, io.Discard); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				mustDrop(b, dst, benchMeta.Name)
				b.StartTimer()
			}
			perSec(b)
		})
	}
	// interleaved: copy (without verify) and raw-write alternate within
	// one loop, the side going first alternating, each timed apart, so the
	// machine's load falls on both alike; copy/raw-write is the ratio of
	// their rates.
	b.Run("interleaved", func(b *testing.B) {
		raw := renamed(batches, "bench_raw")
		var tCopy, tRaw time.Duration
		i := 0
		for b.Loop() {
			b.StopTimer()
			sides := []func(){
				func() {
					mustCreate(b, dst, "bench_raw")
					st := time.Now()
					if err := rawWrite(ctx, dst, raw, 4); err != nil {
						b.Fatal(err)
					}
					tRaw += time.Since(st)
					mustDrop(b, dst, "bench_raw")
				},
				func() {
					mustCreate(b, dst, benchMeta.Name)
					cfg := copyConfig{tables: []string{benchMeta.Name}, workers: 4, batch: tablekit.MaxBatchWrite, quiet: true, existing: true}
					st := time.Now()
					if err := copyTables(ctx, src, dst, &checkpoint{Tables: map[string]*tableCheckpoint{}}, cfg, io.Discard); err != nil {
						b.Fatal(err)
					}
					tCopy += time.Since(st)
					mustDrop(b, dst, benchMeta.Name)
				},
			}
			if i%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0]
			}
			i++
			sides[0]()
			sides[1]()
			b.StartTimer()
		}
		n := float64(rows) * float64(b.N)
		b.ReportMetric(n/tCopy.Seconds(), "copy-rows/s")
		b.ReportMetric(n/tRaw.Seconds(), "raw-write-rows/s")
		b.ReportMetric(tRaw.Seconds()/tCopy.Seconds(), "copy/raw-write")
	})
	b.Run("raw-read", func(b *testing.B) {
		start()
		for b.Loop() {
			n := 0
			for _, err := range allRows(ctx, src, &benchMeta) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != rows {
				b.Fatalf("read %d rows, want %d", n, rows)
			}
		}
		perSec(b)
	})
	sides := map[string]*tablekit.Client{"raw-write": dst}
	for k, v := range rawWriteOthers {
		sides[k] = v
	}
	raw := renamed(batches, "bench_raw")
	for name, db := range sides {
		b.Run(name, func(b *testing.B) {
			start()
			for b.Loop() {
				b.StopTimer()
				mustCreate(b, db, "bench_raw")
				b.StartTimer()
				if err := rawWrite(ctx, db, raw, 4); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				mustDrop(b, db, "bench_raw")
				b.StartTimer()
			}
			perSec(b)
		})
	}
}

func init() { benchMeta.Options.MaxVersions = 1 }

func BenchmarkCopyLocal(b *testing.B) {
	ctx := context.Background()
	src, err := tablekit.Open(ctx, "mem://bench-src")
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := tablekit.Open(ctx, "mem://bench-dst")
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	benchCopySides(b, src, dst, benchRows("TABLEKIT_BENCH_ROWS", 100_000), nil)
	mustDrop(b, src, benchMeta.Name)
}

func BenchmarkCopyEmulators(b *testing.B) {
	ctx := context.Background()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), Addr: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	b.Setenv(aliyuntablestore.EnvAccessKeyID, tsemu.DefaultAccessKeyID)
	b.Setenv(aliyuntablestore.EnvAccessKeySecret, tsemu.DefaultAccessKeySecret)
	src, err := tablekit.Open(ctx, "tablestore://"+tsemu.DefaultInstanceName+"?endpoint="+srv.Endpoint())
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	endpoint := dynalitetest.Start(b)
	b.Setenv("AWS_ACCESS_KEY_ID", "bench")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "bench")
	dst, err := tablekit.Open(ctx, "dynamodb://?region=us-east-1&endpoint="+endpoint)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	// raw-write-src is the source emulator's batch-write rate (into table
	// bench_raw, beside the source table).
	benchCopySides(b, src, dst, benchRows("TABLEKIT_BENCH_EMU_ROWS", 5_000), map[string]*tablekit.Client{"raw-write-src": src})
}
