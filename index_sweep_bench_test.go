package tablekit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// BenchmarkIndexStale reads the 10 "pending" jobs of an index on status
// after 1,000 other jobs went from pending to done, each leaving its
// pending entry behind (SPEC §16: extra entries are never read). stale:
// reads do not sweep (as before), so each one verifies the 1,010 entries
// of the value; swept: reads remove the stale entries they meet once the
// grace has passed (the first read, before the timer), so later reads see
// the 10; clean: an index that never had a stale entry, the reference.
//
//	go test -run '^$' -bench 'IndexStale' -benchtime 200x -count 3 .
func BenchmarkIndexStale(b *testing.B) {
	engines := map[string]func(b *testing.B) tablekit.Backend{
		"local": func(*testing.B) tablekit.Backend { return localengine.New() },
		"file": func(b *testing.B) tablekit.Backend {
			e, err := fileengine.Open(b.TempDir(), &fileengine.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return e
		},
	}
	for _, engine := range []string{"local", "file"} {
		for _, mode := range []string{"stale", "swept", "clean"} {
			b.Run(engine+"/"+mode, func(b *testing.B) {
				benchIndexStale(b, engines[engine](b), mode)
			})
		}
	}
}

func benchIndexStale(b *testing.B, be tablekit.Backend, mode string) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Now())
	db := tablekit.NewClient(be, tablekit.WithClock(clock), tablekit.WithIndexSweep(mode != "stale"))
	defer db.Close()
	byStatus := tablekit.IndexSpec{Name: "by_status", Columns: []tablekit.KeyColumn{{Name: "status", Type: tablekit.TypeString}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "jobs", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Indexes: []tablekit.IndexSpec{byStatus}}); err != nil {
		b.Fatal(err)
	}
	var ws []tablekit.BatchWrite
	for i := range 1010 {
		status := "pending"
		if i < 1000 && mode == "clean" {
			status = "done"
		}
		ws = append(ws, tablekit.BatchPut("jobs", tablekit.Key("id", tablekit.String(fmt.Sprintf("job%05d", i))), []tablekit.Column{{Name: "status", Value: tablekit.String(status)}}))
	}
	if _, err := db.WriteAll(ctx, ws); err != nil {
		b.Fatal(err)
	}
	if mode != "clean" {
		ws = ws[:0]
		for i := range 1000 {
			ws = append(ws, tablekit.BatchUpdate("jobs", tablekit.Key("id", tablekit.String(fmt.Sprintf("job%05d", i))), []tablekit.Change{tablekit.Put("status", tablekit.String("done"))}))
		}
		if _, err := db.WriteAll(ctx, ws); err != nil {
			b.Fatal(err)
		}
	}
	clock.Advance(2 * time.Minute) // past the grace
	ix := db.Table("jobs").Index("by_status")
	lo := tablekit.Key("status", tablekit.String("pending")).Add("id", tablekit.InfMin)
	hi := tablekit.Key("status", tablekit.String("pending")).Add("id", tablekit.InfMax)
	read := func() {
		res, err := ix.GetRange(ctx, lo, hi, tablekit.Limit(100))
		if err != nil || len(res.Rows) != 10 {
			b.Fatalf("%d rows, %v; want the 10 pending jobs", len(res.Rows), err)
		}
	}
	read() // the swept mode's first read sweeps
	b.ReportAllocs()
	for b.Loop() {
		read()
	}
}
