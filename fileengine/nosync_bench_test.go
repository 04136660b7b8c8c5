package fileengine

// BenchmarkNoSyncWrite measures what Options.NoSync's promise to the
// process costs: 1 KB inserts through Engine.Write, by 1 and 8 concurrent
// writers, on
//
//	nosync         an engine opened with NoSync as it is: each commit waits
//	               until its log record is written to the file (no fsync)
//	pebble-nosync  the same engine committing with pebble.NoSync, as NoSync
//	               did before: acknowledged while the record may still be in
//	               pebble's buffer, so a killed process lost writes
//	sync           the default engine: each commit waits for the fsync
//
// and interleaved/writers=1 runs the first two alternately in one loop
// and reports their ratio (nosync/pebble-nosync).
//
//	go test -run '^$' -bench NoSyncWrite -benchtime 2000x -count 3 ./fileengine/

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
)

func BenchmarkNoSyncWrite(b *testing.B) {
	ctx := context.Background()
	open := func(noSync bool) (*Engine, *tablekit.TableMeta) {
		eng, err := Open(filepath.Join(b.TempDir(), "e"), &Options{NoSync: noSync})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = eng.Close() })
		if err := tablekit.NewClient(eng).CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
			b.Fatal(err)
		}
		m, err := eng.DescribeTable(ctx, "t")
		if err != nil {
			b.Fatal(err)
		}
		return eng, m
	}
	relaxed, rm := open(true)
	synced, sm := open(false)
	value := benchValue(rand.New(rand.NewPCG(3, 4)))
	var next atomic.Int64
	write := func(eng *Engine, meta *tablekit.TableMeta) error {
		w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WritePut, Key: benchKey(next.Add(1)),
			Columns: []tablekit.Column{{Name: "v", Value: tablekit.Binary(value), Version: 1}}, Now: 1}
		_, err := eng.Write(ctx, w)
		return err
	}
	// One writer, the two NoSync commits alternating in blocks (see
	// interleaveSides): the ratio nosync/pebble-nosync.
	b.Run("interleaved/writers=1", func(b *testing.B) {
		defer func() { relaxed.wo = pebble.Sync }()
		op := func(wo *pebble.WriteOptions) func(int) {
			return func(int) {
				relaxed.wo = wo
				if err := write(relaxed, rm); err != nil {
					b.Fatal(err)
				}
			}
		}
		interleaveSides(b, [2]string{"pebble-nosync", "nosync"}, op(pebble.NoSync), op(pebble.Sync))
	})
	for _, writers := range []int{1, 8} {
		for _, side := range []struct {
			name string
			eng  *Engine
			meta *tablekit.TableMeta
			wo   *pebble.WriteOptions
		}{{"nosync", relaxed, rm, pebble.Sync}, {"pebble-nosync", relaxed, rm, pebble.NoSync}, {"sync", synced, sm, pebble.Sync}} {
			b.Run(fmt.Sprintf("writers=%d/%s", writers, side.name), func(b *testing.B) {
				side.eng.wo = side.wo
				defer func() { side.eng.wo = pebble.Sync }()
				var wg sync.WaitGroup
				var left atomic.Int64
				left.Store(int64(b.N))
				b.ResetTimer()
				for range writers {
					wg.Go(func() {
						for left.Add(-1) >= 0 {
							if err := write(side.eng, side.meta); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			})
		}
	}
}
