package localengine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/keycodec"
	"github.com/tablekit/tablekit/rowmodel"
)

// The benchmarks compare the engine with the bare ordered map it is built on
// (tidwall/btree Map[string,*entry] with pre-encoded keys), side by side on
// the same 1,000,000-row data set, per operation:
//
//	go test -run '^$' -bench 'Local' -benchtime 200000x -count 3 ./localengine/
//
// "bare" is the map alone; "engine" calls the Backend directly with a
// prepared request (key encoding, locking, row semantics); "client" goes
// through tablekit.Client (validation, request building, errors) as a
// program does.

const benchRows = 1_000_000

var (
	benchOnce   sync.Once
	benchBare   *btree.Map[string, *entry]
	benchEngine *Engine
	benchClient *tablekit.Client
	benchMeta   *tablekit.TableMeta
	benchNow    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

func benchKey(i int) tablekit.PrimaryKey {
	return tablekit.Key("user", tablekit.String(fmt.Sprintf("user%08d", i/10))).Add("seq", tablekit.Integer(int64(i%10)))
}

// perm spreads accesses over the key space the same way for every variant.
func perm(i int) int { return int((uint64(i) * 2654435761) % benchRows) }

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		ctx := context.Background()
		benchEngine = New()
		clock := tablekit.NewManualClock(time.UnixMilli(benchNow))
		benchClient = tablekit.NewClient(benchEngine, tablekit.WithClock(clock))
		meta := tablekit.TableMeta{Name: "bench", Key: tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}}
		if err := benchClient.CreateTable(ctx, meta); err != nil {
			panic(err)
		}
		m, err := benchEngine.DescribeTable(ctx, "bench")
		if err != nil {
			panic(err)
		}
		benchMeta = m
		benchBare = new(btree.Map[string, *entry])
		tbl := benchEngine.tables["bench"]
		for i := 0; i < benchRows; i++ {
			k := benchKey(i)
			ent := &entry{key: k, row: rowmodel.Row{Cells: []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i)), Version: benchNow}}}}
			ek := string(keycodec.Encode(k))
			benchBare.Set(ek, ent)
			tbl.rows.Set(ek, ent)
		}
	})
	b.ResetTimer()
}

func BenchmarkLocalPointRead(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	keys := make([]string, 1024)
	pks := make([]tablekit.PrimaryKey, 1024)
	for i := range keys {
		pks[i] = benchKey(perm(i))
		keys[i] = string(keycodec.Encode(pks[i]))
	}
	b.Run("bare", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, ok := benchBare.Get(keys[i%1024]); !ok {
				b.Fatal("missing")
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		req := &tablekit.GetRowRequest{Meta: benchMeta, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: benchNow}
		for i := 0; b.Loop(); i++ {
			req.Key = pks[i%1024]
			if r, err := benchEngine.GetRow(ctx, req); err != nil || r == nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client", func(b *testing.B) {
		tbl := benchClient.Table("bench")
		for i := 0; b.Loop(); i++ {
			if _, ok, err := tbl.GetRow(ctx, pks[i%1024]); err != nil || !ok {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLocalInsert(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1), Version: benchNow}}
	// New keys interleave with existing ones (seq 10..19 of existing users).
	newKey := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("user", tablekit.String(fmt.Sprintf("user%08d", perm(i)/10))).Add("seq", tablekit.Integer(int64(10+i)))
	}
	b.Run("bare", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			k := newKey(i)
			ent := &entry{key: k, row: rowmodel.Row{Cells: cols}}
			benchBare.Set(string(keycodec.Encode(k)), ent)
		}
	})
	b.Run("engine", func(b *testing.B) {
		req := &tablekit.PutRowRequest{Meta: benchMeta, Columns: cols, Now: benchNow}
		for i := 0; b.Loop(); i++ {
			req.Key = newKey(i + 1<<30)
			if err := benchEngine.PutRow(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client", func(b *testing.B) {
		tbl := benchClient.Table("bench")
		for i := 0; b.Loop(); i++ {
			if err := tbl.PutRow(ctx, newKey(i+1<<31), cols); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLocalOverwrite(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(2), Version: benchNow}}
	pks := make([]tablekit.PrimaryKey, 1024)
	keys := make([]string, 1024)
	for i := range pks {
		pks[i] = benchKey(perm(i + 7))
		keys[i] = string(keycodec.Encode(pks[i]))
	}
	b.Run("bare", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			k := pks[i%1024]
			benchBare.Set(keys[i%1024], &entry{key: k, row: rowmodel.Row{Cells: cols}})
		}
	})
	b.Run("engine", func(b *testing.B) {
		req := &tablekit.PutRowRequest{Meta: benchMeta, Columns: cols, Now: benchNow}
		for i := 0; b.Loop(); i++ {
			req.Key = pks[i%1024]
			if err := benchEngine.PutRow(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client", func(b *testing.B) {
		tbl := benchClient.Table("bench")
		for i := 0; b.Loop(); i++ {
			if err := tbl.PutRow(ctx, pks[i%1024], cols); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkLocalRange100(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	starts := make([]tablekit.PrimaryKey, 1024)
	keys := make([]string, 1024)
	for i := range starts {
		starts[i] = benchKey(perm(i) % (benchRows - 200))
		keys[i] = string(keycodec.Encode(starts[i]))
	}
	end := tablekit.Key("user", tablekit.InfMax).Add("seq", tablekit.InfMax)
	b.Run("bare", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			n := 0
			rows := make([]tablekit.Row, 0, 100)
			benchBare.Ascend(keys[i%1024], func(k string, e *entry) bool {
				rows = append(rows, tablekit.Row{Key: e.key, Columns: e.row.Cells})
				n++
				return n < 100
			})
			if len(rows) != 100 {
				b.Fatal(len(rows))
			}
		}
	})
	b.Run("engine", func(b *testing.B) {
		req := &tablekit.GetRangeRequest{Meta: benchMeta, End: end, Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: benchNow}
		for i := 0; b.Loop(); i++ {
			req.Start = starts[i%1024]
			p, err := benchEngine.GetRange(ctx, req)
			if err != nil || len(p.Rows) != 100 {
				b.Fatal(err)
			}
		}
	})
	b.Run("client", func(b *testing.B) {
		tbl := benchClient.Table("bench")
		for i := 0; b.Loop(); i++ {
			res, err := tbl.GetRange(ctx, starts[i%1024], end, tablekit.Limit(100))
			if err != nil || len(res.Rows) != 100 {
				b.Fatal(err)
			}
		}
	})
}
