// Package indexbench holds the secondary-index benchmarks (SPEC §16) that
// every backend package runs against its own store, side by side in one
// run: a put with one index against one without (time and backend calls
// per write), a 100-row index read against a 100-row table range and
// against the store calls it cannot do without (its floor), and the
// backfill of AddIndex in rows per second.
package indexbench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
)

// counter counts a backend's calls (every call, optional ones included).
type counter struct {
	tablekit.Backend
	n atomic.Int64
}

func (c *counter) Unwrap() tablekit.Backend { return c.Backend }

func (c *counter) GetRow(ctx context.Context, req *tablekit.GetRowRequest) (*tablekit.Row, error) {
	c.n.Add(1)
	return c.Backend.GetRow(ctx, req)
}

func (c *counter) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	c.n.Add(1)
	return c.Backend.GetRange(ctx, req)
}

func (c *counter) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	s, ok := c.Backend.(tablekit.RangeScanner)
	if !ok {
		return nil, tablekit.ErrSkip
	}
	c.n.Add(1)
	return s.ScanRange(ctx, req, fn)
}

func (c *counter) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	c.n.Add(1)
	return c.Backend.Write(ctx, req)
}

func (c *counter) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	br, ok := c.Backend.(tablekit.BatchReader)
	if !ok {
		return nil, tablekit.ErrSkip
	}
	c.n.Add(1)
	return br.BatchGetRow(ctx, reqs)
}

func (c *counter) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	bw, ok := c.Backend.(tablekit.BatchWriter)
	if !ok {
		return nil, tablekit.ErrSkip
	}
	c.n.Add(1)
	return bw.BatchWriteRow(ctx, reqs)
}

func (c *counter) WriteIndexed(ctx context.Context, req *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	iw, ok := c.Backend.(tablekit.IndexWriter)
	if !ok {
		return nil, tablekit.ErrSkip
	}
	c.n.Add(1)
	return iw.WriteIndexed(ctx, req, entries)
}

var seq atomic.Int64

// cpuMeter reports the process's CPU time per iteration (cpu-ns/op) of the
// timed loop: on a machine shared with other work, wall time per op grows
// with the load, CPU time much less, so ratios of it are the steadier
// figure. Call start after the set-up, report after the loop.
type cpuMeter struct{ at time.Duration }

func (m *cpuMeter) start() { m.at = processCPU() }

func (m *cpuMeter) report(b *testing.B) {
	if end := processCPU(); end > 0 && b.N > 0 {
		b.ReportMetric(float64(end-m.at)/float64(b.N), "cpu-ns/op")
	}
}

// Run runs the index benchmarks on backends from open (one per
// sub-benchmark; it may return the same store).
func Run(b *testing.B, open func(b *testing.B) tablekit.Backend) { RunWire(b, open, nil) }

// RunWire is Run that also reports the service's requests per write and
// per read ("wire/write", "wire/read"): wire, when not nil, returns how
// many requests the backends from open have sent so far (an HTTP or gRPC
// counter the caller installs), so a Backend call that costs several
// requests is seen.
func RunWire(b *testing.B, open func(b *testing.B) tablekit.Backend, wire func() int64) {
	wireFrom := func() func(b *testing.B, unit string) {
		if wire == nil {
			return func(*testing.B, string) {}
		}
		start := wire()
		return func(b *testing.B, unit string) {
			b.ReportMetric(float64(wire()-start)/float64(b.N), unit)
		}
	}
	spec := tablekit.IndexSpec{Name: "by_s", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeString}}, Include: []string{"n"}}
	setup := func(b *testing.B, indexed bool) (*tablekit.Client, *counter, string) {
		ctx := context.Background()
		cnt := &counter{Backend: open(b)}
		db := tablekit.NewClient(cnt)
		name := fmt.Sprintf("ixb%d_%d", time.Now().UnixNano()%1e6, seq.Add(1))
		m := tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}
		if indexed {
			m.Indexes = []tablekit.IndexSpec{spec}
		}
		if err := db.CreateTable(ctx, m); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = db.DeleteTable(context.Background(), name) })
		return db, cnt, name
	}
	keys := make([]tablekit.PrimaryKey, 200)
	for i := range keys {
		keys[i] = tablekit.Key("id", tablekit.String(fmt.Sprintf("user%06d", i)))
	}
	for _, name := range []string{"none", "index", "floor"} {
		indexed := name != "none"
		b.Run("Put/"+name, func(b *testing.B) {
			db, cnt, table := setup(b, indexed)
			if name == "floor" {
				putFloor(b, db, cnt, table, keys)
				return
			}
			t := db.Table(table)
			ctx := context.Background()
			if err := t.PutRow(ctx, keys[0], nil); err != nil { // the metadata, outside the count
				b.Fatal(err)
			}
			cnt.n.Store(0)
			report := wireFrom()
			b.ReportAllocs()
			b.ResetTimer()
			var cpu cpuMeter
			cpu.start()
			for i := 0; b.Loop(); i++ {
				cols := []tablekit.Column{{Name: "s", Value: tablekit.String(fmt.Sprintf("s%02d", i%37))}, {Name: "n", Value: tablekit.Integer(int64(i))}}
				if err := t.PutRow(ctx, keys[i%len(keys)], cols); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "calls/write")
			report(b, "wire/write")
		})
	}
	for _, name := range []string{"range", "index", "floor"} {
		indexed := name == "index"
		b.Run("Read100/"+name, func(b *testing.B) {
			db, cnt, table := setup(b, true)
			t := db.Table(table)
			ctx := context.Background()
			var ws []tablekit.BatchWrite
			for i, k := range keys {
				ws = append(ws, tablekit.BatchPut(table, k, []tablekit.Column{{Name: "s", Value: tablekit.String(fmt.Sprintf("s%03d", i))}, {Name: "n", Value: tablekit.Integer(int64(i))}}))
			}
			if _, err := db.WriteAll(ctx, ws); err != nil {
				b.Fatal(err)
			}
			lo, hi := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
			ix := t.Index("by_s")
			ilo := tablekit.Key("s", tablekit.InfMin).Add("id", tablekit.InfMin)
			ihi := tablekit.Key("s", tablekit.InfMax).Add("id", tablekit.InfMax)
			if name == "floor" {
				floor(b, db, cnt, table)
				return
			}
			cnt.n.Store(0)
			report := wireFrom()
			b.ReportAllocs()
			b.ResetTimer()
			var cpu cpuMeter
			cpu.start()
			for b.Loop() {
				var res tablekit.RangeResult
				var err error
				if indexed {
					res, err = ix.GetRange(ctx, ilo, ihi, tablekit.Limit(100))
				} else {
					res, err = t.GetRange(ctx, lo, hi, tablekit.Limit(100))
				}
				if err != nil || len(res.Rows) != 100 {
					b.Fatalf("%d rows, %v", len(res.Rows), err)
				}
			}
			cpu.report(b)
			b.ReportMetric(float64(cnt.n.Load())/float64(b.N), "calls/read")
			report(b, "wire/read")
		})
	}
}

// putFloor is Put/floor: the store calls an indexed put cannot do
// without, made on the backend directly (no Client work): the row's put
// and one entry's put (the entry key as the Client encodes it: the
// value's bytes and 00 01, then the key's), in one WriteIndexed where the
// backend has it, else as two Writes. Put/index over it is the Client's
// share; it over Put/none is the design's.
func putFloor(b *testing.B, db *tablekit.Client, cnt *counter, table string, keys []tablekit.PrimaryKey) {
	ctx := context.Background()
	be := cnt.Backend
	em, tm := floorMetas(b, db, be, table)
	iw, together := be.(tablekit.IndexWriter)
	// The requests of every (value, key) pair the loop writes, made
	// before it (a backend keeps no request: they may be sent again).
	now := time.Now().UnixMilli()
	const pairs = 37 * 200 // Put/index's cycle: i%37 and i%200
	rows := make([]*tablekit.WriteRequest, pairs)
	entries := make([][]*tablekit.WriteRequest, pairs)
	for i := range pairs {
		s := fmt.Sprintf("s%02d", i%37)
		k := keys[i%len(keys)]
		id, _ := k[0].Value.Str()
		rows[i] = &tablekit.WriteRequest{Meta: tm, Kind: tablekit.WritePut, Key: k, Now: now,
			Columns: []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i)), Version: now}, {Name: "s", Value: tablekit.String(s), Version: now}}}
		ek := tablekit.Key("k0", tablekit.BinaryString(s+"\x00\x01"+id+"\x00\x01")).Add("k1", tablekit.BinaryString("")).
			Add("k2", tablekit.BinaryString("")).Add("k3", tablekit.BinaryString(""))
		entries[i] = []*tablekit.WriteRequest{{Meta: em, Kind: tablekit.WritePut, Key: ek, Now: now,
			Columns: []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i)), Version: now}, {Name: "t", Value: tablekit.Integer(now), Version: now}}}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu cpuMeter
	cpu.start()
	defer cpu.report(b)
	for i := 0; b.Loop(); i++ {
		row, entry := rows[i%pairs], entries[i%pairs]
		if together {
			if _, err := iw.WriteIndexed(ctx, row, entry); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if _, err := be.Write(ctx, entry[0]); err != nil {
			b.Fatal(err)
		}
		if _, err := be.Write(ctx, row); err != nil {
			b.Fatal(err)
		}
	}
}

// floor is Read100/floor: the store calls a verified index read of 100
// rows cannot do without, made on the backend directly (no Client work):
// one page of 100 entries (their keys, and the stamp's time; lent by
// ScanRange where the backend has it, as the Client reads them, else a
// GetRange page), and a read of each entry's row (its index and included
// columns), in one BatchGetRow where the backend has it, else as GetRow
// calls. Read100/index over it is
// the Client's share; it over Read100/range is the design's.
func floor(b *testing.B, db *tablekit.Client, cnt *counter, table string) {
	ctx := context.Background()
	be := cnt.Backend
	em, tm := floorMetas(b, db, be, table)
	res, err := db.Table(table).GetRange(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax), tablekit.Limit(100))
	if err != nil || len(res.Rows) != 100 {
		b.Fatalf("%d rows, %v", len(res.Rows), err)
	}
	inf := func(v tablekit.Value) tablekit.PrimaryKey {
		return tablekit.Key("k0", v).Add("k1", v).Add("k2", v).Add("k3", v)
	}
	read := tablekit.ReadSpec{Columns: []string{"n", "s"}, MaxVersions: 1}
	b.ReportAllocs()
	b.ResetTimer()
	var cpu cpuMeter
	cpu.start()
	defer cpu.report(b)
	for b.Loop() {
		now := time.Now().UnixMilli()
		page := &tablekit.GetRangeRequest{Meta: em, Start: inf(tablekit.InfMin), End: inf(tablekit.InfMax), Limit: 100,
			Read: tablekit.ReadSpec{Columns: []string{"t"}, MaxVersions: 1}, Now: now}
		if s, ok := be.(tablekit.RangeScanner); ok {
			n := 0
			if _, err := s.ScanRange(ctx, page, func(tablekit.Row) bool { n++; return true }); err != nil || n != 100 {
				b.Fatalf("entries: %d, %v", n, err)
			}
		} else if got, err := be.GetRange(ctx, page); err != nil || len(got.Rows) != 100 {
			b.Fatalf("entries: %v", err)
		}
		gets := make([]*tablekit.GetRowRequest, len(res.Rows))
		for i, r := range res.Rows {
			gets[i] = &tablekit.GetRowRequest{Meta: tm, Key: r.Key, Read: read, Now: now}
		}
		if br, ok := be.(tablekit.BatchReader); ok {
			got, err := br.BatchGetRow(ctx, gets)
			if err != nil || len(got) != len(gets) || got[0].Row == nil {
				b.Fatalf("rows: %v", err)
			}
			continue
		}
		for _, q := range gets {
			if row, err := be.GetRow(ctx, q); err != nil || row == nil {
				b.Fatalf("row %v: %v", q.Key, err)
			}
		}
	}
}

// Backfill measures AddIndex's fill of 2,000 rows in rows/s (its wait for
// other clients' metadata caches, a fixed second, left out). Each
// iteration takes over a second: run it with -benchtime 1x or 3x.
func Backfill(b *testing.B, open func(b *testing.B) tablekit.Backend) {
	spec := tablekit.IndexSpec{Name: "by_s", Columns: []tablekit.KeyColumn{{Name: "s", Type: tablekit.TypeString}}, Include: []string{"n"}}
	{
		const rows = 2000
		for b.Loop() {
			b.StopTimer()
			ctx := context.Background()
			cnt := &counter{Backend: open(b)}
			const ttl = time.Millisecond
			db := tablekit.NewClient(cnt, tablekit.WithMetaCacheTTL(ttl))
			table := fmt.Sprintf("ixf%d_%d", time.Now().UnixNano()%1e6, seq.Add(1))
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: table, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
				b.Fatal(err)
			}
			var ws []tablekit.BatchWrite
			for i := range rows {
				ws = append(ws, tablekit.BatchPut(table, tablekit.Key("id", tablekit.String(fmt.Sprintf("r%06d", i))), []tablekit.Column{{Name: "s", Value: tablekit.String(fmt.Sprintf("s%03d", i%100))}}))
			}
			if _, err := db.WriteAll(ctx, ws); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start := time.Now()
			err := db.AddIndex(ctx, table, spec)
			fill := time.Since(start) - ttl - time.Second // AddIndex's wait for the other clients' caches
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(rows/fill.Seconds(), "rows/s")
			if err := db.DeleteTable(ctx, table); err != nil && !errors.Is(err, tablekit.ErrTableNotFound) {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
}

// floorMetas returns what the floors write and read with: the backend's
// own metadata of the table's first index's entry table (named by the
// Client's), and of the table.
func floorMetas(b *testing.B, db *tablekit.Client, be tablekit.Backend, table string) (em, tm *tablekit.TableMeta) {
	ctx := context.Background()
	m, err := db.DescribeTable(ctx, table)
	if err != nil {
		b.Fatal(err)
	}
	em, err = be.DescribeTable(ctx, m.Indexes[0].Storage)
	if err != nil {
		b.Fatal(err)
	}
	tm, err = be.DescribeTable(ctx, table)
	if err != nil {
		b.Fatal(err)
	}
	return em, tm
}
