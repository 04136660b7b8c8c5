package fileengine

// BenchmarkInterleaved runs each operation on pebble alone and on the
// engine in one loop, alternating blocks of interleaveBlock operations of
// each side, timed apart, with the side going first alternating from block
// to block. Both sides then meet the same machine load, the same state of
// pebble's background compactions and a block cache warmed alike, which
// running them one after another (as the per-side benchmarks do) cannot
// give. It reports each side's mean (pebble-ns/op, engine-ns/op) and their
// ratio engine/pebble; ns/op is the sum of the two.
//
//	FILEENGINE_BENCH_ROWS=1000000 go test -run '^$' -bench Interleaved -benchtime 20000x -count 3 ./fileengine/
//
// Insert and Overwrite use NoSync on both sides; Synced uses pebble.Sync on
// both sides.

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

const interleaveBlock = 32

// interleave runs pebbleOp and engineOp b.N times each, in alternating
// blocks, and reports their means and ratio.
func interleave(b *testing.B, pebbleOp, engineOp func(i int)) {
	interleaveSides(b, [2]string{"pebble", "engine"}, pebbleOp, engineOp)
}

// interleaveSides is interleave with the sides named: it reports
// names[0]-ns/op, names[1]-ns/op and the ratio names[1]/names[0].
func interleaveSides(b *testing.B, names [2]string, op0, op1 func(i int)) {
	var spent [2]time.Duration
	ops := [2]func(int){op0, op1}
	b.ResetTimer()
	for blk, from := 0, 0; from < b.N; blk, from = blk+1, from+interleaveBlock {
		to := min(from+interleaveBlock, b.N)
		for j := range 2 {
			s := (blk + j) % 2
			t0 := time.Now()
			for i := from; i < to; i++ {
				ops[s](i)
			}
			spent[s] += time.Since(t0)
		}
	}
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	b.ReportMetric(per(spent[0]), names[0]+"-ns/op")
	b.ReportMetric(per(spent[1]), names[1]+"-ns/op")
	b.ReportMetric(per(spent[0]+spent[1]), "ns/op")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), names[1]+"/"+names[0])
}

func BenchmarkInterleaved(b *testing.B) {
	env := setupBench(b)
	ctx := context.Background()
	rows := int64(env.rows)

	b.Run("PointRead", func(b *testing.B) {
		// The two sides read the same keys, each from its own store.
		rp, re := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
		req := &tablekit.GetRowRequest{Meta: env.meta, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: env.version}
		interleave(b, func(int) {
			v, c, err := env.bare.Get(env.bareKey(rp.Int64N(rows)))
			if err != nil {
				b.Fatal(err)
			}
			_ = append([]byte(nil), v...)
			_ = c.Close()
		}, func(int) {
			req.Key = benchKey(re.Int64N(rows))
			if row, err := env.eng.GetRow(ctx, req); err != nil || row == nil {
				b.Fatal(row, err)
			}
		})
	})

	write := func(b *testing.B, wo *pebble.WriteOptions, kp, ke func() int64) {
		val := benchValue(rand.New(rand.NewPCG(5, 6)))
		enc := env.encoded(val)
		cols := []tablekit.Column{{Name: "v", Value: tablekit.Binary(val), Version: env.version}}
		saved := env.eng.wo
		env.eng.wo = wo
		defer func() { env.eng.wo = saved }()
		interleave(b, func(int) {
			if err := env.bare.Set(env.bareKey(kp()), enc, wo); err != nil {
				b.Fatal(err)
			}
		}, func(int) {
			w := &tablekit.WriteRequest{Meta: env.meta, Kind: tablekit.WritePut, Key: benchKey(ke()), Columns: cols, Now: env.version}
			if _, err := env.eng.Write(ctx, w); err != nil {
				b.Fatal(err)
			}
		})
	}
	b.Run("Insert", func(b *testing.B) {
		// New keys above the loaded ones, the same on both sides.
		base := env.nextInsert.Add(int64(b.N)) - int64(b.N)
		var np, ne int64
		write(b, pebble.NoSync, func() int64 { np++; return base + np }, func() int64 { ne++; return base + ne })
	})
	b.Run("Overwrite", func(b *testing.B) {
		rp, re := rand.New(rand.NewPCG(7, 8)), rand.New(rand.NewPCG(7, 8))
		write(b, pebble.NoSync, func() int64 { return rp.Int64N(rows) }, func() int64 { return re.Int64N(rows) })
	})
	b.Run("Synced", func(b *testing.B) {
		rp, re := rand.New(rand.NewPCG(9, 10)), rand.New(rand.NewPCG(9, 10))
		write(b, pebble.Sync, func() int64 { return rp.Int64N(rows) }, func() int64 { return re.Int64N(rows) })
	})

	b.Run("Range100", func(b *testing.B) {
		span := rows - 100
		rp, re := rand.New(rand.NewPCG(10, 11)), rand.New(rand.NewPCG(10, 11))
		upper := codec.PrefixSuccessor(env.prefix)
		end := tablekit.Key("id", tablekit.InfMax)
		interleave(b, func(int) {
			env.bareRange(b, env.bareKey(rp.Int64N(span)), upper)
		}, func(int) {
			p, err := env.eng.GetRange(ctx, &tablekit.GetRangeRequest{Meta: env.meta, Start: benchKey(re.Int64N(span)), End: end,
				Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: env.version})
			if err != nil || len(p.Rows) != 100 {
				b.Fatal(err)
			}
		})
	})
}
