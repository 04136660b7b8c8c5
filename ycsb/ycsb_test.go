package tkycsb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	tkycsb "github.com/tablekit/tablekit/ycsb"
)

// TestSmoke is the short run CI keeps: workloads A and E (reads, updates,
// scans, inserts) on the local engine and on Bigtable (bttest, adapter and
// raw client), 200 records, at most 100 operations per cell. Every operation must
// succeed. One thread only: go-ycsb v1.0.1's generators write their last
// value unsynchronised (generator.Number.SetLastValue), a race the race
// detector reports as soon as two threads draw keys; it is go-ycsb's, and
// the matrix's multi-threaded figures come from runs without -race.
func TestSmoke(t *testing.T) {
	bt, err := tkycsb.BigtableTargets()
	if err != nil {
		t.Fatal(err)
	}
	targets := append([]tkycsb.Target{tkycsb.MemTarget()}, bt...)
	rows := tkycsb.RunMatrix(context.Background(), targets, tkycsb.MatrixConfig{
		Records:     200,
		Threads:     []int{1},
		Workloads:   []string{"A", "E"},
		Duration:    15 * time.Second, // a bound; MaxOps ends a cell first on an idle machine
		MaxOps:      100,
		LoadThreads: 1,
	})
	if want := 2 * len(targets); len(rows) != want {
		t.Fatalf("%d cells, want %d", len(rows), want)
	}
	for _, r := range rows {
		name := r.Target.Backend + " " + r.Target.Client + " " + r.Result.Workload
		if r.Err != nil {
			t.Errorf("%s t=%d: %v", name, r.Result.Threads, r.Err)
			continue
		}
		if r.Result.Ops < 1 || r.Result.Ops > 100 {
			t.Errorf("%s t=%d: %d operations completed, want 1-100", name, r.Result.Threads, r.Result.Ops)
		}
		ops := []string{"READ", "UPDATE"}
		if r.Result.Workload == "E" {
			ops = []string{"SCAN"}
		}
		for _, op := range ops {
			if l := r.Result.PerOp[op]; l.Count == 0 || l.P50 <= 0 || l.P99 < l.P50 {
				t.Errorf("%s t=%d: %s latency %+v", name, r.Result.Threads, op, l)
			}
		}
	}
	var sb strings.Builder
	tkycsb.WriteTable(&sb, rows)
	if got := strings.Count(sb.String(), "\n"); got != len(rows)+2 {
		t.Errorf("table has %d lines, want %d:\n%s", got, len(rows)+2, sb.String())
	}
	t.Logf("\n%s", sb.String())
}

// TestBindingRoundTrip checks the tablekit binding's operations on the
// local engine: what Insert and Update write, Read and Scan return.
func TestBindingRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, err := tkycsb.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Setup(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := db.Setup(ctx, "t"); err != nil {
		t.Fatalf("Setup of an existing table: %v", err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := db.Insert(ctx, "t", k, map[string][]byte{"f0": []byte(k + "0"), "f1": {0xff, 0}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Update(ctx, "t", "b", map[string][]byte{"f1": []byte("new")}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Read(ctx, "t", "b", []string{"f1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["f1"]) != "new" {
		t.Errorf("Read(b, f1) = %q, want f1=new only", got)
	}
	if _, err := db.Read(ctx, "t", "zz", nil); err == nil {
		t.Error("Read of a missing key succeeded")
	}
	recs, err := db.Scan(ctx, "t", "b", 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || string(recs[0]["f0"]) != "b0" || string(recs[1]["f0"]) != "c0" || string(recs[1]["f1"]) != "\xff\x00" {
		t.Errorf("Scan(b, 5) = %q, want records b and c", recs)
	}
	if err := db.Delete(ctx, "t", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Read(ctx, "t", "b", nil); err == nil {
		t.Error("Read after Delete succeeded")
	}
}
