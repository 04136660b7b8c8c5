package localengine

// Benchmarks of the engine against the bare ordered map it is built on, at
// 1,000,000 rows, per operation (results and how they were taken:
// BENCHMARKS.md):
//
//	go test -run '^$' -bench Local -benchtime 200000x -count 3 -benchmem ./localengine/
//
// The data set: 1,000,000 rows keyed (user String "user%08d", seq Integer
// 0-9), each with one Integer cell, in a table with the default options (no
// TTL, MaxVersions 1). Each side of a benchmark reads and writes its own
// 16,384 keys (or range starts), scattered over the whole key space by a
// multiplicative hash, so that most accesses miss the CPU caches as they do
// on a large table, and no side reads what another has just brought into
// cache.
//
// Every operation is done by these sides, on the same rows:
//
//   - map: a tidwall/btree Map[string,*bareEntry] alone, keys encoded in
//     advance, nothing copied. The floor, not a store: a caller handed the
//     map's own slices could change the stored rows through them.
//   - bare: what any store built on that map minimally must do for the same
//     request, given a tablekit.PrimaryKey and cells. A point read encodes
//     the key (codec.AppendKey, into a stack buffer), looks it up and returns a copy
//     of the row's cells. A 100-row range read encodes the start key, walks
//     100 entries and returns them as []tablekit.Row whose keys and cells are
//     copies the caller owns, in three exactly sized allocations (rows, key
//     parts, cells). A write encodes the key into a new string and stores a
//     new entry holding copies of the caller's key and cells (a store must
//     not keep what the caller may change). No validation, no locking, no
//     visibility rules, no conditions.
//   - engine: the Engine's Backend method with a prepared request, which is
//     what tablekit.Client calls: table lookup, locking, key encoding, row
//     semantics (visibility, MaxVersions, conditions), result building. The
//     engine keeps a write request's key rather than copying it: the request
//     is handed over, and the client copies the user's key when it builds
//     one (that copy is in the client's figures).
//   - client: tablekit.Client as a program calls it, with the system clock:
//     meta cache, validation, versions, request building, then the engine.
//
// Each side runs alone (<Op>/<side>: ns/op, B/op, allocs/op, and cpu-ns/op,
// the CPU time the whole process used per operation, the garbage collector's
// background work included, which other processes on the machine do not
// inflate as they do the elapsed time), and all sides run together in
// <Op>/interleaved: one loop that alternates blocks of
// benchBlock operations of each side, timed apart, the side going first
// rotating from block to block, so the noise of a shared machine (other
// processes, GC cycles whichever side started them) falls on every side
// alike. It reports each side's mean as <side>-ns/op and the ratios
// engine/bare and client/bare; its ns/op, B/op and allocs/op are the sums
// over the sides.
//
// Inserts add new keys between existing ones (seq 10 and up of existing
// users); the map and bare sides insert into one map, the engine and client
// sides into the engine's table. Untimed work: building the keys of new rows
// (and, for the map side, their entries), and deleting the inserted rows
// after each run so that every run starts from the same 1,000,000 rows.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/tidwall/btree"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/rowmodel"
)

const (
	benchRows  = 1_000_000
	benchKeys  = 1 << 16 // keys (range starts) prepared; each side uses a quarter
	benchSides = 6
	benchBlock = 64 // operations per side between switches in the interleaved runs
)

// The sides' numbers pick their share of the prepared keys.
const (
	sideMap = iota
	sideBare
	sideEngine
	sideClient
	sideScan       // tablekit.Table.Scan, the no-copy range read
	sideEngineScan // Engine.ScanRange
)

var (
	benchOnce   sync.Once
	benchBare   *btree.Map[string, *bareEntry] // the map and bare sides' map
	benchEngine *Engine
	benchTable  *table // the engine's table, for untimed cleanup
	benchClient *tablekit.Table
	benchMeta   *tablekit.TableMeta
	benchNow    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	benchPKs    []tablekit.PrimaryKey // scattered existing keys
	benchEnc    []string              // their encodings
	benchStarts []tablekit.PrimaryKey // scattered range starts, 100+ rows below the end
	benchStEnc  []string
	benchEnd    = tablekit.Key("user", tablekit.InfMax).Add("seq", tablekit.InfMax)
)

func benchKey(i int) tablekit.PrimaryKey {
	return tablekit.Key("user", tablekit.String(fmt.Sprintf("user%08d", i/10))).Add("seq", tablekit.Integer(int64(i%10)))
}

// perm spreads accesses over the key space (a bijection on [0, benchRows)).
func perm(i int) int { return int((uint64(i) * 2654435761) % benchRows) }

// pick returns side s's i-th index into the prepared keys: each side cycles
// through its own share of them.
func pick(s, i int) int { return (i*benchSides + s) % benchKeys }

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		ctx := context.Background()
		benchEngine = New()
		client := tablekit.NewClient(benchEngine)
		meta := tablekit.TableMeta{Name: "bench", Key: tablekit.KeySchema{{Name: "user", Type: tablekit.TypeString}, {Name: "seq", Type: tablekit.TypeInteger}}}
		if err := client.CreateTable(ctx, meta); err != nil {
			panic(err)
		}
		m, err := benchEngine.DescribeTable(ctx, "bench")
		if err != nil {
			panic(err)
		}
		benchMeta = m
		benchClient = client.Table("bench")
		benchBare = new(btree.Map[string, *bareEntry])
		benchTable = benchEngine.tables["bench"]
		for i := 0; i < benchRows; i++ {
			k := benchKey(i)
			ent := &bareEntry{key: k, row: rowmodel.Row{Cells: []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i)), Version: benchNow}}}}
			ek := string(codec.EncodeKey(k))
			benchBare.Set(ek, ent)
			stored := pack(k, &ent.row)
			benchTable.storeLocked(stored.key(), stored, true)
		}
		benchPKs = make([]tablekit.PrimaryKey, benchKeys)
		benchEnc = make([]string, benchKeys)
		benchStarts = make([]tablekit.PrimaryKey, benchKeys)
		benchStEnc = make([]string, benchKeys)
		for i := range benchKeys {
			benchPKs[i] = benchKey(perm(i))
			benchEnc[i] = string(codec.EncodeKey(benchPKs[i]))
			benchStarts[i] = benchKey(perm(i) % (benchRows - 200))
			benchStEnc[i] = string(codec.EncodeKey(benchStarts[i]))
		}
		runtime.GC()
	})
}

// bareEntry is the bare map's row: its key and cells as they were given.
type bareEntry struct {
	key tablekit.PrimaryKey
	row rowmodel.Row
}

// A side is one way of doing the benchmarked operation.
type side struct {
	name string
	prep func(from, to int) // untimed: readies iterations [from, to); may be nil
	op   func(i int)
	done func(n int) // untimed: after n iterations; may be nil
}

// runSides runs each side alone, then all of them interleaved.
func runSides(b *testing.B, sides ...side) {
	for _, s := range sides {
		b.Run(s.name, func(b *testing.B) { runAlone(b, s) })
	}
	b.Run("interleaved", func(b *testing.B) { runInterleaved(b, sides) })
}

func runAlone(b *testing.B, s side) {
	var cpu time.Duration
	cpuOK := true
	b.ResetTimer()
	for from := 0; from < b.N; from += benchBlock {
		to := min(from+benchBlock, b.N)
		if s.prep != nil {
			b.StopTimer()
			s.prep(from, to)
			b.StartTimer()
		}
		c0, ok0 := benchstat.ProcessCPU(), benchstat.HasProcessCPU
		for i := from; i < to; i++ {
			s.op(i)
		}
		c1, ok1 := benchstat.ProcessCPU(), benchstat.HasProcessCPU
		cpu += c1 - c0
		cpuOK = cpuOK && ok0 && ok1
	}
	b.StopTimer()
	if s.done != nil {
		s.done(b.N)
	}
	if cpuOK {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func runInterleaved(b *testing.B, sides []side) {
	spent := make([]time.Duration, len(sides))
	b.ResetTimer()
	for blk, from := 0, 0; from < b.N; blk, from = blk+1, from+benchBlock {
		to := min(from+benchBlock, b.N)
		for j := range sides {
			k := (blk + j) % len(sides)
			s := &sides[k]
			if s.prep != nil {
				s.prep(from, to)
			}
			t0 := time.Now()
			for i := from; i < to; i++ {
				s.op(i)
			}
			spent[k] += time.Since(t0)
		}
	}
	b.StopTimer()
	for _, s := range sides {
		if s.done != nil {
			s.done(b.N)
		}
	}
	var sum time.Duration
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
	for k, s := range sides {
		sum += spent[k]
		b.ReportMetric(per(spent[k]), s.name+"-ns/op")
	}
	b.ReportMetric(per(sum), "ns/op") // the timed work alone, without prep
	bare := spent[slices.IndexFunc(sides, func(s side) bool { return s.name == "bare" })]
	floor := spent[slices.IndexFunc(sides, func(s side) bool { return s.name == "map" })]
	for k, s := range sides {
		switch s.name {
		case "engine", "client":
			b.ReportMetric(float64(spent[k])/float64(bare), s.name+"/bare")
		case "scan", "enginescan":
			b.ReportMetric(float64(spent[k])/float64(floor), s.name+"/map")
		}
	}
}

// bareKey encodes k into buf for a lookup; the map keeps no lookup key.
func bareKey(buf []byte, k tablekit.PrimaryKey) string {
	e := codec.AppendKey(buf[:0], k)
	return unsafe.String(unsafe.SliceData(e), len(e))
}

// bareGet is the bare store's point read.
func bareGet(k tablekit.PrimaryKey) ([]tablekit.Column, bool) {
	var buf [64]byte
	ent, ok := benchBare.Get(bareKey(buf[:], k))
	if !ok {
		return nil, false
	}
	return slices.Clone(ent.row.Cells), true
}

// barePut is the bare store's write.
func barePut(k tablekit.PrimaryKey, cells []tablekit.Column) {
	var buf [64]byte
	ek := string(codec.AppendKey(buf[:0], k))
	benchBare.Set(ek, &bareEntry{key: k.Clone(), row: rowmodel.Row{Cells: slices.Clone(cells)}})
}

// bareRange is the bare store's range read of n rows from start; ents is
// scratch space the store would keep between calls.
func bareRange(start tablekit.PrimaryKey, n int, ents *[]*bareEntry) []tablekit.Row {
	var buf [64]byte
	es := (*ents)[:0]
	nk, nc := 0, 0
	benchBare.Ascend(bareKey(buf[:], start), func(_ string, e *bareEntry) bool {
		es = append(es, e)
		nk += len(e.key)
		nc += len(e.row.Cells)
		return len(es) < n
	})
	rows := make([]tablekit.Row, len(es))
	keys := make(tablekit.PrimaryKey, 0, nk)
	cells := make([]tablekit.Column, 0, nc)
	for i, e := range es {
		k, c := len(keys), len(cells)
		keys = append(keys, e.key...)
		cells = append(cells, e.row.Cells...)
		rows[i] = tablekit.Row{Key: keys[k:len(keys):len(keys)], Columns: cells[c:len(cells):len(cells)]}
	}
	clear(es)
	*ents = es
	return rows
}

func BenchmarkLocalPointRead(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	req := &tablekit.GetRowRequest{Meta: benchMeta, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: benchNow}
	runSides(b,
		side{name: "map", op: func(i int) {
			if _, ok := benchBare.Get(benchEnc[pick(sideMap, i)]); !ok {
				b.Fatal("missing")
			}
		}},
		side{name: "bare", op: func(i int) {
			if c, ok := bareGet(benchPKs[pick(sideBare, i)]); !ok || len(c) != 1 {
				b.Fatal("missing")
			}
		}},
		side{name: "engine", op: func(i int) {
			req.Key = benchPKs[pick(sideEngine, i)]
			if r, err := benchEngine.GetRow(ctx, req); err != nil || r == nil || len(r.Columns) != 1 {
				b.Fatal("missing", err)
			}
		}},
		side{name: "client", op: func(i int) {
			if r, ok, err := benchClient.GetRow(ctx, benchPKs[pick(sideClient, i)]); err != nil || !ok || len(r.Columns) != 1 {
				b.Fatal("missing", err)
			}
		}},
	)
}

// newKey is side s's i-th new key: seq 10 and up of an existing user.
func newKey(s, i int) tablekit.PrimaryKey {
	return tablekit.PrimaryKey{
		{Name: "user", Value: tablekit.String(fmt.Sprintf("user%08d", perm(i*benchSides+s)/10))},
		{Name: "seq", Value: tablekit.Integer(int64(10 + i*benchSides + s))},
	}
}

// newKeys prepares the new keys of side s's iterations [from, to).
func newKeys(s int, keys *[]tablekit.PrimaryKey) func(from, to int) {
	return func(from, to int) {
		*keys = (*keys)[:0]
		for i := from; i < to; i++ {
			*keys = append(*keys, newKey(s, i))
		}
	}
}

// dropNew deletes side s's first n new keys from m, untimed.
func dropNew(s int, del func(k string)) func(n int) {
	return func(n int) {
		for i := range n {
			del(string(codec.EncodeKey(newKey(s, i))))
		}
		runtime.GC()
	}
}

func BenchmarkLocalInsert(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1), Version: benchNow}}
	clientCols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}} // versioned by the client's clock
	bareMap := func(k string) { benchBare.Delete(k) }
	engineMap := func(k string) {
		benchTable.lock()
		benchTable.storeLocked(k, entry{}, false)
		benchTable.unlock()
	}
	var mapKeys []string
	var mapEnts []*bareEntry
	var bareKeys, engineKeys, clientKeys []tablekit.PrimaryKey
	req := &tablekit.WriteRequest{Meta: benchMeta, Kind: tablekit.WritePut, Columns: cols, Now: benchNow}
	runSides(b,
		side{name: "map",
			prep: func(from, to int) {
				mapKeys, mapEnts = mapKeys[:0], mapEnts[:0]
				for i := from; i < to; i++ {
					k := newKey(sideMap, i)
					mapKeys = append(mapKeys, string(codec.EncodeKey(k)))
					mapEnts = append(mapEnts, &bareEntry{key: k, row: rowmodel.Row{Cells: slices.Clone(cols)}})
				}
			},
			op:   func(i int) { benchBare.Set(mapKeys[i%benchBlock], mapEnts[i%benchBlock]) },
			done: dropNew(sideMap, bareMap)},
		side{name: "bare",
			prep: newKeys(sideBare, &bareKeys),
			op:   func(i int) { barePut(bareKeys[i%benchBlock], cols) },
			done: dropNew(sideBare, bareMap)},
		side{name: "engine",
			prep: newKeys(sideEngine, &engineKeys),
			op: func(i int) {
				req.Key = engineKeys[i%benchBlock]
				if _, err := benchEngine.Write(ctx, req); err != nil {
					b.Fatal(err)
				}
			},
			done: dropNew(sideEngine, engineMap)},
		side{name: "client",
			prep: newKeys(sideClient, &clientKeys),
			op: func(i int) {
				if err := benchClient.PutRow(ctx, clientKeys[i%benchBlock], clientCols); err != nil {
					b.Fatal(err)
				}
			},
			done: dropNew(sideClient, engineMap)},
	)
}

func BenchmarkLocalOverwrite(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(2), Version: benchNow}}
	clientCols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(2)}}
	req := &tablekit.WriteRequest{Meta: benchMeta, Kind: tablekit.WritePut, Columns: cols, Now: benchNow}
	mapEnt := func(j int) *bareEntry { // the map side's prepared entries, one per key
		return &bareEntry{key: benchPKs[j], row: rowmodel.Row{Cells: slices.Clone(cols)}}
	}
	mapEnts := make([]*bareEntry, benchKeys)
	for i := 0; i < benchKeys/benchSides; i++ {
		j := pick(sideMap, i)
		mapEnts[j] = mapEnt(j)
	}
	runSides(b,
		side{name: "map", op: func(i int) {
			j := pick(sideMap, i)
			benchBare.Set(benchEnc[j], mapEnts[j])
		}},
		side{name: "bare", op: func(i int) { barePut(benchPKs[pick(sideBare, i)], cols) }},
		side{name: "engine", op: func(i int) {
			req.Key = benchPKs[pick(sideEngine, i)]
			if _, err := benchEngine.Write(ctx, req); err != nil {
				b.Fatal(err)
			}
		}},
		side{name: "client", op: func(i int) {
			if err := benchClient.PutRow(ctx, benchPKs[pick(sideClient, i)], clientCols); err != nil {
				b.Fatal(err)
			}
		}},
	)
}

func BenchmarkLocalRange100(b *testing.B) {
	benchSetup(b)
	ctx := context.Background()
	req := &tablekit.GetRangeRequest{Meta: benchMeta, End: benchEnd, Limit: 100, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: benchNow}
	sreq := new(tablekit.GetRangeRequest)
	*sreq = *req
	var ents []*bareEntry
	runSides(b,
		side{name: "map", op: func(i int) {
			n := 0
			benchBare.Ascend(benchStEnc[pick(sideMap, i)], func(_ string, e *bareEntry) bool {
				n++
				return n < 100
			})
			if n != 100 {
				b.Fatal(n)
			}
		}},
		side{name: "bare", op: func(i int) {
			if rows := bareRange(benchStarts[pick(sideBare, i)], 100, &ents); len(rows) != 100 {
				b.Fatal(len(rows))
			}
		}},
		side{name: "engine", op: func(i int) {
			req.Start = benchStarts[pick(sideEngine, i)]
			if p, err := benchEngine.GetRange(ctx, req); err != nil || len(p.Rows) != 100 {
				b.Fatal(err)
			}
		}},
		side{name: "client", op: func(i int) {
			res, err := benchClient.GetRange(ctx, benchStarts[pick(sideClient, i)], benchEnd, tablekit.Limit(100))
			if err != nil || len(res.Rows) != 100 {
				b.Fatal(err)
			}
		}},
		side{name: "scan", op: func(i int) {
			n := 0
			for r, err := range benchClient.Scan(ctx, benchStarts[pick(sideScan, i)], benchEnd, tablekit.Limit(100)) {
				if err != nil || len(r.Columns) != 1 {
					b.Fatal(err)
				}
				n++
			}
			if n != 100 {
				b.Fatal(n)
			}
		}},
		side{name: "enginescan", op: func(i int) {
			sreq.Start = benchStarts[pick(sideEngineScan, i)]
			n := 0
			if _, err := benchEngine.ScanRange(ctx, sreq, func(r tablekit.Row) bool { n += len(r.Columns); return true }); err != nil || n != 100 {
				b.Fatal(n, err)
			}
		}},
	)
}
