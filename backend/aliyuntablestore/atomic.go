package aliyuntablestore

import (
	"context"
	"strings"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

// notAppliedPrefix begins the message tsemu gives the rows of a failed
// atomic batch that did not fail themselves (tsemu's atomicNotApplied),
// so the failing row can be told from them.
const notAppliedPrefix = "Not applied: the atomic batch failed at row "

// AtomicWrite implements tablekit.AtomicWriter (SPEC §13) with one
// BatchWriteRow of IsAtomic=true: Tablestore applies the rows of one table
// and one partition key all or nothing. A failed write fails every row of
// the answer; the error is the failing row's, as an
// *tablekit.AtomicWriteError with that row's index: the first failed row
// whose message is not the "not applied" of a row that did not fail itself
// (tsemu words those so), else the first failed row. A whole-call error
// (throttling, an outage, a refusal of the request) is returned as it is,
// and a write with a condition or an increment is not sent again after an
// attempt whose outcome is unknown.
func (b *Backend) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	table := reqs[0].Meta.Name
	sreq := &tablestore.BatchWriteRowRequest{IsAtomic: true}
	replay := false
	for i, w := range reqs {
		if w.Meta.Name != table {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: tablekit.Errorf(tablekit.ErrInvalidArgument,
				"table %q: an atomic write is within one table, %q", w.Meta.Name, table)}
		}
		ch, err := writeChange(w)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		sreq.AddRowChange(ch)
		replay = replay || noReplay(w)
	}
	resp, err := doCall(ctx, b, "/BatchWriteRow", sreq, replay, b.c.BatchWriteRow)
	if err != nil {
		return nil, staleKey(err)
	}
	rows := resp.TableToRowsResult[table]
	if len(rows) != len(reqs) {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the atomic BatchWriteRow answer holds %d results for table %q, the request %d rows", len(rows), table, len(reqs))
	}
	failed := -1
	for i := range rows {
		if rows[i].IsSucceed {
			continue
		}
		if failed < 0 {
			failed = i
		}
		if !strings.HasPrefix(rows[i].Error.Message, notAppliedPrefix) {
			failed = i
			break
		}
	}
	if failed >= 0 {
		at := failed
		if ix := int(rows[failed].Index); ix >= 0 && ix < len(reqs) {
			at = ix
		}
		return nil, &tablekit.AtomicWriteError{Index: at, Err: staleKey(rowError(rows[failed].Error, resp.RequestId))}
	}
	out := make([]tablekit.WriteResponse, len(reqs))
	for i := range rows {
		if out[i].Update, err = writeResult(reqs[i], &rows[i].PrimaryKey, rows[i].Columns); err != nil {
			return nil, err // applied, but an increment's value or an assigned key is unknown
		}
	}
	return out, nil
}
