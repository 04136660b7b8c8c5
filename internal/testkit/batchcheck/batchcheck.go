// Package batchcheck holds the test every engine with a
// tablekit.BatchReader runs: its BatchGetRow returns, request by request,
// what its GetRow returns.
package batchcheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Engine is what Run tests: a backend with BatchGetRow, closed at the end.
type Engine interface {
	tablekit.Backend
	tablekit.BatchReader
	Close() error
}

// Run checks that e's BatchGetRow returns, for every request, what its
// GetRow returns for it: the same row (key and cells) or none, or an error
// of the same kind, for reads of every shape (projections, versions, time
// ranges, filters, TTL) across two tables, missing rows, a table that does
// not exist and a request of another incarnation, in batches of 1 to
// MaxBatchGet requests in any order; that a row's key and cells are its
// own (an append to one does not reach the next); and that after Close it
// fails with ErrUnavailable. It closes e.
func Run(t *testing.T, e Engine) {
	ctx := context.Background()
	db := tablekit.NewClient(e)
	const day = int64(86400 * 1000)
	now := int64(1_700_000_000_000)
	metas := map[string]*tablekit.TableMeta{}
	for _, name := range []string{"a", "b"} {
		m := tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}, {Name: "n", Type: tablekit.TypeInteger}},
			Options: tablekit.TableOptions{MaxVersions: 3, TTL: tablekit.MinTTL}}
		if name == "b" {
			m.Options = tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}
		}
		if err := db.CreateTable(ctx, m); err != nil {
			t.Fatal(err)
		}
		bm, err := e.DescribeTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		metas[name] = bm
	}
	rnd := rand.New(rand.NewPCG(5, 6))
	cols := []string{"c", "d", "e", "f"}
	key := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("pk", tablekit.String(fmt.Sprintf("p%d", i%7))).Add("n", tablekit.Integer(int64(i)))
	}
	for _, name := range []string{"a", "b"} {
		for i := range 120 {
			if i%5 == 4 {
				continue // missing rows
			}
			if i%10 == 3 { // a row of its key alone
				if _, err := e.Write(ctx, &tablekit.WriteRequest{Meta: metas[name], Kind: tablekit.WritePut, Key: key(i), Now: now}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			for range 1 + rnd.IntN(4) {
				v := now - rnd.Int64N(2*day)
				var ch []tablekit.Change
				for _, c := range cols {
					if rnd.IntN(3) != 0 {
						ch = append(ch, tablekit.Change{Kind: tablekit.ChangePut, Column: c, Value: tablekit.Integer(rnd.Int64N(10)), Version: v})
					}
				}
				if _, err := e.Write(ctx, &tablekit.WriteRequest{Meta: metas[name], Kind: tablekit.WriteUpdate, Key: key(i), Changes: ch, Now: v}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	stale := *metas["a"]
	stale.Incarnation += "-old"
	gone := *metas["b"]
	gone.Name = "gone"
	spec := func() tablekit.ReadSpec {
		s := tablekit.ReadSpec{MaxVersions: 1 + rnd.IntN(3)}
		if rnd.IntN(3) != 0 {
			s.Columns = []string{}
			for _, c := range cols {
				if rnd.IntN(2) == 0 {
					s.Columns = append(s.Columns, c)
				}
			}
		}
		if rnd.IntN(5) == 0 {
			s.TimeRange = &tablekit.TimeRange{Start: now - day - rnd.Int64N(day), End: now - rnd.Int64N(day)}
		}
		if rnd.IntN(4) == 0 {
			s.Filter = tablekit.ColumnFilter{Column: cols[rnd.IntN(len(cols))], Op: tablekit.CompareOp(1 + rnd.IntN(3)), Value: tablekit.Integer(rnd.Int64N(10)), FilterIfMissing: rnd.IntN(2) == 0}
		}
		return s
	}
	found, missing, errs := 0, 0, 0
	for range 300 {
		reqs := make([]*tablekit.GetRowRequest, 1+rnd.IntN(tablekit.MaxBatchGet))
		readNow := now + rnd.Int64N(day)
		for j := range reqs {
			m := metas["a"]
			switch r := rnd.IntN(40); {
			case r < 15:
				m = metas["b"]
			case r == 15:
				m = &stale
			case r == 16:
				m = &gone
			}
			reqs[j] = &tablekit.GetRowRequest{Meta: m, Key: key(rnd.IntN(130)), Read: spec(), Now: readNow}
		}
		got, err := e.BatchGetRow(ctx, reqs)
		if err != nil || len(got) != len(reqs) {
			t.Fatalf("BatchGetRow: %d results for %d, %v", len(got), len(reqs), err)
		}
		for j, q := range reqs {
			want, werr := e.GetRow(ctx, q)
			g := got[j]
			switch {
			case werr != nil || g.Err != nil:
				errs++
				if werr == nil || g.Err == nil || errors.Is(werr, driver.ErrStaleMeta) != errors.Is(g.Err, driver.ErrStaleMeta) ||
					errors.Is(werr, tablekit.ErrTableNotFound) != errors.Is(g.Err, tablekit.ErrTableNotFound) {
					t.Fatalf("request %v: BatchGetRow error %v, GetRow error %v", q.Key, g.Err, werr)
				}
			case want == nil || g.Row == nil:
				missing++
				if want != nil || g.Row != nil {
					t.Fatalf("table %s row %v read %+v: BatchGetRow %v, GetRow %v", q.Meta.Name, q.Key, q.Read, g.Row, want)
				}
			default:
				found++
				if !g.Row.Key.Equal(want.Key) || fmt.Sprint(g.Row.Key) != fmt.Sprint(want.Key) || fmt.Sprint(g.Row.Columns) != fmt.Sprint(want.Columns) {
					t.Fatalf("table %s row %v read %+v: BatchGetRow %v, GetRow %v", q.Meta.Name, q.Key, q.Read, g.Row, want)
				}
			}
		}
	}
	if found < 1000 || missing < 1000 || errs < 100 {
		t.Fatalf("too few cases: %d found, %d missing, %d errors", found, missing, errs)
	}
	if _, err := e.BatchGetRow(ctx, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	// A row's cells are its own: appending to one does not reach the next.
	reqs := []*tablekit.GetRowRequest{{Meta: metas["b"], Key: key(0), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now}, {Meta: metas["b"], Key: key(1), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now}}
	got, err := e.BatchGetRow(ctx, reqs)
	if err != nil || got[0].Row == nil || got[1].Row == nil {
		t.Fatalf("rows 0 and 1: %v", err)
	}
	before := fmt.Sprint(got[1].Row.Columns)
	_ = append(got[0].Row.Columns, tablekit.Column{Name: "zz"})
	_ = append(got[0].Row.Key, tablekit.KeyPart{Name: "zz"})
	if fmt.Sprint(got[1].Row.Columns) != before || len(got[1].Row.Key) != 2 || got[1].Row.Key[0].Name != "pk" {
		t.Fatalf("an append to row 0 changed row 1: %v", got[1].Row)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.BatchGetRow(ctx, reqs); !errors.Is(err, tablekit.ErrUnavailable) {
		t.Fatalf("after Close: %v, want ErrUnavailable", err)
	}
}
