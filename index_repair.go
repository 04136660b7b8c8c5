package tablekit

import (
	"context"
	"errors"
)

// ReindexReport is what [Client.Reindex] found and did.
type ReindexReport struct {
	Rows    int // rows of the table read
	Entries int // entries found
	Missing int // entries the rows need that were absent (put, unless verifying)
	Extra   int // entries no row needs (removed when old enough, unless verifying)
	Removed int
	Added   int
}

// Exact reports whether the index held exactly the entries the rows need.
func (r ReindexReport) Exact() bool { return r.Missing == 0 && r.Extra == 0 }

// Reindex compares an index with the table's rows and repairs it: it puts
// the entries the rows need and removes extra ones older than the grace
// period ([WithIndexGrace]); with verify, it only reports. Writers may run
// meanwhile. Memory: one string per entry.
func (c *Client) Reindex(ctx context.Context, table, index string, verify bool) (ReindexReport, error) {
	const op = "Reindex"
	if err := c.checkOpen(op, table); err != nil {
		return ReindexReport{}, err
	}
	m, err := c.tableMeta(ctx, table)
	if err != nil {
		return ReindexReport{}, annotate(err, op, table)
	}
	rep, err := c.reindex(ctx, m, index, verify)
	return rep, annotate(err, op, table)
}

type stamp struct{ t, n int64 }

// pages calls fn with each page of the whole table m, in key order.
func (c *Client) pages(ctx context.Context, m *TableMeta, read ReadSpec, fn func([]Row) error) error {
	start := make(PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		start[i] = KeyPart{Name: kc.Name, Value: InfMin}
	}
	end := make(PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		end[i] = KeyPart{Name: kc.Name, Value: InfMax}
	}
	for start != nil {
		resp, err := c.b.GetRange(ctx, &GetRangeRequest{Meta: m, Start: start, End: end, Limit: MaxPageRows, Read: read, Now: c.now()})
		if err != nil {
			return err
		}
		if err := fn(resp.Rows); err != nil {
			return err
		}
		start = resp.Next
	}
	return nil
}

// rowEntries returns the encoded index keys row needs: one per combination
// of its visible values of ix's columns (read with every visible version).
func rowEntries(m *TableMeta, ix *IndexSpec, ks KeySchema, row *Row) []string {
	vals := make([][]Value, len(ix.Columns))
	for j, col := range ix.Columns {
		if kv, ok := row.Key.Get(col.Name); ok {
			vals[j] = []Value{kv}
			continue
		}
		for _, cell := range row.Versions(col.Name) {
			if cell.Value.typ == col.Type {
				vals[j] = append(vals[j], cell.Value)
			}
		}
		if len(vals[j]) == 0 {
			return nil
		}
	}
	var tail []byte
	for _, kc := range ks[len(ix.Columns):] {
		kv, _ := row.Key.Get(kc.Name)
		tail = appendIndexValue(tail, kv)
	}
	var out []string
	idx := make([]int, len(vals))
	for {
		var b []byte
		for j, k := range idx {
			b = appendIndexValue(b, vals[j][k])
		}
		if b = append(b, tail...); len(b) <= MaxIndexKeySize {
			out = append(out, string(b))
		}
		j := len(idx) - 1
		for ; j >= 0; j-- {
			if idx[j]++; idx[j] < len(vals[j]) {
				break
			}
			idx[j] = 0
		}
		if j < 0 {
			return out
		}
	}
}

func (c *Client) reindex(ctx context.Context, m *TableMeta, index string, verify bool) (ReindexReport, error) {
	var rep ReindexReport
	ix, verr := indexOf(m, index)
	if verr != nil {
		return rep, verr
	}
	ks := indexKeySchema(m, ix)
	sm := storageMeta(ix.Storage)
	existing := map[string]stamp{}
	err := c.pages(ctx, sm, ReadSpec{Columns: []string{"n", "t"}, MaxVersions: 1}, func(rows []Row) error {
		for _, e := range rows {
			var s stamp
			if v, ok := e.Get("t"); ok {
				s.t, _ = v.Int()
			}
			if v, ok := e.Get("n"); ok {
				s.n, _ = v.Int()
			}
			existing[entryBytes(e.Key)] = s
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	rep.Entries = len(existing)
	cols := []string{}
	for _, a := range attrColumns(m, ix) {
		cols = append(cols, a.Name)
	}
	read := ReadSpec{Columns: cols, MaxVersions: max(m.Options.MaxVersions, 1)}
	needed := map[string]bool{}
	err = c.pages(ctx, m, read, func(rows []Row) error {
		var puts []*WriteRequest
		now := c.now()
		for i := range rows {
			rep.Rows++
			for _, b := range rowEntries(m, ix, ks, &rows[i]) {
				needed[b] = true
				if _, ok := existing[b]; !ok {
					rep.Missing++
					puts = append(puts, entryPut(ix.Storage, []byte(b), now))
				}
			}
		}
		if verify || len(puts) == 0 {
			return nil
		}
		rep.Added += len(puts)
		return c.putEntries(ctx, puts)
	})
	if err != nil {
		return rep, err
	}
	cutoff := c.now() - c.grace().Milliseconds()
	for b, s := range existing {
		if needed[b] {
			continue
		}
		rep.Extra++
		if verify || s.t > cutoff {
			continue
		}
		removed, err := c.removeEntry(ctx, m, ix, ks, b, s, read)
		if err != nil {
			return rep, err
		}
		if removed {
			rep.Removed++
		}
	}
	return rep, nil
}

// removeEntry deletes the entry b if its row still does not need it and its
// stamp is still s.
func (c *Client) removeEntry(ctx context.Context, m *TableMeta, ix *IndexSpec, ks KeySchema, b string, s stamp, read ReadSpec) (bool, error) {
	ik, ok := decodeIndexKey(ks, b)
	if ok {
		rk := make(PrimaryKey, len(m.Key))
		for i, kc := range m.Key {
			v, _ := ik.Get(kc.Name)
			rk[i] = KeyPart{Name: kc.Name, Value: v}
		}
		row, err := c.b.GetRow(ctx, &GetRowRequest{Meta: m, Key: rk, Read: read, Now: c.now()})
		if err != nil {
			return false, err
		}
		if row != nil {
			for _, need := range rowEntries(m, ix, ks, row) {
				if need == b {
					return false, nil
				}
			}
		}
	}
	_, err := c.b.Write(ctx, entryDelete(storageMeta(ix.Storage), b, s, c.now()))
	if err != nil {
		if isConditionFailed(err) {
			return false, nil // put again meanwhile: a writer needs it
		}
		return false, err
	}
	return true, nil
}

// entryDelete is the delete of entry b of entry table sm on the condition
// that its stamp is still s: a writer that put it again meanwhile wins.
func entryDelete(sm *TableMeta, b string, s stamp, now int64) *WriteRequest {
	return &WriteRequest{Meta: sm, Kind: WriteDelete, Key: entryChunks([]byte(b)), Now: now,
		Condition: Condition{Row: ExpectExist, Column: And(SingleColumnValue("t", Equal, Integer(s.t)).Required(), SingleColumnValue("n", Equal, Integer(s.n)).Required())}}
}

func isConditionFailed(err error) bool { return errors.Is(err, ErrConditionFailed) }
