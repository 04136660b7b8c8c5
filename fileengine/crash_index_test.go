package fileengine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
)

// The crash table's index: the counters' value. Each increment moves its
// row in the index; the other rows have no "n" and are not in it.
var crashIndex = tablekit.IndexSpec{Name: "by_n", Columns: []tablekit.KeyColumn{{Name: "n", Type: tablekit.TypeInteger}}}

// verifyIndexAgrees checks, after a kill, that index ix of table and the
// table's rows agree: a verifying Reindex finds no entry missing, every
// row the index returns holds the values of its index key, and every row
// with a value for each index column (the rows in the index, SPEC §16) is
// returned exactly once. Index columns may be key columns of the table.
func verifyIndexAgrees(t *testing.T, db *tablekit.Client, cycle int, table string, ix tablekit.IndexSpec) {
	t.Helper()
	ctx := context.Background()
	m, err := db.DescribeTable(ctx, table)
	if err != nil {
		t.Fatalf("cycle %d: describe %s: %v", cycle, table, err)
	}
	rep, err := db.Reindex(ctx, table, ix.Name, true)
	if err != nil {
		t.Fatalf("cycle %d: %s.%s: Reindex verify: %v", cycle, table, ix.Name, err)
	}
	if rep.Missing != 0 {
		t.Errorf("cycle %d: %s.%s: Reindex verify: %+v: an entry is missing", cycle, table, ix.Name, rep)
	}
	// indexed returns the values of ix's columns of the row with key pk
	// and columns r (key columns from pk), and whether it has them all.
	indexed := func(pk tablekit.PrimaryKey, r tablekit.Row) ([]tablekit.Value, bool) {
		var vs []tablekit.Value
		for _, c := range ix.Columns {
			v, ok := pk.Get(c.Name)
			if !ok {
				v, ok = r.Get(c.Name)
			}
			if !ok {
				return nil, false
			}
			vs = append(vs, v)
		}
		return vs, true
	}
	// The table's rows that are in the index, by key, and their values.
	want := map[string][]tablekit.Value{}
	var tlo, thi tablekit.PrimaryKey
	for _, kc := range m.Key {
		tlo, thi = tlo.Add(kc.Name, tablekit.InfMin), thi.Add(kc.Name, tablekit.InfMax)
	}
	for row, err := range db.Table(table).Rows(ctx, tlo, thi) {
		if err != nil {
			t.Fatalf("cycle %d: scan %s: %v", cycle, table, err)
		}
		if vs, ok := indexed(row.Key, row); ok {
			want[row.Key.String()] = vs
		}
	}
	// The index key: its columns, then the table's other key columns.
	var lo, hi tablekit.PrimaryKey
	for _, c := range ix.Columns {
		lo, hi = lo.Add(c.Name, tablekit.InfMin), hi.Add(c.Name, tablekit.InfMax)
	}
	for _, kc := range m.Key {
		if !slices.ContainsFunc(ix.Columns, func(c tablekit.KeyColumn) bool { return c.Name == kc.Name }) {
			lo, hi = lo.Add(kc.Name, tablekit.InfMin), hi.Add(kc.Name, tablekit.InfMax)
		}
	}
	seen := map[string]bool{}
	for row, err := range db.Table(table).Index(ix.Name).Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatalf("cycle %d: %s.%s: index scan: %v", cycle, table, ix.Name, err)
		}
		var pk tablekit.PrimaryKey
		for _, kc := range m.Key {
			v, _ := row.Key.Get(kc.Name)
			pk = pk.Add(kc.Name, v)
		}
		s := pk.String()
		got := row.Key[:len(ix.Columns)]
		if seen[s] {
			t.Errorf("cycle %d: %s.%s returned row %s twice", cycle, table, ix.Name, s)
		}
		seen[s] = true
		w, ok := want[s]
		if !ok {
			t.Errorf("cycle %d: %s.%s returned row %s under %v, which the table does not have in the index", cycle, table, ix.Name, s, got)
			continue
		}
		for i, v := range w {
			if !got[i].Value.Equal(v) {
				t.Errorf("cycle %d: %s.%s returned row %s under %v; the row holds %s=%v", cycle, table, ix.Name, s, got, ix.Columns[i].Name, v)
				break
			}
		}
	}
	for s, vs := range want {
		if !seen[s] {
			t.Errorf("cycle %d: %s.%s misses row %s (%v)", cycle, table, ix.Name, s, vs)
		}
	}
}
