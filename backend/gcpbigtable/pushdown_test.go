package gcpbigtable_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// TestFilterPushdown reads one table through the adapter and through the
// local engine (the same writes, the same clock) with every column
// comparison on every type (each operator, with and without
// FilterIfMissing and AllVersions) and random And/Or/Not of them, plainly
// and with a time range or MaxVersions(2), and checks that the rows are
// the same, that a filter pushed down exactly brings only the rows that
// pass, and a pre-filter no fewer. The table's rows hold values of every
// type in column v, older versions of another value, no v at all, or
// nothing (key-only), and some versions have expired under the TTL.
func TestFilterPushdown(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	var cnt readRowsCounter
	meta := tablekit.TableMeta{Name: "push", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: 2, TTL: 24 * time.Hour}}
	now := clock.Now().UnixMilli()
	vals := gcpbigtable.PushValues
	var writes []tablekit.BatchWrite
	for i := range 3*len(vals) + 3 {
		key := tablekit.Key("k", tablekit.Integer(int64(i)))
		var cols []tablekit.Column
		switch v := vals[i%len(vals)]; i / len(vals) {
		case 0: // one version of v
			cols = []tablekit.Column{{Name: "v", Value: v, Version: now - 1000}}
		case 1: // v now, another type's value before it, and an expired one
			old := vals[(i*7+3)%len(vals)]
			cols = []tablekit.Column{{Name: "v", Value: v, Version: now - 1000}, {Name: "v", Value: old, Version: now - 2000}}
		case 2: // an old version of v under a newer other one
			cols = []tablekit.Column{{Name: "v", Value: vals[(i*5+1)%len(vals)], Version: now - 1000}, {Name: "v", Value: v, Version: now - 5000}}
		default: // no v: another column, or nothing
			if i%2 == 0 {
				cols = []tablekit.Column{{Name: "w", Value: tablekit.Integer(int64(i)), Version: now - 1000}}
			}
		}
		cols = append(cols, tablekit.Column{Name: "w", Value: tablekit.Integer(int64(i)), Version: now - 7000})
		if i/len(vals) == 3 && i%2 == 1 {
			cols = nil // key-only
		}
		writes = append(writes, tablekit.BatchPut(meta.Name, key, cols))
	}
	bt, ref := againstLocal(t, clock, meta, writes, option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(cnt.interceptor)))
	clock.Advance(24*time.Hour - 3*time.Second) // versions older than now-3s have expired
	now = clock.Now().UnixMilli()

	// Every operator on every value, with the flags and the read's mode
	// (below) taking turns; then random And/Or/Not of any of them.
	var leaves, filters []tablekit.Filter
	for vi, v := range vals {
		for oi, op := range []tablekit.CompareOp{tablekit.Equal, tablekit.NotEqual, tablekit.Greater, tablekit.GreaterEqual, tablekit.Less, tablekit.LessEqual} {
			for flags := range 4 {
				f := tablekit.ColumnFilter{Column: "v", Op: op, Value: v, FilterIfMissing: flags&1 != 0, AllVersions: flags&2 != 0}
				leaves = append(leaves, f)
				if (vi+oi)%4 == flags {
					filters = append(filters, f)
				}
			}
		}
	}
	rnd := rand.New(rand.NewPCG(13, 1))
	leaf := func() tablekit.Filter { return leaves[rnd.IntN(len(leaves))] }
	for range 200 {
		switch rnd.IntN(4) {
		case 0:
			filters = append(filters, tablekit.And(leaf(), leaf()))
		case 1:
			filters = append(filters, tablekit.Or(leaf(), leaf(), leaf()))
		case 2:
			filters = append(filters, tablekit.Not(leaf()))
		default:
			filters = append(filters, tablekit.Not(tablekit.Or(leaf(), tablekit.And(leaf(), tablekit.Not(leaf())))))
		}
	}

	lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	tr := tablekit.TimeRange{Start: now - 2500, End: now}
	modes := []struct {
		name string
		opts []tablekit.RangeOption
		spec tablekit.ReadSpec
	}{
		{"plain", nil, tablekit.ReadSpec{MaxVersions: 1}},
		{"versions", []tablekit.RangeOption{tablekit.MaxVersions(2)}, tablekit.ReadSpec{MaxVersions: 2}},
		{"timerange", []tablekit.RangeOption{tablekit.Versions(tr.Start, tr.End)}, tablekit.ReadSpec{MaxVersions: math.MaxInt32, TimeRange: &tr}},
	}
	pushedExact, pushedPre, shipped, total := 0, 0, int64(0), 0
	for i, f := range filters {
		m := modes[i%len(modes)]
		opts := append(slices.Clip(m.opts), tablekit.WithFilter(f), tablekit.Limit(1000))
		want, err := ref.Table(meta.Name).GetRange(ctx, lo, hi, opts...)
		if err != nil {
			t.Fatalf("local engine, %s %v: %v", m.name, f, err)
		}
		r0 := cnt.rows.Load()
		got, err := bt.Table(meta.Name).GetRange(ctx, lo, hi, opts...)
		if err != nil {
			t.Fatalf("%s %v: %v", m.name, f, err)
		}
		brought := cnt.rows.Load() - r0
		if g, w := fmt.Sprint(got.Rows), fmt.Sprint(want.Rows); g != w {
			t.Errorf("%s %v:\n got %s\nwant %s", m.name, f, g, w)
			continue
		}
		spec := m.spec
		spec.Filter = f
		pushed, exact := gcpbigtable.Pushdown(meta.Options, &spec, now)
		switch {
		case exact:
			pushedExact++
			if brought != int64(len(got.Rows)) {
				t.Errorf("%s %v: pushed down exactly, brought %d rows for %d", m.name, f, brought, len(got.Rows))
			}
		case pushed:
			pushedPre++
		}
		if brought < int64(len(got.Rows)) {
			t.Errorf("%s %v: brought %d rows for %d", m.name, f, brought, len(got.Rows))
		}
		shipped += brought
		total += len(writes)
	}
	t.Logf("%d filters: %d pushed down exactly, %d as a pre-filter; %d of %d rows brought", len(filters), pushedExact, pushedPre, shipped, total)
	if pushedExact < len(filters)/3 || pushedPre == 0 || shipped > int64(total)/2 {
		t.Errorf("pushdown did too little: %d exact, %d pre-filters, %d of %d rows brought", pushedExact, pushedPre, shipped, total)
	}
}
