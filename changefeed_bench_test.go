package tablekit_test

// Benchmarks of the change feed (SPEC §15) on the local and file engines,
// side by side in one run:
//
//	go test -run '^$' -bench ChangeFeed -benchtime 20000x -count 3 .
//
// Write/<engine>: what enabling the feed costs a write. One loop
// alternates blocks of 64 PutRows (one Integer cell, a new key each) to
// two tables of one engine, one with the feed off and one with it on,
// timing the blocks apart, so that the noise of a shared machine falls on
// both; it reports off-ns/op, on-ns/op and on/off. The file engine runs
// with nosync=true, so that the figures compare CPU work rather than
// fsyncs (a synced commit costs the same with or without its record).
//
// Read/<engine>: whether a reader keeps up with writers. b.N PutRows to a
// table with the feed on (writes/s), then every record read back with
// ReadShard (records/s); it reports both and read/write, the ratio of the
// rates (above 1: the feed is read faster than it is written).

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

func feedBenchEngines(b *testing.B) map[string]func() tablekit.Backend {
	return map[string]func() tablekit.Backend{
		"local": func() tablekit.Backend { return localengine.New() },
		"file": func() tablekit.Backend {
			e, err := fileengine.Open(filepath.Join(b.TempDir(), "db"), &fileengine.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return e
		},
	}
}

func feedBenchTable(b *testing.B, db *tablekit.Client, name string, feed bool) *tablekit.Table {
	ctx := context.Background()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		b.Fatal(err)
	}
	t := db.Table(name)
	if feed {
		if _, err := t.EnableChangeFeed(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
	return t
}

func BenchmarkChangeFeed(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"local", "file"} {
		open := feedBenchEngines(b)[name]
		b.Run("Write/"+name, func(b *testing.B) {
			db := tablekit.NewClient(open())
			defer db.Close()
			tbls := [2]*tablekit.Table{feedBenchTable(b, db, "off", false), feedBenchTable(b, db, "on", true)}
			cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}
			var spent [2]time.Duration
			var ops [2]int
			const block = 64
			b.ResetTimer()
			for i := 0; i < b.N; {
				for s := range 2 {
					side := (s + i/block) % 2 // the side going first alternates
					n := min(block, b.N-i)
					start := time.Now()
					for j := range n {
						if err := tbls[side].PutRow(ctx, tablekit.Key("id", tablekit.Integer(int64(i+j))), cols); err != nil {
							b.Fatal(err)
						}
					}
					spent[side] += time.Since(start)
					ops[side] += n
				}
				i += block
			}
			b.StopTimer()
			off := float64(spent[0].Nanoseconds()) / float64(max(ops[0], 1))
			on := float64(spent[1].Nanoseconds()) / float64(max(ops[1], 1))
			b.ReportMetric(off, "off-ns/op")
			b.ReportMetric(on, "on-ns/op")
			b.ReportMetric(on/off, "on/off")
		})
		b.Run("Read/"+name, func(b *testing.B) {
			db := tablekit.NewClient(open())
			defer db.Close()
			t := feedBenchTable(b, db, "t", true)
			cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				if err := t.PutRow(ctx, tablekit.Key("id", tablekit.Integer(int64(i))), cols); err != nil {
					b.Fatal(err)
				}
			}
			wrote := time.Since(start)
			shards, err := t.ListShards(ctx)
			if err != nil {
				b.Fatal(err)
			}
			start = time.Now()
			n := 0
			for _, err := range t.ReadShard(ctx, shards[0].ID, "") {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			read := time.Since(start)
			b.StopTimer()
			if n != b.N {
				b.Fatalf("read %d records of %d writes", n, b.N)
			}
			w, r := float64(b.N)/wrote.Seconds(), float64(n)/read.Seconds()
			b.ReportMetric(w, "writes/s")
			b.ReportMetric(r, "records/s")
			b.ReportMetric(r/w, "read/write")
		})
	}
}
