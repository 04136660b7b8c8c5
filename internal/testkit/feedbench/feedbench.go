// Package feedbench is the change-feed benchmark (SPEC §15) every backend
// with a feed runs, side by side in one run:
//
// Write: what enabling the feed costs a write. One loop alternates blocks
// of 64 PutRows (one Integer cell, a new key each) to two tables of one
// Client, one with the feed off and one with it on, timing the blocks
// apart, so that the noise of a shared machine falls on both; it reports
// off-ns/op, on-ns/op and on/off.
//
// Read: whether a reader keeps up with writers. b.N PutRows to a table
// with the feed on (writes/s), then every record read back with ReadShard
// (records/s); it reports both and read/write, the ratio of the rates
// (above 1: the feed is read faster than it is written).
package feedbench

import (
	"context"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

var cols = []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}

func key(i int) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.Integer(int64(i))) }

// Table creates table name (one Integer key column "id") with the feed on
// or off.
func Table(b *testing.B, db *tablekit.Client, name string, feed bool) *tablekit.Table {
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

// Write runs the write-cost benchmark on db (tables "off" and "on").
func Write(b *testing.B, db *tablekit.Client) {
	ctx := context.Background()
	tbls := [2]*tablekit.Table{Table(b, db, "off", false), Table(b, db, "on", true)}
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
				if err := tbls[side].PutRow(ctx, key(i+j), cols); err != nil {
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
}

// Read runs the read-rate benchmark on db (table "t").
func Read(b *testing.B, db *tablekit.Client) {
	ctx := context.Background()
	t := Table(b, db, "t", true)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := t.PutRow(ctx, key(i), cols); err != nil {
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
}
