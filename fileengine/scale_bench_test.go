package fileengine

// BenchmarkScale measures the engine on YCSB-shaped rows (a 2-column key,
// 10 Binary columns of 100 bytes) at the sizes of -scale.rows, each
// against pebble reading and writing the same keys and the same stored
// bytes in the same pebble.DB (the engine's own: same LSM shape, same
// block cache), side by side in one run (figures: BENCHMARKS.md):
//
//	go test -run '^$' -bench Scale -benchtime 20000x -count 3 -timeout 60m ./fileengine/ -args -scale.rows=10000,100000,1000000,4000000
//
// Reads interleave the sides in blocks and compare medians (see
// interleaveN), each side drawing its own random keys (so neither warms
// the cache for the other);
// synced puts alternate the sides within each of g goroutines (see
// syncedPuts).

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/rowmodel"
)

var (
	scaleRows    = flag.String("scale.rows", "10000", "comma-separated table sizes of BenchmarkScale")
	scaleWriters = flag.String("scale.writers", "1,8,32,128", "comma-separated goroutine counts of BenchmarkScale's synced puts")
)

// scaleEnv is one loaded table of BenchmarkScale.
type scaleEnv struct {
	rows    int64
	dir     string
	eng     *Engine
	client  *tablekit.Client
	meta    *tablekit.TableMeta
	prefix  []byte
	version int64
	cols    []tablekit.Column // the 10 columns every row holds
	enc     []byte            // their stored encoding
}

var scaleEnvs = map[int64]*scaleEnv{}

func scaleKey(i int64) tablekit.PrimaryKey {
	return tablekit.Key("user", tablekit.String(fmt.Sprintf("user%012d", i/16))).Add("seq", tablekit.Integer(i%16))
}

func (env *scaleEnv) rawKey(i int64) []byte {
	return codec.AppendKey(append([]byte(nil), env.prefix...), scaleKey(i))
}

// setupScale loads a table of n rows once per process. The rows are
// written into the engine's pebble.DB with the encoding the engine
// itself writes (checked on one row written through the Client), which
// is much faster than n Client writes at 4M rows. The reference's synced
// puts write env.enc, the engine's the same columns.
func setupScale(b *testing.B, n int64) *scaleEnv {
	if env := scaleEnvs[n]; env != nil {
		return env
	}
	dir, err := os.MkdirTemp("", "fileengine-scale")
	if err != nil {
		b.Fatal(err)
	}
	env := &scaleEnv{rows: n, dir: dir, version: time.Now().UnixMilli()}
	if env.eng, err = Open(filepath.Join(dir, "store"), nil); err != nil {
		b.Fatal(err)
	}
	env.client = tablekit.NewClient(env.eng)
	ctx := context.Background()
	if err := env.client.CreateTable(ctx, tablekit.TableMeta{Name: "usertable", Key: tablekit.KeySchema{
		{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}}); err != nil {
		b.Fatal(err)
	}
	if env.meta, err = env.eng.DescribeTable(ctx, "usertable"); err != nil {
		b.Fatal(err)
	}
	env.prefix = rowsPrefix(env.meta.Incarnation)
	r := rand.New(rand.NewPCG(1, 2))
	for f := range 10 {
		v := make([]byte, 100)
		for i := range v {
			v[i] = byte(r.Uint32())
		}
		env.cols = append(env.cols, tablekit.Column{Name: "field" + strconv.Itoa(f), Value: tablekit.Binary(v), Version: env.version})
	}
	env.enc = appendRow(nil, &rowmodel.Row{Cells: env.cols, Generation: env.meta.Generation})
	// The check: a row written through the Client is stored as env.enc.
	if err := env.client.Table("usertable").PutRow(ctx, scaleKey(0), env.cols); err != nil {
		b.Fatal(err)
	}
	if v, c, err := env.eng.db.Get(env.rawKey(0)); err != nil || string(v) != string(env.enc) {
		b.Fatalf("the engine stores a row as %x, the load would write %x (%v)", v, env.enc, err)
	} else {
		_ = c.Close()
	}
	// Every row its own random values, as YCSB's: rows that repeat one
	// another would compress in pebble's blocks and make a table of n rows
	// a fraction of its size on disk and in the block cache.
	start := time.Now()
	cells := slices.Clone(env.cols)
	vals := make([]byte, 1000)
	var enc []byte
	for lo := int64(0); lo < n; lo += 1000 {
		bt := env.eng.db.NewBatch()
		for i := lo; i < min(lo+1000, n); i++ {
			for j := 0; j < len(vals); j += 8 {
				binary.LittleEndian.PutUint64(vals[j:], r.Uint64())
			}
			for f := range cells {
				cells[f].Value = tablekit.Binary(vals[f*100 : (f+1)*100])
			}
			enc = appendRow(enc[:0], &rowmodel.Row{Cells: cells, Generation: env.meta.Generation})
			_ = bt.Set(env.rawKey(i), enc, nil)
		}
		if err := bt.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		_ = bt.Close()
	}
	if err := env.eng.db.Flush(); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d rows in %v", n, time.Since(start).Round(time.Millisecond))
	scaleEnvs[n] = env
	return env
}

func closeScale() {
	for _, env := range scaleEnvs {
		_ = env.client.Close()
		_ = os.RemoveAll(env.dir)
	}
}

func splitInts(b *testing.B, s string) []int64 {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("bad list %q", s)
		}
		out = append(out, n)
	}
	return out
}

// interleaveN runs the ops b.N times each in blocks of interleaveBlock,
// rotating which side goes first, and times every operation. It reports
// each side's median (NAME-p50-ns) and mean (NAME-ns/op), and each side's
// ratio of medians to the first side's (NAME/FIRST): on a machine shared
// with other work a preemption lands in one operation, which moves a mean
// but not a median.
func interleaveN(b *testing.B, names []string, ops []func()) {
	d := make([][]time.Duration, len(ops))
	for s := range d {
		d[s] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for blk, from := 0, 0; from < b.N; blk, from = blk+1, from+interleaveBlock {
		to := min(from+interleaveBlock, b.N)
		for j := range ops {
			s := (blk + j) % len(ops)
			for range to - from {
				t0 := time.Now()
				ops[s]()
				d[s] = append(d[s], time.Since(t0))
			}
		}
	}
	b.StopTimer()
	var total time.Duration
	p50 := make([]time.Duration, len(ops))
	for s := range ops {
		var sum time.Duration
		for _, x := range d[s] {
			sum += x
		}
		total += sum
		p50[s] = benchstat.Median(d[s])
		b.ReportMetric(float64(p50[s].Nanoseconds()), names[s]+"-p50-ns")
		b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), names[s]+"-ns/op")
		if s > 0 {
			b.ReportMetric(float64(p50[s])/float64(p50[0]), names[s]+"/"+names[0])
		}
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/op")
}

func BenchmarkScale(b *testing.B) {
	ctx := context.Background()
	for _, n := range splitInts(b, *scaleRows) {
		env := setupScale(b, n)
		tab := env.client.Table("usertable")
		b.Run(fmt.Sprintf("rows=%d/GetRow", n), func(b *testing.B) {
			rp, re, rc := rand.New(rand.NewPCG(3, 1)), rand.New(rand.NewPCG(3, 2)), rand.New(rand.NewPCG(3, 3))
			req := &tablekit.GetRowRequest{Meta: env.meta, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: env.version}
			interleaveN(b, []string{"pebble", "engine", "client"}, []func(){
				func() {
					v, c, err := env.eng.db.Get(env.rawKey(rp.Int64N(n)))
					if err != nil {
						b.Fatal(err)
					}
					_ = append([]byte(nil), v...)
					_ = c.Close()
				},
				func() {
					req.Key = scaleKey(re.Int64N(n))
					if row, err := env.eng.GetRow(ctx, req); err != nil || row == nil || len(row.Columns) != 10 {
						b.Fatal(row, err)
					}
				},
				func() {
					row, ok, err := tab.GetRow(ctx, scaleKey(rc.Int64N(n)))
					if err != nil || !ok || len(row.Columns) != 10 {
						b.Fatal(ok, err)
					}
				},
			})
		})
		b.Run(fmt.Sprintf("rows=%d/Range100", n), func(b *testing.B) {
			span := n - 100
			rp, re, rr, rs := rand.New(rand.NewPCG(4, 1)), rand.New(rand.NewPCG(4, 2)), rand.New(rand.NewPCG(4, 3)), rand.New(rand.NewPCG(4, 4))
			upper := codec.PrefixSuccessor(env.prefix)
			end := tablekit.Key("user", tablekit.InfMax).Add("seq", tablekit.InfMax)
			interleaveN(b, []string{"pebble", "engine", "rows", "scan"}, []func(){
				func() {
					it, err := env.eng.db.NewIter(&pebble.IterOptions{LowerBound: env.rawKey(rp.Int64N(span)), UpperBound: upper})
					if err != nil {
						b.Fatal(err)
					}
					k := 0
					for ok := it.First(); ok && k < 100; ok = it.Next() {
						_ = append([]byte(nil), it.Key()...)
						_ = append([]byte(nil), it.Value()...)
						k++
					}
					if err := it.Close(); err != nil || k != 100 {
						b.Fatal(k, err)
					}
				},
				func() {
					p, err := env.eng.GetRange(ctx, &tablekit.GetRangeRequest{Meta: env.meta, Start: scaleKey(re.Int64N(span)), End: end,
						Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: env.version})
					if err != nil || len(p.Rows) != 100 {
						b.Fatal(err)
					}
				},
				func() {
					k := 0
					for _, err := range tab.Rows(ctx, scaleKey(rr.Int64N(span)), end, tablekit.Limit(100)) {
						if err != nil {
							b.Fatal(err)
						}
						k++
					}
					if k != 100 {
						b.Fatal(k)
					}
				},
				func() {
					k := 0
					for _, err := range tab.Scan(ctx, scaleKey(rs.Int64N(span)), end, tablekit.Limit(100)) {
						if err != nil {
							b.Fatal(err)
						}
						k++
					}
					if k != 100 {
						b.Fatal(k)
					}
				},
			})
		})
		for _, g := range splitInts(b, *scaleWriters) {
			b.Run(fmt.Sprintf("rows=%d/SyncedPut/g=%d", n, g), func(b *testing.B) {
				syncedPuts(b, env, int(g))
			})
		}
	}
}

// syncedPuts runs b.N synced overwrites of random rows from g goroutines,
// each goroutine alternating the sides from one write to the next (half
// of them start with each): pebble (db.Set with pebble.Sync of the row's
// stored bytes) and the engine (Engine.Write of a put of the same
// columns). The two sides' writes so share the same WAL syncs and the
// same moment of the machine's disk, whose latency on a shared machine
// swings more from second to second than the sides differ. Each write is
// timed; it reports the writes per second g writers would make at each
// side's median latency (g / p50), engine/pebble of those (above 1: the
// engine is faster), and engine/pebble-mean, the ratio of the sides' mean
// latencies, which one stalled sync (a second, at times, on this disk)
// moves by half when it lands on one side. A writer that holds up others
// (a lock held through the sync) shows as a longer latency on its side.
func syncedPuts(b *testing.B, env *scaleEnv, g int) {
	ctx := context.Background()
	sides := [2]func(r *rand.Rand) error{
		func(r *rand.Rand) error { return env.eng.db.Set(env.rawKey(r.Int64N(env.rows)), env.enc, pebble.Sync) },
		func(r *rand.Rand) error {
			_, err := env.eng.Write(ctx, &tablekit.WriteRequest{Meta: env.meta, Kind: tablekit.WritePut,
				Key: scaleKey(r.Int64N(env.rows)), Columns: env.cols, Now: env.version})
			return err
		},
	}
	lat := make([][2][]time.Duration, g) // each goroutine's latencies, by side
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range g {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), uint64(w)))
			for i := w; next.Add(1) <= int64(b.N); i++ {
				s := i % 2
				t0 := time.Now()
				if err := sides[s](r); err != nil {
					b.Error(err)
					return
				}
				lat[w][s] = append(lat[w][s], time.Since(t0))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	var mean, p50 [2]time.Duration
	for s := range 2 {
		var all []time.Duration
		var sum time.Duration
		for w := range lat {
			all = append(all, lat[w][s]...)
		}
		for _, d := range all {
			sum += d
		}
		mean[s] = sum / time.Duration(max(len(all), 1))
		p50[s] = benchstat.Median(all)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(float64(g)/p50[0].Seconds(), "pebble-writes/s")
	b.ReportMetric(float64(g)/p50[1].Seconds(), "engine-writes/s")
	b.ReportMetric(float64(p50[0])/float64(p50[1]), "engine/pebble")
	b.ReportMetric(float64(mean[0])/float64(mean[1]), "engine/pebble-mean")
}
