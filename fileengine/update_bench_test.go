package fileengine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// BenchmarkUpdateField measures what an update of one field of a
// YCSB-shaped row (10 fields of 100 bytes, 5,000 rows, Options.NoSync)
// costs through Engine.Write, against the two writes that bound what a
// narrower update could save (issue 30 c), in one loop, alternating in 8
// phases:
//
//	update     UpdateRow of one field: the row read and decoded, the
//	           update applied, the whole row (~1.2 KB) encoded and written
//	put        a put of the whole row (no read): what the read, decode and
//	           apply cost is the difference
//	put-cell   a put of a one-field row (~120 bytes) of another table: about
//	           what writing only the changed cell (say, a pebble merge
//	           operand) would cost, with no read
//
// It reports each side's median latency (p50-ns) and update/put-cell.
//
//	go test -run '^$' -bench UpdateField -benchtime 100000x -count 3 ./fileengine/
func BenchmarkUpdateField(b *testing.B) {
	ctx := context.Background()
	eng, err := Open(filepath.Join(b.TempDir(), "e"), &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = eng.Close() })
	db := tablekit.NewClient(eng)
	metas := map[string]*tablekit.TableMeta{}
	for _, name := range []string{"rows", "cells"} {
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "key", Type: tablekit.TypeString}},
			Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}}); err != nil {
			b.Fatal(err)
		}
		if metas[name], err = eng.DescribeTable(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
	const records, fields = 5000, 10
	val := make([]byte, 100)
	names := make([]string, fields)
	row := make([]tablekit.Column, fields)
	for f := range names {
		names[f] = fmt.Sprintf("field%d", f)
		row[f] = tablekit.Column{Name: names[f], Value: tablekit.Binary(val), Version: 1}
	}
	keys := make([]tablekit.PrimaryKey, records)
	for i := range keys {
		keys[i] = tablekit.Key("key", tablekit.String(fmt.Sprintf("user%d", i)))
		if _, err := eng.Write(ctx, &tablekit.WriteRequest{Meta: metas["rows"], Kind: tablekit.WritePut, Key: keys[i], Columns: row, Now: 1}); err != nil {
			b.Fatal(err)
		}
	}
	sides := []struct {
		name string
		req  func(i int, now int64) *tablekit.WriteRequest
		lat  []time.Duration
	}{
		{name: "update", req: func(i int, now int64) *tablekit.WriteRequest {
			return &tablekit.WriteRequest{Meta: metas["rows"], Kind: tablekit.WriteUpdate, Key: keys[(i*7919)%records], Now: now,
				Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: names[i%fields], Value: tablekit.Binary(val), Version: now}}}
		}},
		{name: "put", req: func(i int, now int64) *tablekit.WriteRequest {
			return &tablekit.WriteRequest{Meta: metas["rows"], Kind: tablekit.WritePut, Key: keys[(i*7919)%records], Now: now, Columns: row}
		}},
		{name: "put-cell", req: func(i int, now int64) *tablekit.WriteRequest {
			return &tablekit.WriteRequest{Meta: metas["cells"], Kind: tablekit.WritePut, Key: keys[(i*7919)%records], Now: now, Columns: row[:1]}
		}},
	}
	const phases = 8
	per := max(b.N/phases, 1)
	b.ResetTimer()
	for p := range phases {
		for j := range sides {
			s := &sides[(p+j)%len(sides)]
			for i := range per {
				start := time.Now()
				if _, err := eng.Write(ctx, s.req(p*per+i, start.UnixMilli())); err != nil {
					b.Fatal(err)
				}
				s.lat = append(s.lat, time.Since(start))
			}
		}
	}
	b.StopTimer()
	p50 := map[string]float64{}
	for _, s := range sides {
		slices.Sort(s.lat)
		p50[s.name] = float64(s.lat[len(s.lat)/2])
		b.ReportMetric(p50[s.name], s.name+"-p50-ns")
	}
	b.ReportMetric(p50["update"]/p50["put-cell"], "update/put-cell")
}
