package fileengine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// The crash table's index: the counters' value. Each increment moves its
// row in the index; the other rows have no "n" and are not in it.
var crashIndex = tablekit.IndexSpec{Name: "by_n", Columns: []tablekit.KeyColumn{{Name: "n", Type: tablekit.TypeInteger}}}

// verifyIndexAgrees checks, after a kill, that the crash table's index and
// its rows agree: a verifying Reindex finds no entry missing, every row
// the index returns has the indexed value of its index key, and every
// counter row (the only rows with "n") is returned exactly once.
func verifyIndexAgrees(t *testing.T, db *tablekit.Client, cycle int) {
	t.Helper()
	ctx := context.Background()
	rep, err := db.Reindex(ctx, crashTable, crashIndex.Name, true)
	if err != nil {
		t.Fatalf("cycle %d: Reindex verify: %v", cycle, err)
	}
	if rep.Missing != 0 {
		t.Errorf("cycle %d: Reindex verify: %+v: an entry is missing", cycle, rep)
	}
	want := map[string]int64{}
	for row, err := range db.Table(crashTable).Rows(ctx, tablekit.Key("k", tablekit.String("ctr/")), tablekit.Key("k", tablekit.String("ctr0"))) {
		if err != nil {
			t.Fatalf("cycle %d: scan counters: %v", cycle, err)
		}
		s, _ := row.Key[0].Value.Str()
		v, _ := row.Get("n")
		want[s], _ = v.Int()
	}
	seen := map[string]bool{}
	lo := tablekit.Key("n", tablekit.InfMin).Add("k", tablekit.InfMin)
	hi := tablekit.Key("n", tablekit.InfMax).Add("k", tablekit.InfMax)
	for row, err := range db.Table(crashTable).Index(crashIndex.Name).Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatalf("cycle %d: index scan: %v", cycle, err)
		}
		kv, _ := row.Key.Get("k")
		s, _ := kv.Str()
		nv, _ := row.Key.Get("n")
		n, _ := nv.Int()
		if !strings.HasPrefix(s, "ctr/") {
			t.Errorf("cycle %d: the index returned row %s, which has no n", cycle, s)
			continue
		}
		if seen[s] {
			t.Errorf("cycle %d: the index returned row %s twice", cycle, s)
		}
		seen[s] = true
		if w, ok := want[s]; !ok || w != n {
			t.Errorf("cycle %d: the index returned row %s under n=%d; the row holds %d (present: %v)", cycle, s, n, w, ok)
		}
	}
	for s, n := range want {
		if !seen[s] {
			t.Errorf("cycle %d: the index misses row %s (n=%d)", cycle, s, n)
		}
	}
}
