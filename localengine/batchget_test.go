package localengine_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/batchcheck"
	"github.com/tablekit/tablekit/localengine"
)

// BatchGetRow returns what GetRow returns, request by request, across
// many spans (8 rows each: a batch crosses them).
func TestBatchGetRowMatchesGetRow(t *testing.T) {
	batchcheck.Run(t, localengine.NewWithSpanRows(8))
}

// BatchGetRow while writers put and delete rows, splitting and merging
// spans of 8 rows: every row it returns is one a write stored (its two
// cells from the same write) under the key asked for.
func TestBatchGetRowWhileWriting(t *testing.T) {
	ctx := context.Background()
	e := localengine.NewWithSpanRows(8)
	db := tablekit.NewClient(e)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	m, err := e.DescribeTable(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	const rows = 300
	key := func(i int) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.Integer(int64(i))) }
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			for v := int64(1); !stop.Load(); v++ {
				req := &tablekit.WriteRequest{Meta: m, Kind: tablekit.WritePut, Key: key(rnd.IntN(rows)), Now: 1,
					Columns: []tablekit.Column{{Name: "a", Value: tablekit.Integer(v), Version: 1}, {Name: "b", Value: tablekit.Integer(v), Version: 1}}}
				if rnd.IntN(3) == 0 {
					req.Kind, req.Columns = tablekit.WriteDelete, nil
				}
				if _, err := e.Write(ctx, req); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	rnd := rand.New(rand.NewPCG(9, 9))
	found := 0
	for range 2000 {
		reqs := make([]*tablekit.GetRowRequest, tablekit.MaxBatchGet)
		for i := range reqs {
			reqs[i] = &tablekit.GetRowRequest{Meta: m, Key: key(rnd.IntN(rows)), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: 1}
		}
		got, err := e.BatchGetRow(ctx, reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if g.Err != nil {
				t.Fatal(g.Err)
			}
			if g.Row == nil {
				continue
			}
			found++
			if !g.Row.Key.Equal(reqs[i].Key) || len(g.Row.Columns) != 2 || g.Row.Columns[0].Value != g.Row.Columns[1].Value {
				t.Fatalf("row %v: %v", reqs[i].Key, g.Row)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if found == 0 {
		t.Fatal("no row found")
	}
}
