package conformance

// The differential test's generator: the next operation, from the seed
// and the reference's earlier answers only.

import (
	"math"
	"slices"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

func (d *differ) intn(n int) int        { return d.rng.IntN(n) }
func (d *differ) chance(p float64) bool { return d.rng.Float64() < p }
func pick[T any](d *differ, xs []T) T   { return xs[d.rng.IntN(len(xs))] }
func (d *differ) table() *diffTable     { return pick(d, d.tables) }
func (d *differ) key(tb *diffTable) tablekit.PrimaryKey {
	if d.chance(0.02) {
		return d.badKey(tb)
	}
	return pick(d, tb.keys)
}

// badKey returns a key that does not fit tb's schema.
func (d *differ) badKey(tb *diffTable) tablekit.PrimaryKey {
	k := pick(d, tb.keys).Clone()
	switch d.intn(4) {
	case 0: // wrong type
		if k[0].Value.Type() == tablekit.TypeInteger {
			k[0].Value = tablekit.String("1")
		} else {
			k[0].Value = tablekit.Integer(1)
		}
	case 1:
		k[0].Value = tablekit.InfMin
	case 2:
		k[0].Name += "x"
	default:
		k = k.Add("extra", tablekit.Integer(0))
	}
	return k
}

func (d *differ) attr(tb *diffTable) string {
	if d.chance(0.01) {
		return tb.meta.Key[0].Name // an attribute may not carry a key column's name
	}
	return pick(d, attrColumns)
}

var (
	intPool    = []int64{0, 1, -1, 7, 42, math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1}
	deltaPool  = []int64{1, 1, 2, -1, 5, -3, 0, math.MaxInt64, math.MinInt64}
	strPool    = []string{"", "a", "b", "hello", "é", "\x00", "zz", "A"}
	doublePool = []float64{0, math.Copysign(0, -1), 1.5, -2.25, 7, 1e300, 5e-324, math.MaxFloat64, -math.MaxFloat64}
	binPool    = []string{"", "\x00", "\xff", "\x00\xff", "hello", "a"}
)

// value returns a value for column col: of every type, biased to the
// column's usual type, edge values included; rarely an invalid one.
func (d *differ) value(col string) tablekit.Value {
	if d.chance(0.01) {
		if d.chance(0.5) {
			return tablekit.Double(math.NaN())
		}
		return tablekit.String("\xff\xfe")
	}
	if col == "n" && d.chance(0.75) {
		return tablekit.Integer(pick(d, intPool))
	}
	return d.anyValue()
}

func (d *differ) anyValue() tablekit.Value {
	switch d.intn(5) {
	case 0:
		return tablekit.String(pick(d, strPool))
	case 1:
		return tablekit.Integer(pick(d, intPool))
	case 2:
		return tablekit.Double(pick(d, doublePool))
	case 3:
		return tablekit.Boolean(d.chance(0.5))
	default:
		return tablekit.BinaryString(pick(d, binPool))
	}
}

// version returns a version for a write: 0 (now), a recently used one (so
// writes meet the same cell), one near now, one on an edge of the write
// window or the TTL, or one far outside.
func (d *differ) version(tb *diffTable) int64 {
	now := d.now()
	o := tb.meta.Options
	var v int64
	switch r := d.intn(100); {
	case r < 35:
		return 0
	case r < 62 && len(d.pool) > 0:
		// Mostly one still inside the window (the clock moves on).
		valid := slices.DeleteFunc(slices.Clone(d.pool), func(v int64) bool { return rowmodel.CheckVersion(o, v, now) != "" })
		if len(valid) == 0 || d.chance(0.1) {
			valid = d.pool
		}
		v = pick(d, valid)
	case r < 88:
		v = now + int64(d.intn(10001)) - 5000
	case r < 98:
		nowS := rowmodel.Seconds(now) * 1000
		off := o.MaxVersionOffset.Milliseconds()
		edges := []int64{nowS - off, nowS - off - 1, nowS + off - 1, nowS + off}
		if o.TTL != tablekit.NoExpiry {
			ttl := o.TTL.Milliseconds()
			edges = append(edges, nowS-(ttl-1000), nowS-ttl+999)
		}
		v = pick(d, edges)
	default:
		v = pick(d, []int64{now - 3*86400_000, now + 3*86400_000, -5, 1})
	}
	if rowmodel.CheckVersion(o, v, now) == "" {
		d.remember(v)
	}
	return v
}

func (d *differ) remember(v int64) {
	if v <= 0 || slices.Contains(d.pool, v) {
		return
	}
	d.pool = append(d.pool, v)
	if len(d.pool) > 12 {
		d.pool = d.pool[1:]
	}
}

func (d *differ) filter(depth int) tablekit.Filter {
	if depth < 2 && d.chance(0.3) {
		switch d.intn(3) {
		case 0:
			return tablekit.Not(d.filter(depth + 1))
		case 1:
			return tablekit.And(d.subFilters(depth)...)
		default:
			return tablekit.Or(d.subFilters(depth)...)
		}
	}
	col := pick(d, attrColumns)
	f := tablekit.SingleColumnValue(col, tablekit.CompareOp(1+d.intn(6)), d.value(col))
	f.FilterIfMissing = d.chance(0.3)
	f.AllVersions = d.chance(0.3)
	return f
}

func (d *differ) subFilters(depth int) []tablekit.Filter {
	fs := make([]tablekit.Filter, 1+d.intn(3))
	for i := range fs {
		fs[i] = d.filter(depth + 1)
	}
	return fs
}

func (d *differ) cond() tablekit.Condition {
	var c tablekit.Condition
	if d.chance(0.5) {
		return c
	}
	c.Row = tablekit.RowExistence(d.intn(3))
	if d.chance(0.45) {
		c.Column = d.filter(1)
	}
	return c
}

func (d *differ) readSpec() readSpec {
	var r readSpec
	if d.chance(0.2) {
		r.hasCol = true
		for range 1 + d.intn(3) {
			r.cols = append(r.cols, pick(d, append(attrColumns, "zz")))
		}
	}
	if d.chance(0.3) {
		r.maxVer = 1 + d.intn(4)
		if d.chance(0.03) {
			r.maxVer = -1
		}
	}
	if d.chance(0.2) {
		now := d.now()
		var tr tablekit.TimeRange
		switch d.intn(4) {
		case 0:
			tr = tablekit.TimeRange{Start: 0, End: math.MaxInt64}
		case 1:
			if len(d.pool) > 0 {
				v := pick(d, d.pool)
				tr = tablekit.TimeRange{Start: v, End: v + 1}
				break
			}
			fallthrough
		default:
			s := now - int64(d.intn(20000))
			tr = tablekit.TimeRange{Start: s, End: s + 1 + int64(d.intn(20000))}
		}
		if d.chance(0.03) {
			tr.End = tr.Start // empty: invalid
		}
		r.tr = &tr
	}
	if d.chance(0.3) {
		r.filter = d.filter(0)
	}
	return r
}

// bound returns a range bound over tb's schema: per column a key value, a
// value between keys, InfMin or InfMax.
func (d *differ) bound(tb *diffTable) tablekit.PrimaryKey {
	var k tablekit.PrimaryKey
	for i, kc := range tb.meta.Key {
		var v tablekit.Value
		switch r := d.intn(100); {
		case r < 15:
			v = tablekit.InfMin
		case r < 30:
			v = tablekit.InfMax
		default:
			v = pick(d, tb.bounds[i])
		}
		k = k.Add(kc.Name, v)
	}
	return k
}

// rangeBounds returns start and end for the direction; rarely an empty or
// inverted range, which the client refuses.
func (d *differ) rangeBounds(tb *diffTable, backward bool) (start, end tablekit.PrimaryKey) {
	if d.chance(0.25) {
		lo, hi := tablekit.PrimaryKey(nil), tablekit.PrimaryKey(nil)
		for _, kc := range tb.meta.Key {
			lo = lo.Add(kc.Name, tablekit.InfMin)
			hi = hi.Add(kc.Name, tablekit.InfMax)
		}
		start, end = lo, hi
	} else {
		start, end = d.bound(tb), d.bound(tb)
		if tablekit.CompareKeys(start, end) > 0 {
			start, end = end, start
		}
	}
	if d.chance(0.03) {
		start, end = end, start
	}
	if backward {
		start, end = end, start
	}
	return start, end
}

// next returns the next operation, routed through one of the clients.
func (d *differ) next() operation { return d.route(d.pickOp()) }

// pickOp returns the next operation, before routing.
func (d *differ) pickOp() operation {
	if c := d.cursor; c != nil {
		if d.chance(0.6) {
			return &rangeNextOp{r: c.op, page: c.page + 1}
		}
		// Write (or read) somewhere between two pages.
		switch d.intn(5) {
		case 0:
			return d.genPut()
		case 1, 2:
			return d.genUpdate()
		case 3:
			return d.genDelete()
		default:
			return d.genBatchWrite()
		}
	}
	switch r := d.intn(100); {
	case r < 15:
		return d.genPut()
	case r < 33:
		return d.genUpdate()
	case r < 39:
		return d.genDelete()
	case r < 55:
		tb := d.table()
		return &getOp{tb: tb, key: d.key(tb), spec: d.readSpec()}
	case r < 66:
		return d.genRange()
	case r < 71:
		return d.genRows()
	case r < 77:
		return d.genBatchGet()
	case r < 85:
		if d.atomic && r >= 81 {
			return d.genAtomicWrite()
		}
		return d.genBatchWrite()
	case r < 91:
		return d.genAdvance()
	case r < 94:
		return d.genUpdateTable()
	case r < 95:
		return d.genRecreate()
	default:
		if d.ai != nil && r >= 96 {
			return d.genAutoInc() // differential_autoinc.go
		}
		tb := d.table()
		return &getOp{tb: tb, key: d.key(tb), spec: d.readSpec()}
	}
}

func (d *differ) putColumns(tb *diffTable) []tablekit.Column {
	if d.chance(0.1) {
		return nil // a key-only row
	}
	n := 1 + d.intn(4)
	cols := make([]tablekit.Column, 0, n)
	type cell struct {
		name    string
		version int64
	}
	seen := map[cell]bool{}
	for range n {
		col := d.attr(tb)
		c := tablekit.Column{Name: col, Value: d.value(col), Version: d.version(tb)}
		id := cell{c.Name, orNow(c.Version, d.now())}
		if seen[id] && d.chance(0.9) {
			continue // one cell twice is refused; only now and then
		}
		seen[id] = true
		cols = append(cols, c)
	}
	return cols
}

func (d *differ) genPut() operation {
	tb := d.table()
	return &putOp{tb: tb, key: d.key(tb), cols: d.putColumns(tb), cond: d.cond(), now: d.now()}
}

func (d *differ) genDelete() operation {
	tb := d.table()
	return &deleteOp{tb: tb, key: d.key(tb), cond: d.cond()}
}

func (d *differ) changes(tb *diffTable, key tablekit.PrimaryKey) []tablekit.Change {
	if d.chance(0.01) {
		return nil // no changes: invalid
	}
	now := d.now()
	scratch := cloneShadowRow(tb.rows[shortKey(key)])
	chs := make([]tablekit.Change, 1+d.intn(4))
	for i := range chs {
		col := d.attr(tb)
		var ch tablekit.Change
		switch r := d.intn(100); {
		case r < 22:
			ch = tablekit.Put(col, d.value(col))
		case r < 45:
			ch = tablekit.PutAt(col, d.value(col), d.version(tb))
		case r < 60:
			ch = tablekit.DeleteVersion(col, d.deleteTarget(tb, scratch[col], now))
		case r < 68:
			ch = tablekit.DeleteColumn(col)
		default:
			if d.chance(0.7) {
				col = "n"
			}
			ch = tablekit.Increment(col, pick(d, deltaPool))
		}
		chs[i] = ch
		applyChanges(scratch, chs[i:i+1], now, nil)
	}
	return chs
}

// deleteTarget picks a version for DeleteVersion: mostly one the column
// holds, sometimes another; never one whose deletion SPEC leaves open.
func (d *differ) deleteTarget(tb *diffTable, vs map[int64]bool, now int64) int64 {
	if d.chance(0.02) {
		return -1 // invalid
	}
	var cands []int64
	for v := range vs {
		cands = append(cands, v)
	}
	slices.Sort(cands)
	if len(cands) == 0 || d.chance(0.25) {
		cands = append(cands, d.pool...)
		cands = append(cands, now)
	}
	for range 8 {
		v := pick(d, cands)
		if tb.deleteVersionSafe(vs, v, now) {
			return v
		}
	}
	for v := now + 1; ; v++ {
		if !vs[v] {
			return v
		}
	}
}

func (d *differ) genUpdate() operation {
	tb := d.table()
	key := d.key(tb)
	return &updateOp{tb: tb, key: key, changes: d.changes(tb, key), cond: d.cond(), now: d.now()}
}

func (d *differ) genRange() operation {
	tb := d.table()
	d.nextID++
	o := &rangeOp{id: d.nextID, tb: tb, backward: d.chance(0.4), spec: d.readSpec()}
	o.start, o.end = d.rangeBounds(tb, o.backward)
	if d.chance(0.7) {
		o.limit = 1 + d.intn(4)
	}
	return o
}

func (d *differ) genRows() operation {
	tb := d.table()
	o := &rowsOp{tb: tb, backward: d.chance(0.4), pageSize: 1 + d.intn(3), spec: d.readSpec()}
	o.start, o.end = d.rangeBounds(tb, o.backward)
	if d.chance(0.3) {
		o.limit = 1 + d.intn(6)
	}
	return o
}

func (d *differ) genBatchGet() operation {
	o := &batchGetOp{}
	n := 1 + d.intn(5)
	if d.chance(0.02) {
		n = 0 // empty: invalid
	}
	for range n {
		tb := d.table()
		g := batchGetEntry{tb: tb, table: tb.name, key: d.key(tb), spec: d.readSpec()}
		if d.chance(0.04) {
			g.tb, g.table = nil, d.missing
		}
		o.gets = append(o.gets, g)
	}
	if len(o.gets) > 1 && d.chance(0.1) {
		o.gets = append(o.gets, o.gets[0]) // the same row twice
	}
	return o
}

func (d *differ) genBatchWrite() operation {
	o := &batchWriteOp{now: d.now()}
	n := 1 + d.intn(5)
	if d.chance(0.02) {
		n = 0 // empty: invalid
	}
	used := map[string]bool{}
	for range n {
		tb := d.table()
		key := d.key(tb)
		id := tb.name + shortKey(key)
		if used[id] {
			continue
		}
		used[id] = true
		bw := batchWriteEntry{tb: tb}
		table := tb.name
		if d.chance(0.04) {
			bw.tb, table = nil, d.missing
		}
		switch d.intn(3) {
		case 0:
			bw.w = tablekit.BatchPut(table, key, d.putColumns(tb), d.cond())
		case 1:
			bw.w = tablekit.BatchUpdate(table, key, d.changes(tb, key), d.cond())
		default:
			bw.w = tablekit.BatchDelete(table, key, d.cond())
		}
		o.writes = append(o.writes, bw)
	}
	return o
}

func (d *differ) genAdvance() operation {
	var by time.Duration
	switch r := d.intn(100); {
	case r < 45:
		by = time.Duration(1+d.intn(1500)) * time.Millisecond
	case r < 75:
		by = time.Second + time.Duration(d.intn(600_000))*time.Millisecond
	case r < 86:
		by = time.Hour + time.Duration(d.intn(7*3600))*time.Second
	case r < 95: // across the TTL of cells written about now
		by = 86400*time.Second + time.Duration(d.intn(3001)-1500)*time.Millisecond
	default: // days: past every TTL and version window of the test
		by = time.Duration(2+d.intn(9))*24*time.Hour + time.Duration(d.intn(86400))*time.Second
	}
	return &advanceOp{by: by}
}

func (d *differ) genUpdateTable() operation {
	tb := d.table()
	cur := tb.meta.Options
	var o tablekit.TableOptions
	if d.chance(0.6) {
		o.MaxVersions = 1 + d.intn(4)
	}
	if d.chance(0.5) {
		o.TTL = pick(d, []time.Duration{tablekit.NoExpiry, 86400 * time.Second, 172800 * time.Second, 7 * 86400 * time.Second, 100 * time.Second})
	}
	if d.chance(0.25) {
		o.MaxVersionOffset = pick(d, []time.Duration{3600 * time.Second, 7200 * time.Second, 86400 * time.Second, 3 * 86400 * time.Second})
	}
	next := cur
	if o.MaxVersions != 0 {
		next.MaxVersions = o.MaxVersions
	}
	if o.TTL != 0 {
		next.TTL = o.TTL
	}
	return &updateTableOp{tb: tb, opts: o, purge: tb.uncovers(next, d.now())}
}

// genRecreate drops a table and creates it with its next key layout.
func (d *differ) genRecreate() operation {
	tb := d.table()
	o := tablekit.TableOptions{MaxVersions: 1 + d.intn(3)}
	if d.chance(0.4) {
		o.TTL = pick(d, []time.Duration{86400 * time.Second, 172800 * time.Second})
	}
	return &recreateOp{tb: tb, layout: (tb.layout + 1) % len(tb.layouts), opts: resolvedOptions(o)}
}

// route sends op through one of the two clients, the second about a third
// of the time. A client whose cache of a table op uses is stale only
// writes (genStale), or first reads the table's description.
func (d *differ) route(op operation) operation {
	r, ok := op.(routed)
	if !ok {
		return op
	}
	if _, next := op.(*rangeNextOp); next {
		if tb := op.(*rangeNextOp).r.tb; !d.synced(r.client(), tb) {
			return &syncOp{through: through{r.client()}, tb: tb}
		}
		return op
	}
	v := 0
	if d.chance(0.35) {
		v = 1
	}
	switch op.(type) {
	case *updateTableOp, *recreateOp: // they read the table first, or make it
		r.setClient(v)
		return op
	}
	for _, tb := range opTables(op) {
		if d.synced(v, tb) {
			continue
		}
		switch op.(type) {
		case *putOp, *updateOp, *deleteOp:
			if d.chance(0.75) {
				return d.genStale(v, tb)
			}
		}
		return &syncOp{through: through{v}, tb: tb}
	}
	r.setClient(v)
	return op
}

// opTables returns the tables op uses.
func opTables(op operation) []*diffTable {
	switch o := op.(type) {
	case *putOp:
		return []*diffTable{o.tb}
	case *updateOp:
		return []*diffTable{o.tb}
	case *deleteOp:
		return []*diffTable{o.tb}
	case *getOp:
		return []*diffTable{o.tb}
	case *rangeOp:
		return []*diffTable{o.tb}
	case *rowsOp:
		return []*diffTable{o.tb}
	case *updateTableOp:
		return []*diffTable{o.tb}
	case *recreateOp:
		return []*diffTable{o.tb}
	case *batchGetOp:
		var out []*diffTable
		for _, g := range o.gets {
			if g.tb != nil {
				out = append(out, g.tb)
			}
		}
		return out
	case *batchWriteOp:
		var out []*diffTable
		for _, w := range o.writes {
			if w.tb != nil {
				out = append(out, w.tb)
			}
		}
		return out
	}
	return nil
}

// genStale is a write through client v, whose cache of tb is stale: only
// what SPEC decides whatever the client knows (see the top of the file).
func (d *differ) genStale(v int, tb *diffTable) operation {
	c := d.caches[v][tb]
	o := &staleWriteOp{through: through{v}, tb: tb, now: d.now()}
	keys := tb.keys
	if c.layout != tb.layout { // re-created since: a key of the shape the client knows
		keys = tb.layouts[c.layout].keys
	}
	o.key = pick(d, keys)
	var absent []string
	for _, col := range attrColumns {
		if len(tb.rows[shortKey(o.key)][col]) == 0 {
			absent = append(absent, col)
		}
	}
	switch r := d.intn(10); {
	case r < 3:
		o.kind = tablekit.WriteDelete
	case r < 6 && len(absent) > 0:
		o.kind = tablekit.WriteUpdate
		for _, col := range absent[:1+d.intn(len(absent))] {
			o.changes = append(o.changes, tablekit.Put(col, d.value(col)))
		}
	default:
		o.kind = tablekit.WritePut
		for _, col := range attrColumns {
			if d.chance(0.5) {
				o.cols = append(o.cols, tablekit.Column{Name: col, Value: d.value(col)})
			}
		}
	}
	return o
}
