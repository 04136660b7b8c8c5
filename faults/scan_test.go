package faults_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// scanRows reads table t's rows 0..99 with Table.Scan (scan) or Table.Rows,
// five rows a page, and returns how many it read and the error that ended
// the read.
func scanRows(ctx context.Context, db *tablekit.Client, scan bool) (int, error) {
	read := db.Table("t").Rows
	if scan {
		read = db.Table("t").Scan
	}
	n := 0
	for _, err := range read(ctx, key(0), key(100), tablekit.PageSize(5)) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// TestScanFaults: the page reads of Table.Scan, which go to a RangeScanner's
// ScanRange, meet the faults of OpGetRange as Table.Rows's GetRange calls
// do: errors, latency, deadlines, lost answers, decided alike.
func TestScanFaults(t *testing.T) {
	ctx := context.Background()
	engines := map[string]func(t *testing.T) tablekit.Backend{
		"localengine": func(*testing.T) tablekit.Backend { return localengine.New() },
		"fileengine": func(t *testing.T) tablekit.Backend {
			e, err := fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	}
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			b := open(t)
			if _, ok := b.(tablekit.RangeScanner); !ok {
				t.Fatalf("%T is not a RangeScanner", b)
			}
			inj := faults.New(9)
			db, _ := setup(t, inj, b)
			for i := range 100 {
				if err := db.Table("t").PutRow(ctx, key(i), nil); err != nil {
					t.Fatal(err)
				}
			}
			client := func(inj *faults.Injector) *tablekit.Client {
				w := inj.Wrap(sharedLocalOrFile(b))
				if _, ok := w.(tablekit.RangeScanner); !ok {
					t.Fatal("the wrapper dropped RangeScanner")
				}
				return tablekit.NewClient(w)
			}

			// An error: the scan fails with it at its first page.
			inj = faults.New(9, faults.Rule{Ops: faults.OpGetRange, Err: tablekit.ErrThrottled})
			n, err := scanRows(ctx, client(inj), true)
			if n != 0 || !errors.Is(err, tablekit.ErrThrottled) || !errors.Is(err, faults.ErrInjected) || inj.Hits(0) != 1 {
				t.Errorf("Err rule: Scan read %d rows, then %v (%d hits); want none, then injected ErrThrottled", n, err, inj.Hits(0))
			}

			// Latency: each page waits; a deadline shorter than it ends the scan.
			inj = faults.New(9, faults.Rule{Ops: faults.OpReads, Latency: 10 * time.Millisecond, Times: 3})
			start := time.Now()
			if n, err := scanRows(ctx, client(inj), true); n != 100 || err != nil {
				t.Errorf("Latency rule: Scan read %d rows, %v", n, err)
			}
			if d := time.Since(start); d < 30*time.Millisecond || inj.Hits(0) != 3 {
				t.Errorf("Latency rule: Scan took %v with %d hits; want ≥ 30ms, 3 hits", d, inj.Hits(0))
			}
			short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
			defer cancel()
			inj = faults.New(9, faults.Rule{Ops: faults.OpGetRange, Latency: time.Second})
			if _, err := scanRows(short, client(inj), true); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a 5ms deadline against 1s of latency: %v", err)
			}

			// A lost answer: the page is read, none of it reaches the loop.
			inj = faults.New(9, faults.Rule{Ops: faults.OpGetRange, Lost: true, Times: 1})
			n, err = scanRows(ctx, client(inj), true)
			if n != 0 || !errors.Is(err, tablekit.ErrUnavailable) || !errors.Is(err, faults.ErrInjected) {
				t.Errorf("Lost rule: Scan read %d rows, then %v; want none, then injected ErrUnavailable", n, err)
			}

			// Decided alike: with the same seed, Scan and Rows meet the
			// fault at the same page.
			midway := 0
			for seed := range uint64(5) {
				rule := faults.Rule{Ops: faults.OpGetRange, Prob: 0.2, Err: tablekit.ErrUnavailable}
				ns, errS := scanRows(ctx, client(faults.New(seed, rule)), true)
				nr, errR := scanRows(ctx, client(faults.New(seed, rule)), false)
				if ns != nr || (errS == nil) != (errR == nil) {
					t.Errorf("seed %d: Scan read %d rows then %v; Rows %d then %v", seed, ns, errS, nr, errR)
				}
				if errS != nil && ns > 0 {
					midway++
				}
			}
			if midway == 0 {
				t.Error("no seed failed a scan after its first page: the comparison tests little")
			}
		})
	}
}
