package localengine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// BenchmarkYCSBShaped is tablekit's own share of a YCSB operation on the
// local engine: the calls the YCSB binding (ycsb/tablekit.go) makes, on a
// table shaped as YCSB's (5,000 records of 10 fields × 100 bytes, one
// version), without go-ycsb around them. read is GetRow projected on the
// ten fields (workloads B-D, half of A and F); update is UpdateRow with one
// Put (YCSB's update writes one field); update-engine is the same write
// sent straight to the engine's Write, as the request the Client builds
// (update minus update-engine is the Client's share). Compared with the
// ops/s that ycsb-matrix reports for mem://, it shows how much of a YCSB
// operation is go-ycsb's own work (key choice, value generation,
// measurement).
//
//	go test -run '^$' -bench YCSBShaped -benchtime 200000x -count 3 ./localengine/
func BenchmarkYCSBShaped(b *testing.B) {
	ctx := context.Background()
	e := localengine.New()
	db := tablekit.NewClient(e)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "usertable", Key: tablekit.KeySchema{{Name: "key", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}}); err != nil {
		b.Fatal(err)
	}
	t := db.Table("usertable")
	const records, fields = 5000, 10
	val := make([]byte, 100)
	names := make([]string, fields)
	for f := range names {
		names[f] = fmt.Sprintf("field%d", f)
	}
	keys := make([]tablekit.PrimaryKey, records)
	for i := range keys {
		keys[i] = tablekit.Key("key", tablekit.String(fmt.Sprintf("user%d", i)))
		cols := make([]tablekit.Column, fields)
		for f := range cols {
			cols[f] = tablekit.Column{Name: names[f], Value: tablekit.Binary(val)}
		}
		if err := t.PutRow(ctx, keys[i], cols); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			row, found, err := t.GetRow(ctx, keys[i%records], tablekit.Columns(names...))
			if err != nil || !found || len(row.Columns) != fields {
				b.Fatal(found, err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := t.UpdateRow(ctx, keys[i%records], []tablekit.Change{tablekit.Put(names[i%fields], tablekit.Binary(val))}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update-engine", func(b *testing.B) {
		meta, err := e.DescribeTable(ctx, "usertable")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			now := time.Now().UnixMilli()
			w := &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Key: keys[i%records], Now: now,
				Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: names[i%fields], Value: tablekit.Binary(val), Version: now}}}
			if _, err := e.Write(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
