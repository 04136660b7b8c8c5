package tablekit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// TestIndexBackfill adds an index to a table of 10,000 rows (2,000 with
// -short) while 4 writers move rows in and out of it; once AddIndex has
// returned and the writers stopped, the index holds exactly the rows (an
// index built from scratch would) and no entry is missing.
func TestIndexBackfill(t *testing.T) {
	for name, mk := range ixBackends(t) {
		t.Run(name, func(t *testing.T) { testIndexBackfill(t, mk()) })
	}
}

func testIndexBackfill(t *testing.T, b tablekit.Backend) {
	ctx := context.Background()
	rows := 10000
	if testing.Short() {
		rows = 2000
	}
	opts := []tablekit.ClientOption{tablekit.WithMetaCacheTTL(50 * time.Millisecond)}
	db := tablekit.NewClient(b, opts...)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	var ws []tablekit.BatchWrite
	for i := range rows {
		cols := []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i))}}
		if i%3 != 0 {
			cols = append(cols, tablekit.Column{Name: "s", Value: tablekit.String(fmt.Sprintf("s%d", i%17))})
		}
		ws = append(ws, tablekit.BatchPut("t", tablekit.Key("id", tablekit.Integer(int64(i))), cols))
	}
	if _, err := db.WriteAll(ctx, ws); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 4 {
		wc := tablekit.NewClient(b, opts...) // another client: learns of the index from its cache's expiry
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			tbl := wc.Table("t")
			for !stop.Load() {
				key := tablekit.Key("id", tablekit.Integer(int64(rng.IntN(rows))))
				var err error
				switch rng.IntN(3) {
				case 0:
					_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("s", tablekit.String(fmt.Sprintf("w%d", rng.IntN(50))))})
				case 1:
					_, err = tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.DeleteColumn("s")})
				case 2:
					err = tbl.DeleteRow(ctx, key)
				}
				if err != nil {
					t.Error(err)
					return
				}
				writes.Add(1)
			}
		})
	}
	start := time.Now()
	err := db.AddIndex(ctx, "t", tablekit.IndexSpec{Name: "by_s", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeString}}, Include: []string{"n"}})
	took := time.Since(start)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("AddIndex of %d rows took %v (with the cache wait), %d writes ran meanwhile", rows, took, writes.Load())
	if writes.Load() == 0 {
		t.Fatal("no write ran during the backfill")
	}
	var got, want []string
	for r, err := range db.Table("t").Index("by_s").Rows(ctx, tablekit.Key("s", tablekit.InfMin).Add("id", tablekit.InfMin), tablekit.Key("s", tablekit.InfMax).Add("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		n, _ := r.Get("n")
		got = append(got, r.Key.String()+" "+n.String())
	}
	for r, err := range db.Table("t").Rows(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := r.Get("s"); ok {
			n, _ := r.Get("n")
			want = append(want, tablekit.Key("s", s).Add("id", r.Key[0].Value).String()+" "+n.String())
		}
	}
	slices.Sort(want)
	slices.Sort(got) // the index's order is checked by conformance; here the sets
	if !slices.Equal(got, want) {
		t.Fatalf("index after the backfill has %d rows, the table says %d", len(got), len(want))
	}
	rep, err := db.Reindex(ctx, "t", "by_s", true)
	if err != nil || rep.Missing != 0 {
		t.Fatalf("Reindex verify: %+v, %v", rep, err)
	}
}
