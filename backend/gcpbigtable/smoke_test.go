package gcpbigtable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	clock := tablekit.NewManualClock(time.UnixMilli(1468944000000))
	db := tablekit.NewClient(openBackend(t, srv, gcpbigtable.Config{GC: gcpbigtable.GCOff}), tablekit.WithClock(clock))
	meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}, {Name: "n", Type: tablekit.TypeInteger}}, Options: tablekit.TableOptions{MaxVersions: 2}}
	if err := db.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	for i := range 10 {
		k := tablekit.Key("pk", tablekit.String("a")).Add("n", tablekit.Integer(int64(i-5)))
		if err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	start := tablekit.Key("pk", tablekit.InfMin).Add("n", tablekit.InfMin)
	end := tablekit.Key("pk", tablekit.InfMax).Add("n", tablekit.InfMax)
	res, err := tbl.GetRange(ctx, start, end, tablekit.Limit(4))
	if err != nil || len(res.Rows) != 4 || res.Next == nil {
		t.Fatalf("GetRange: %v %d %v", err, len(res.Rows), res.Next)
	}
	if n, _ := res.Rows[0].Key[1].Value.Int(); n != -5 {
		t.Fatalf("first row %v", res.Rows[0].Key)
	}
	var got []int64
	for r, err := range tbl.Rows(ctx, end, start, tablekit.Backward(), tablekit.PageSize(3)) {
		if err != nil {
			t.Fatal(err)
		}
		n, _ := r.Key[1].Value.Int()
		got = append(got, n)
	}
	if len(got) != 10 || got[0] != 4 || got[9] != -5 {
		t.Fatalf("backward: %v", got)
	}
	k := tablekit.Key("pk", tablekit.String("c")).Add("n", tablekit.Integer(0))
	ur, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Increment("cnt", 5)})
	if err != nil || len(ur.Increments) != 1 {
		t.Fatal(err, ur)
	}
	err = tbl.PutRow(ctx, k, nil, tablekit.ExpectNotExist)
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("want condition failed, got %v", err)
	}
	row, found, err := tbl.GetRow(ctx, k)
	if err != nil || !found {
		t.Fatal(err, found)
	}
	if v, _ := row.Get("cnt"); !v.Equal(tablekit.Integer(5)) {
		t.Fatalf("cnt = %v", v)
	}
	names, err := db.ListTables(ctx)
	if err != nil || len(names) != 1 || names[0] != "t" {
		t.Fatal(names, err)
	}
	m, err := db.DescribeTable(ctx, "t")
	if err != nil || m.Options.MaxVersions != 2 || len(m.Key) != 2 {
		t.Fatal(m, err)
	}
}
