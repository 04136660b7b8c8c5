package aliyuntablestore

import (
	"context"
	"errors"
	"slices"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Batches. The SDK groups a batch by table (a map, sent in map order) and
// answers per table, each table's results in the order of its rows. The
// adapter keeps, per SDK call, the request index of every row of every
// table and maps the answer back through it.
//
// No two writes of one BatchWriteRow address the same row (the
// tablekit.Client splits a batch that does into successive calls), so a
// write batch goes out as one SDK call. Reads may repeat a row; BatchGetRow
// sends them in calls without a repeated row (see batchGet).
//
// When the server refuses a whole call with a definite client error
// (4xx: a missing table, an invalid key or argument), nothing was applied,
// so the adapter splits the call — by table, then by row — and sends the
// parts again to give each row its own error, as SPEC §8 wants.

// definite reports whether err is a whole-call refusal of the request's
// content, after which nothing was applied and the parts may be sent
// again. Throttling and availability errors are not: splitting would only
// multiply the load.
func definite(err error) bool {
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) {
		return false
	}
	switch oe.Code {
	case "OTSParameterInvalid", "OTSInvalidPK", "OTSObjectNotExist",
		"OTSOutOfColumnCountLimit", "OTSOutOfRowSizeLimit", "OTSRequestBodyTooLarge":
		return true
	}
	return false
}

// splitParts splits a refused call's rows: by table when it spans several
// tables, otherwise in halves, so that k bad rows among n cost O(k log n)
// calls. ok is false for a single row.
func splitParts(idx []int, table func(int) string) (parts [][]int, ok bool) {
	if len(idx) <= 1 {
		return nil, false
	}
	byTable := map[string]int{}
	for _, i := range idx {
		t := table(i)
		p, seen := byTable[t]
		if !seen {
			p = len(parts)
			byTable[t] = p
			parts = append(parts, nil)
		}
		parts[p] = append(parts[p], i)
	}
	if len(parts) > 1 {
		return parts, true
	}
	h := len(idx) / 2
	return [][]int{idx[:h:h], idx[h:]}, true
}

// BatchWriteRow implements tablekit.BatchWriter with one BatchWriteRow
// call (more when the server refuses the whole call, see above).
func (b *Backend) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	out := make([]tablekit.WriteResponse, len(reqs))
	changes := make([]tablestore.RowChange, len(reqs))
	idx := make([]int, 0, len(reqs))
	for i, w := range reqs {
		var err error
		if changes[i], err = writeChange(w); err != nil {
			out[i].Err = err
			continue
		}
		idx = append(idx, i)
	}
	if len(idx) > 0 {
		if err := b.batchWrite(ctx, reqs, changes, idx, out); err != nil {
			return nil, err
		}
	}
	for i := range out {
		out[i].Err = staleKey(out[i].Err)
	}
	return out, nil
}

// batchWrite sends the writes idx (no row twice) and fills their results.
// When the adapter runs the retries, rows that failed with a code the SDK
// would retry (busy, throttled: not applied) are sent again, alone, within
// the same attempt budget as the whole call.
func (b *Backend) batchWrite(ctx context.Context, reqs []*tablekit.WriteRequest, changes []tablestore.RowChange, idx []int, out []tablekit.WriteResponse) error {
	return b.retryRows(ctx, idx, func(bud *budget, idx []int) ([]int, error) {
		return b.batchWriteOnce(ctx, bud, reqs, changes, idx, out)
	})
}

// retryRows runs once over the rows idx, then again over the rows it
// returns as worth retrying, pausing as the retry policy says, until none
// are left, the attempt budget is spent (those rows keep their errors) or
// ctx ends.
func (b *Backend) retryRows(ctx context.Context, idx []int, once func(bud *budget, idx []int) ([]int, error)) error {
	var bud budget
	for {
		again, err := once(&bud, idx)
		if err != nil || len(again) == 0 || b.retry == nil {
			return err
		}
		d, ok := b.retry.pause(&bud)
		if !ok {
			return nil // the rows keep their errors
		}
		if err := driver.Sleep(ctx, d); err != nil {
			return err
		}
		idx = again
	}
}

// batchWriteOnce sends the writes idx in one BatchWriteRow, fills their
// results and returns the rows worth another attempt.
func (b *Backend) batchWriteOnce(ctx context.Context, bud *budget, reqs []*tablekit.WriteRequest, changes []tablestore.RowChange, idx []int, out []tablekit.WriteResponse) (again []int, err error) {
	sreq := &tablestore.BatchWriteRowRequest{}
	perTable := map[string][]int{}
	replay := false
	for _, i := range idx {
		sreq.AddRowChange(changes[i])
		t := changes[i].GetTableName()
		perTable[t] = append(perTable[t], i)
		replay = replay || noReplay(reqs[i])
	}
	resp, err := attemptsCall(ctx, b, bud, "/BatchWriteRow", sreq, replay, b.c.BatchWriteRow)
	err = mapError(err)
	if err != nil {
		if ctx.Err() != nil || !definite(err) {
			return nil, err
		}
		parts, ok := splitParts(idx, func(i int) string { return changes[i].GetTableName() })
		if !ok {
			for _, i := range idx {
				out[i].Err = err
			}
			return nil, nil
		}
		for _, p := range parts {
			if err := b.batchWrite(ctx, reqs, changes, p, out); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	for t, is := range perTable {
		res := resp.TableToRowsResult[t]
		for j, i := range is {
			if j >= len(res) {
				out[i].Err = tablekit.Errorf(tablekit.ErrUnavailable, "the BatchWriteRow answer holds %d results for table %q, the request %d rows", len(res), t, len(is))
				continue
			}
			rr := &res[j]
			if !rr.IsSucceed {
				out[i].Err = rowError(rr.Error, resp.RequestId)
				if tablestore.ShouldRetryViaErrorAndAction(rr.Error.Code, rr.Error.Message, "/BatchWriteRow") {
					again = append(again, i)
				}
				continue
			}
			out[i].Update, out[i].Err = writeResult(reqs[i], &rr.PrimaryKey, rr.Columns)
		}
	}
	slices.Sort(again) // request order, whatever the map order of tables
	return again, nil
}
