package gcpbigtable_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// TestStaleRevealWindow shows exactly what the one race the package doc
// leaves open lets a reader see: a stale client's DeleteVersion of a
// column's newest version, checked against the metadata row, and an
// UpdateTable lowering MaxVersions landing between that check and the
// write. The older version that MaxVersions 1 hid is then the column's
// newest and every reader sees it, for good. Outside that window the
// write is refused as stale and retried under the new options (the second
// half), and nothing is revealed.
func TestStaleRevealWindow(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(base)
	stale, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, clock)
	current := tablekit.NewClient(b, tablekit.WithClock(clock))
	if err := stale.CreateTable(ctx, tablekit.TableMeta{Name: "rv", Key: schema2, Options: tablekit.TableOptions{MaxVersions: 3}}); err != nil {
		t.Fatal(err)
	}
	now := base.UnixMilli()
	k := key2("a", 1)
	for i, v := range []int64{now - 3000, now - 2000, now - 1000} {
		if _, err := stale.Table("rv").UpdateRow(ctx, k, []tablekit.Change{tablekit.PutAt("c", tablekit.Integer(int64(i+1)), v)}); err != nil {
			t.Fatal(err)
		}
	}
	newest := func() tablekit.Value {
		t.Helper()
		row, found, err := tablekit.NewClient(b, tablekit.WithClock(clock)).Table("rv").GetRow(ctx, k)
		if err != nil || !found {
			t.Fatalf("GetRow: %v, found %v", err, found)
		}
		v, _ := row.Get("c")
		return v
	}
	lower := func() {
		if err := current.UpdateTable(ctx, "rv", tablekit.TableOptions{MaxVersions: 1}); err != nil {
			t.Error(err)
		}
	}
	// In the window: the stale DeleteVersion lands after MaxVersions 1.
	fired := 0
	restore := gcpbigtable.SetAfterConfirmGeneration(func() { fired++; lower() })
	_, err := stale.Table("rv").UpdateRow(ctx, k, []tablekit.Change{tablekit.DeleteVersion("c", now-1000)})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if m, err := current.DescribeTable(ctx, "rv"); fired != 1 || err != nil || m.Options.MaxVersions != 1 {
		t.Fatalf("the UpdateTable did not land in the window (hook ran %d times; MaxVersions %d, %v)", fired, m.Options.MaxVersions, err)
	}
	if got := newest(); got != tablekit.Integer(2) {
		t.Errorf("after the race a reader sees c = %v; the package doc says Integer(2), the version MaxVersions 1 hid", got)
	}

	// Outside the window: the UpdateTable lands before the check; the
	// stale write is refused, the Client retries under MaxVersions 1 and
	// deleting the newest version leaves no older one showing.
	if err := stale.CreateTable(ctx, tablekit.TableMeta{Name: "rv2", Key: schema2, Options: tablekit.TableOptions{MaxVersions: 3}}); err != nil {
		t.Fatal(err)
	}
	for i, v := range []int64{now - 3000, now - 2000, now - 1000} {
		if _, err := stale.Table("rv2").UpdateRow(ctx, k, []tablekit.Change{tablekit.PutAt("c", tablekit.Integer(int64(i+1)), v)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := current.UpdateTable(ctx, "rv2", tablekit.TableOptions{MaxVersions: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := stale.Table("rv2").UpdateRow(ctx, k, []tablekit.Change{tablekit.DeleteVersion("c", now-1000)}); err != nil {
		t.Fatal(err)
	}
	row, found, err := current.Table("rv2").GetRow(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := row.Get("c"); found && ok {
		t.Errorf("outside the window a reader sees c = %v, want none (MaxVersions 1 had hidden the older versions)", v)
	}
}
