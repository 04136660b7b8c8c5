package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// BenchmarkFollowLag measures copy --follow's lag, in process (the code
// the command runs: copyTables, then followTables with its checkpoint
// file), while writers put rows into the source at a steady rate
// (-follow.rate, default 1,000 writes/s, for -follow.time, default 5 s):
// the lag of a row is the time from its write's commit (its version, ms)
// to the end of its application to the destination (a local engine). It
// reports the lag's p50, p99 and maximum in ms, the write rate the
// source sustained and the 99th percentile of a write call's time
// (put-p99-ms). Sources: the local engine (mem://), the file engine
// (file://, nosync), and the Tablestore emulator (tsemu over a local
// engine, in process, read through its Stream API).
//
//	go test -run '^$' -bench FollowLag -benchtime 1x -count 3 ./cmd/tablekit/
//
// The local and file engines are tablekit.FeedWaiters: a caught-up
// follower wakes at their next commit. The emulator is read like the
// service, by polling GetStreamRecord: a caught-up follower re-reads after
// FollowOptions.Poll (200 ms), but the emulator holds a caught-up
// GetStreamRecord open until the next commit of its FeedWaiter Backend, up
// to tsemu's Options.StreamWait (tsemu/streamwait.go). "emulator-nowait"
// is the emulator answering at once, as the service does (StreamWait < 0):
// there the 200 ms poll bounds how soon the follower sees a record.
func BenchmarkFollowLag(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		benchFollowLag(b, func(b *testing.B) *tablekit.Client { return mustOpen(b, "mem://lag-src") })
	})
	b.Run("file", func(b *testing.B) {
		benchFollowLag(b, func(b *testing.B) *tablekit.Client {
			return mustOpen(b, "file://"+filepath.Join(b.TempDir(), "src")+"?nosync=true")
		})
	})
	for _, c := range []struct {
		name string
		wait time.Duration
	}{{"emulator", 0}, {"emulator-nowait", -1}} {
		b.Run(c.name, func(b *testing.B) {
			benchFollowLag(b, func(b *testing.B) *tablekit.Client {
				srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), Addr: "127.0.0.1:0", StreamWait: c.wait})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { srv.Close() })
				b.Setenv(aliyuntablestore.EnvAccessKeyID, tsemu.DefaultAccessKeyID)
				b.Setenv(aliyuntablestore.EnvAccessKeySecret, tsemu.DefaultAccessKeySecret)
				return mustOpen(b, "tablestore://"+tsemu.DefaultInstanceName+"?endpoint="+srv.Endpoint())
			})
		})
	}
}

var (
	lagRate = flag.Int("follow.rate", 1000, "BenchmarkFollowLag: writes per second into the source")
	lagTime = flag.Duration("follow.time", 5*time.Second, "BenchmarkFollowLag: how long the writers write")
)

func mustOpen(b *testing.B, url string) *tablekit.Client {
	db, err := tablekit.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// lagDst is a destination backend noting, for each put it applies, the
// time since the newest version it carries.
type lagDst struct {
	tablekit.Backend
	mu   sync.Mutex
	lags []time.Duration
}

func (d *lagDst) Write(ctx context.Context, w *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	res, err := d.Backend.Write(ctx, w)
	if err == nil && w.Kind == tablekit.WritePut && len(w.Columns) > 0 {
		v := w.Columns[0].Version
		for _, c := range w.Columns {
			v = max(v, c.Version)
		}
		lag := time.Duration(time.Now().UnixMilli()-v) * time.Millisecond
		d.mu.Lock()
		d.lags = append(d.lags, lag)
		d.mu.Unlock()
	}
	return res, err
}

func (d *lagDst) applied() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.lags)
}

func benchFollowLag(b *testing.B, open func(b *testing.B) *tablekit.Client) {
	for range b.N {
		b.StopTimer()
		src := open(b)
		ctx, cancel := context.WithCancel(context.Background())
		name := fmt.Sprintf("lag%d", time.Now().UnixNano())
		if err := src.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}, Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}}); err != nil {
			b.Fatal(err)
		}
		dstB := &lagDst{Backend: localengine.New()}
		dst := tablekit.NewClient(dstB)
		cp, err := loadCheckpoint(filepath.Join(b.TempDir(), "cp.json"), "src", "dst")
		if err != nil {
			b.Fatal(err)
		}
		cfg := copyConfig{tables: []string{name}, workers: 4, batch: tablekit.MaxBatchWrite, quiet: true, follow: true}
		if err := copyTables(ctx, src, dst, cp, cfg, io.Discard); err != nil {
			b.Fatal(err)
		}
		followed := make(chan error, 1)
		go func() { followed <- followTables(ctx, src, dst, cp, cfg, io.Discard) }()
		b.StartTimer()
		w := paceWrites(func(i int64) error {
			return src.Table(name).PutRow(ctx, tablekit.Key("k", tablekit.Integer(i)), []tablekit.Column{{Name: "v", Value: tablekit.Integer(i)}})
		})
		if w.err != nil {
			b.Fatal(w.err)
		}
		written := w.written
		for deadline := time.Now().Add(time.Minute); dstB.applied() < written; {
			if time.Now().After(deadline) {
				b.Fatalf("the follower applied %d of %d records within a minute of the writers' end", dstB.applied(), written)
			}
			time.Sleep(10 * time.Millisecond)
		}
		b.StopTimer()
		cancel()
		if err := <-followed; err != nil {
			b.Fatal(err)
		}
		reportLags(b, dstB.lags)
		w.report(b)
	}
}

// paced is what paceWrites did.
type paced struct {
	written int
	elapsed time.Duration
	calls   []time.Duration // each write call's time, sorted
	err     error
}

// report reports the rate the writers sustained, and the 99th percentile
// of a write call's time ("put-p99-ms"): a lag counts from the write's
// version, taken before the call, so a store that queues writes (moto
// serves one request at a time) adds that wait to the lag.
func (p paced) report(b *testing.B) {
	b.ReportMetric(float64(p.written)/p.elapsed.Seconds(), "writes/s")
	if n := len(p.calls); n > 0 {
		b.ReportMetric(float64(p.calls[(n-1)*99/100])/float64(time.Millisecond), "put-p99-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// paceWrites calls write(i) from 8 goroutines for i = 0, 1, ..., each at
// its due time, start + i/-follow.rate, until -follow.time has passed
// (a store slower than the rate is written as fast as it answers), and
// returns how many were written and in what time, or the first error.
func paceWrites(write func(i int64) error) paced {
	const writers = 8
	var next atomic.Int64
	start := time.Now()
	end := start.Add(*lagTime)
	interval := time.Second / time.Duration(*lagRate)
	var (
		wg    sync.WaitGroup
		werr  atomic.Value
		mu    sync.Mutex
		calls []time.Duration
	)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				due := start.Add(time.Duration(i) * interval)
				if due.After(end) {
					return
				}
				time.Sleep(time.Until(due))
				t0 := time.Now()
				if err := write(i); err != nil {
					werr.Store(err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				calls = append(calls, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	p := paced{written: int(next.Load()) - writers, elapsed: time.Since(start), calls: calls}
	p.err, _ = werr.Load().(error)
	slices.Sort(p.calls)
	return p
}
