package rowmodel

import (
	"errors"
	"math"
	"testing"

	"github.com/tablekit/tablekit"
)

var opts = tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 2, MaxVersionOffset: 86400}

func latest(t *testing.T, r Row, col string) tablekit.Column {
	t.Helper()
	cols, ok := Read(&r, opts, &tablekit.ReadSpec{MaxVersions: 1}, 1_000_000)
	if !ok {
		t.Fatal("row does not exist")
	}
	for _, c := range cols {
		if c.Name == col {
			return c
		}
	}
	t.Fatalf("no column %q in %v", col, cols)
	return tablekit.Column{}
}

// An increment whose Now was taken before a concurrent increment committed
// must still leave the sum as the latest value: nothing is lost.
func TestIncrementWithAnEarlierNowLosesNothing(t *testing.T) {
	r, _, err := Update(nil, []tablekit.Change{tablekit.Increment("n", 1)}, opts, 1_000_100)
	if err != nil {
		t.Fatal(err)
	}
	r, incs, err := Update(&r, []tablekit.Change{tablekit.Increment("n", 1)}, opts, 1_000_050)
	if err != nil {
		t.Fatal(err)
	}
	if got := latest(t, r, "n"); got.Value != tablekit.Integer(2) || got.Version != 1_000_100 {
		t.Fatalf("latest after two increments: %v@%d, want Integer(2)@1000100", got.Value, got.Version)
	}
	if incs[0].Value != tablekit.Integer(2) || incs[0].Version != 1_000_100 {
		t.Fatalf("returned increment %v", incs)
	}
	// With no later version the increment is written at now.
	r, _, _ = Update(&r, []tablekit.Change{tablekit.Increment("n", 5)}, opts, 1_000_200)
	if got := latest(t, r, "n"); got.Value != tablekit.Integer(7) || got.Version != 1_000_200 {
		t.Fatalf("latest: %v@%d", got.Value, got.Version)
	}
}

func TestIncrementRefusals(t *testing.T) {
	r := Put([]tablekit.Column{{Name: "s", Value: tablekit.String("x"), Version: 10}, {Name: "n", Value: tablekit.Integer(math.MaxInt64), Version: 10}}, opts, 10)
	for _, ch := range []tablekit.Change{tablekit.Increment("s", 1), tablekit.Increment("n", 1)} {
		if _, _, err := Update(&r, []tablekit.Change{ch}, opts, 20); !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("%v: got %v, want ErrInvalidArgument", ch, err)
		}
	}
}

func TestMaxVersionsTrimAndVisibility(t *testing.T) {
	r := Put([]tablekit.Column{
		{Name: "a", Value: tablekit.Integer(1), Version: 1000},
		{Name: "a", Value: tablekit.Integer(2), Version: 2000},
		{Name: "a", Value: tablekit.Integer(3), Version: 3000},
	}, opts, 3000)
	if len(r.Cells) != 2 || r.Cells[0].Version != 3000 || r.Cells[1].Version != 2000 {
		t.Fatalf("cells after put of 3 versions with MaxVersions 2: %v", r.Cells)
	}
	ttl := opts
	ttl.TTL = 86400
	// Version 2000 ms is second 2; visible while 2 + 86400 > now_s.
	if !Exists(&r, ttl, 86401_999) || Exists(&r, ttl, 86403_000) {
		t.Fatal("TTL edge wrong")
	}
	if err := Check(&r, ttl, tablekit.Condition{Row: tablekit.ExpectExist}, 86403_000); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("expired row satisfied ExpectExist: %v", err)
	}
}
