package aliyuntablestore_test

// The change feed (SPEC §15) through Tablestore Stream, on tstest over the
// local engine and over the file engine (nosync), through the adapter and
// the SDK over HTTP, side by side in one run:
//
//	go test -run '^$' -bench FeedTstest -benchtime 5000x -count 3 ./backend/aliyuntablestore/
//
// Write/<engine>: what enabling the feed costs a PutRow (one Integer cell,
// a new key each). One loop alternates blocks of 64 PutRows to a table
// with the feed off and one with it on, timing them apart; it reports
// off-ns/op, on-ns/op and on/off.
//
// Read/<engine>: whether a reader keeps up with the writes. b.N PutRows
// to a table with the feed on (writes/s), then every record read back
// with ReadShard, GetStreamRecord pages of 1000 (records/s); it reports
// both and read/write, the ratio of the rates.

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore/tstest"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

func feedBenchClient(b *testing.B, engine string) *tablekit.Client {
	var backend tablekit.Backend = localengine.New()
	if engine == "file" {
		fe, err := fileengine.Open(filepath.Join(b.TempDir(), "db"), &fileengine.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { fe.Close() })
		backend = fe
	}
	srv, err := tstest.NewServer(tstest.Options{Backend: backend})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return tablekit.NewClient(openAt(b, srv, srv.Endpoint(), nil))
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

func BenchmarkFeedTstest(b *testing.B) {
	ctx := context.Background()
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}
	for _, engine := range []string{"local", "file"} {
		b.Run("Write/"+engine, func(b *testing.B) {
			db := feedBenchClient(b, engine)
			tbls := [2]*tablekit.Table{feedBenchTable(b, db, "off", false), feedBenchTable(b, db, "on", true)}
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
		b.Run("Read/"+engine, func(b *testing.B) {
			db := feedBenchClient(b, engine)
			t := feedBenchTable(b, db, "t", true)
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
