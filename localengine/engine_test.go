package localengine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.UnixMilli(1468944000000))
	db := tablekit.NewClient(localengine.New(), tablekit.WithClock(clock))
	defer db.Close()
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
	err = tbl.PutRow(ctx, tablekit.Key("pk", tablekit.String("x")), nil)
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !errors.Is(err, tablekit.ErrInvalidPrimaryKey) {
		t.Fatalf("want invalid key, got %v", err)
	}
	t.Log(err)
}

// A client validates writes with its cached table options: it sees another
// client's UpdateTable once its cache entry expires, and not before.
func TestClientMetaCacheExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMilli(1468944000000)
	clock := tablekit.NewManualClock(now)
	e := localengine.New()
	admin := tablekit.NewClient(e, tablekit.WithClock(clock))
	defer admin.Close()
	meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}
	if err := admin.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	slow := tablekit.NewClient(e, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(time.Hour))
	quick := tablekit.NewClient(e, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(10*time.Millisecond))
	key := tablekit.Key("k", tablekit.Integer(1))
	old := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1), Version: now.Add(-48 * time.Hour).UnixMilli()}}
	for _, c := range []*tablekit.Client{slow, quick} { // cache the default options: a 1-day window
		if err := c.Table("t").PutRow(ctx, key, old); !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Fatalf("a version 2 days old under a 1-day window: %v", err)
		}
	}
	if err := admin.UpdateTable(ctx, "t", tablekit.TableOptions{MaxVersionOffset: 3 * 86400 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := slow.Table("t").PutRow(ctx, key, old); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("within its cache TTL a client must still use the options it cached: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := quick.Table("t").PutRow(ctx, key, old)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache entry never expired: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	slow.Close()
	quick.Close()
}
