package faults_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// writeBatch is a batch path under test: it applies writes and returns one
// error per write (nil when applied), or an error for the whole call. A
// batch helper that takes any number of rows is one more case below.
type writeBatch func(ctx context.Context, db *tablekit.Client, writes []tablekit.BatchWrite) ([]error, error)

func viaBatchWriteRow(ctx context.Context, db *tablekit.Client, writes []tablekit.BatchWrite) ([]error, error) {
	errs := make([]error, len(writes))
	for lo := 0; lo < len(writes); lo += tablekit.MaxBatchWrite {
		hi := min(lo+tablekit.MaxBatchWrite, len(writes))
		res, err := db.BatchWriteRow(ctx, writes[lo:hi])
		if err != nil {
			return nil, err
		}
		for i, r := range res {
			errs[lo+i] = r.Err
		}
	}
	return errs, nil
}

// applyExactlyOnce applies every write once, as a service would, through
// faults: it retries the writes that failed for a retryable reason (and the
// whole call when it failed so), and counts a write whose condition failed
// as applied when the row shows it was (a write whose answer was lost,
// then retried). Each write is an update guarded by the row's sequence
// number, so applying one twice is impossible.
func applyExactlyOnce(t *testing.T, ctx context.Context, db, clean *tablekit.Client, path writeBatch, writes []tablekit.BatchWrite, applied func(tablekit.Row) bool) (retries int) {
	t.Helper()
	pending := make([]int, len(writes))
	for i := range pending {
		pending[i] = i
	}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 50 {
			t.Fatalf("%d writes still pending after 50 attempts", len(pending))
		}
		sub := make([]tablekit.BatchWrite, len(pending))
		for k, i := range pending {
			sub[k] = writes[i]
		}
		errs, err := path(ctx, db, sub)
		if err != nil {
			if !driver.Retryable(err) {
				t.Fatalf("batch call: %v", err)
			}
			retries++
			continue
		}
		var again []int
		for k, i := range pending {
			switch e := errs[k]; {
			case e == nil:
			case driver.Retryable(e):
				again = append(again, i)
			case errors.Is(e, tablekit.ErrConditionFailed):
				row, found, err := clean.Table(writes[i].Table).GetRow(ctx, writes[i].Key)
				if err != nil || !found || !applied(row) {
					t.Fatalf("write %d failed its condition but the row does not show it: %v %v", i, row, err)
				}
			default:
				t.Fatalf("write %d: %v", i, e)
			}
		}
		retries += len(again)
		pending = again
	}
	return retries
}

// TestBatchRetriesLoseAndDuplicateNothing runs rounds of guarded
// increments over 500 rows through throttled, unavailable and lost
// answers, per row and per call, and checks every row was incremented
// exactly once per round.
func TestBatchRetriesLoseAndDuplicateNothing(t *testing.T) {
	rules := func(op faults.Op, batch bool) []faults.Rule {
		if !batch { // the Client writes row by row: per-call rules are per-row
			return []faults.Rule{
				{Ops: op, Prob: 0.2, Err: tablekit.ErrThrottled},
				{Ops: op, Prob: 0.1, Lost: true},
				{Ops: op, Prob: 0.05, Err: tablekit.ErrUnavailable},
			}
		}
		return []faults.Rule{
			{Ops: op, Rows: 0.2, Err: tablekit.ErrThrottled},
			{Ops: op, Rows: 0.1, Lost: true},
			{Ops: op, Prob: 0.1, Err: tablekit.ErrUnavailable}, // the whole call
			{Ops: op, Prob: 0.1, Lost: true},                   // the whole call, applied
		}
	}
	cases := []struct {
		name  string
		open  func(t *testing.T) tablekit.Backend
		rules []faults.Rule
		path  writeBatch
	}{
		{"localengine/BatchWriteRow", func(*testing.T) tablekit.Backend { return localengine.New() }, rules(faults.OpWrite, false), viaBatchWriteRow},
		{"fileengine/BatchWriteRow", openFile, rules(faults.OpBatchWriteRow, true), viaBatchWriteRow},
	}
	const rows, rounds = 500, 4
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			inj := faults.New(11, tc.rules...)
			db, clean := setup(t, inj, tc.open(t))
			inj.Disable()
			seed := make([]tablekit.BatchWrite, rows)
			for i := range seed {
				seed[i] = tablekit.BatchWrite{Table: "t", Kind: tablekit.WritePut, Key: key(i), Columns: []tablekit.Column{
					{Name: "seq", Value: tablekit.Integer(0)}, {Name: "n", Value: tablekit.Integer(0)},
				}}
			}
			if _, err := viaBatchWriteRow(ctx, db, seed); err != nil {
				t.Fatal(err)
			}
			inj.Enable()
			retries := 0
			for r := range int64(rounds) {
				writes := make([]tablekit.BatchWrite, rows)
				for i := range writes {
					writes[i] = tablekit.BatchWrite{Table: "t", Kind: tablekit.WriteUpdate, Key: key(i),
						Changes: []tablekit.Change{tablekit.Put("seq", tablekit.Integer(r+1)), tablekit.Increment("n", 1)},
						Condition: tablekit.Condition{Row: tablekit.ExpectExist,
							Column: tablekit.ColumnFilter{Column: "seq", Op: tablekit.Equal, Value: tablekit.Integer(r), FilterIfMissing: true}},
					}
				}
				retries += applyExactlyOnce(t, ctx, db, clean, tc.path, writes, func(row tablekit.Row) bool {
					v, _ := row.Get("seq")
					return v == tablekit.Integer(r+1)
				})
			}
			n := 0
			for row, err := range clean.Table("t").Rows(ctx, key(-1), key(rows)) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				if v, _ := row.Get("n"); v != tablekit.Integer(rounds) {
					t.Errorf("row %v: n = %v, want %d (lost or duplicated increments)", row.Key, v, rounds)
				}
			}
			if n != rows {
				t.Errorf("%d rows, want %d", n, rows)
			}
			if inj.TotalHits() < rows/2 || retries == 0 {
				t.Errorf("only %d faults and %d retries: the test proved little", inj.TotalHits(), retries)
			}
			t.Logf("%d faults injected, %d retries", inj.TotalHits(), retries)
		})
	}
}

func openFile(t *testing.T) tablekit.Backend {
	fe, err := fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return fe
}
