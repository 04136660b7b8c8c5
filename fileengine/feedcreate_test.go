package fileengine_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
)

// A table created WithChangeFeed has its feed in the creation's batch: it
// is on after the store is closed and opened again, and the first write is
// recorded.
func TestCreateTableWithFeedSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := fileengine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(e)
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}, tablekit.WithChangeFeed(72*3600e9)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = fileengine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	db = tablekit.NewClient(e)
	defer db.Close()
	tbl := db.Table("t")
	if err := tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	st, err := tbl.ChangeFeed(ctx)
	if err != nil || !st.Enabled || st.Retention != 72*3600e9 || len(st.Shards) != 1 {
		t.Fatalf("after reopening: %+v, %v; want enabled, 72h, one shard", st, err)
	}
	n := 0
	for _, err := range tbl.ReadShard(ctx, st.Shards[0].ID, "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d records, want the put's", n)
	}
}
