package localengine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// BenchmarkUpdateInPlace measures the update path of issue 30: YCSB's
// update (one field of a 10 × 100-byte row rewritten, 5,000 rows), through
// the Client ("client") and straight to the engine's Write ("engine"), on
// two engines side by side in one run: "inplace" (this engine: the changed
// cell rewritten, one B-tree walk) and "general" (localengine.NewGeneral:
// every update decoded, merged by rowmodel's Update and packed whole, as
// before). The sides alternate in 8 phases, order rotating; every update is
// timed, and the benchmark reports each side's median latency (p50-ns) and
// their ratio (inplace/general), which a loaded machine moves far less than
// the mean.
//
//	go test -run '^$' -bench UpdateInPlace -benchtime 200000x -count 3 ./localengine/
func BenchmarkUpdateInPlace(b *testing.B) {
	for _, via := range []string{"client", "engine"} {
		b.Run(via, func(b *testing.B) {
			ctx := context.Background()
			sides := []*updateSide{newUpdateSide(b, "inplace", localengine.New()), newUpdateSide(b, "general", localengine.NewGeneral())}
			const phases = 8
			per := max(b.N/phases, 1)
			b.ResetTimer()
			for p := range phases {
				for j := range sides {
					s := sides[(p+j)%len(sides)]
					for i := range per {
						s.update(ctx, b, via == "engine", i)
					}
				}
			}
			b.StopTimer()
			p50 := make([]float64, len(sides))
			for i, s := range sides {
				slices.Sort(s.lat)
				p50[i] = float64(s.lat[len(s.lat)/2])
				b.ReportMetric(p50[i], s.name+"-p50-ns")
			}
			b.ReportMetric(p50[0]/p50[1], "inplace/general")
		})
	}
}

// updateSide is one engine of BenchmarkUpdateInPlace, its table loaded.
type updateSide struct {
	name  string
	e     *localengine.Engine
	t     *tablekit.Table
	meta  *tablekit.TableMeta
	keys  []tablekit.PrimaryKey
	names []string
	val   []byte
	lat   []time.Duration
	n     int
}

func newUpdateSide(b *testing.B, name string, e *localengine.Engine) *updateSide {
	ctx := context.Background()
	db := tablekit.NewClient(e)
	b.Cleanup(func() { db.Close() })
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "usertable", Key: tablekit.KeySchema{{Name: "key", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}}); err != nil {
		b.Fatal(err)
	}
	s := &updateSide{name: name, e: e, t: db.Table("usertable"), val: make([]byte, 100)}
	const records, fields = 5000, 10
	for f := range fields {
		s.names = append(s.names, fmt.Sprintf("field%d", f))
	}
	for i := range records {
		k := tablekit.Key("key", tablekit.String(fmt.Sprintf("user%d", i)))
		s.keys = append(s.keys, k)
		cols := make([]tablekit.Column, fields)
		for f := range cols {
			cols[f] = tablekit.Column{Name: s.names[f], Value: tablekit.Binary(s.val)}
		}
		if err := s.t.PutRow(ctx, k, cols); err != nil {
			b.Fatal(err)
		}
	}
	var err error
	if s.meta, err = e.DescribeTable(ctx, "usertable"); err != nil {
		b.Fatal(err)
	}
	return s
}

// update rewrites one field of a row (the i-th of the phase, spread over
// the table), timing it.
func (s *updateSide) update(ctx context.Context, b *testing.B, engine bool, i int) {
	k, f := s.keys[(i*7919)%len(s.keys)], s.names[s.n%len(s.names)]
	s.n++
	start := time.Now()
	var err error
	if engine {
		now := start.UnixMilli()
		_, err = s.e.Write(ctx, &tablekit.WriteRequest{Meta: s.meta, Kind: tablekit.WriteUpdate, Key: k, Now: now,
			Changes: []tablekit.Change{{Kind: tablekit.ChangePut, Column: f, Value: tablekit.Binary(s.val), Version: now}}})
	} else {
		_, err = s.t.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put(f, tablekit.Binary(s.val))})
	}
	s.lat = append(s.lat, time.Since(start))
	if err != nil {
		b.Fatal(err)
	}
}
