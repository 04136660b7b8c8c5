package tablekit

import (
	"context"
	"errors"

	"github.com/tablekit/tablekit/internal/base"
)

// batchParallelism is how many single-row calls the Client makes at once
// for a batch whose backend has no batch call.
const batchParallelism = 8

// BatchGetRow reads up to MaxBatchGet rows, across tables: one result per
// read, in order, each with its own error; err fails the whole call.
func (c *Client) BatchGetRow(ctx context.Context, gets []BatchGet) (out []BatchGetResult, err error) {
	const op = "BatchGetRow"
	ctx, st := c.beginBatch(ctx, op, batchTable(c, gets, func(g BatchGet) string { return g.Table }), len(gets))
	defer func() { st.endBatchGet(out, err) }()
	reqs, idx, errs, err := prepareBatch(ctx, c, op, MaxBatchGet, gets,
		func(g BatchGet) string { return g.Table },
		func(m *TableMeta, g BatchGet) (*GetRowRequest, error) { return c.getRequest(m, g.Key, g.Options) })
	if err != nil {
		return nil, err
	}
	out = make([]BatchGetResult, len(gets))
	for i, e := range errs {
		out[i].Err = e
	}
	if len(reqs) == 0 {
		return out, nil
	}
	res, err := c.batchGet(ctx, reqs)
	if err := checkBatch(op, err, len(res), len(reqs)); err != nil {
		return nil, err
	}
	for j, r := range res {
		i := idx[j]
		row, rerr := r.Row, r.Err
		if rerr != nil && isStale(rerr) { // read again on its own, with new metadata
			g := &gets[i]
			rerr = c.retryStale(ctx, g.Table, reqs[j].Meta, rerr, nil, func(m *TableMeta) error {
				req, err := c.getRequest(m, g.Key, g.Options)
				if err != nil {
					return err
				}
				row, err = c.b.GetRow(ctx, req)
				return err
			})
		}
		switch {
		case rerr != nil:
			out[i].Err = c.backendErr(rerr, op, gets[i].Table)
		case row != nil:
			out[i].Row, out[i].Found = *row, true
		}
	}
	return out, nil
}

// batchGet is the backend's BatchGetRow, or GetRow a few at a time.
func (c *Client) batchGet(ctx context.Context, reqs []*GetRowRequest) ([]GetRowResponse, error) {
	if br, ok := optional[BatchReader](c, c.caps.BatchRead); ok {
		if res, err := br.BatchGetRow(ctx, reqs); !errors.Is(err, ErrSkip) {
			return res, err
		}
	}
	return perRow(ctx, reqs, func(ctx context.Context, q *GetRowRequest, r *GetRowResponse) error {
		r.Row, r.Err = c.b.GetRow(ctx, q)
		return r.Err
	})
}

// perRow is the batch calls' one fallback loop: a call per request, a few
// at a time, each result keeping its own error; only a context error ends
// the whole batch.
func perRow[Q, R any](ctx context.Context, reqs []*Q, call func(context.Context, *Q, *R) error) ([]R, error) {
	out := make([]R, len(reqs))
	err := base.Parallel(ctx, len(reqs), batchParallelism, func(ctx context.Context, i int) error {
		if err := call(ctx, reqs[i], &out[i]); isContextErr(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BatchWriteRow applies up to MaxBatchWrite writes, each atomic on its row
// (the batch is not), same-row ones in order; one result per write.
func (c *Client) BatchWriteRow(ctx context.Context, writes []BatchWrite) (out []BatchWriteResult, err error) {
	const op = "BatchWriteRow"
	ctx, st := c.beginBatch(ctx, op, batchTable(c, writes, func(w BatchWrite) string { return w.Table }), len(writes))
	defer func() { st.endBatchWrite(writes, out, err) }()
	reqs, idx, errs, err := prepareBatch(ctx, c, op, MaxBatchWrite, writes,
		func(w BatchWrite) string { return w.Table },
		func(m *TableMeta, w BatchWrite) (*WriteRequest, error) {
			return c.writeRequest(m, w.Kind, w.Key, w.Columns, w.Changes, w.Condition)
		})
	if err != nil {
		return nil, err
	}
	out = make([]BatchWriteResult, len(writes))
	for i, e := range errs {
		out[i].Err = e
	}
	// Writes to one row go in successive backend calls, in batch order: a
	// backend may apply the writes of one call in any order.
	for _, wave := range sameRowWaves(reqs) {
		sub := reqs
		if wave != nil {
			sub = make([]*WriteRequest, len(wave))
			for k, j := range wave {
				sub[k] = reqs[j]
			}
		}
		res, err := c.batchWrite(ctx, sub)
		if err := checkBatch(op, err, len(res), len(sub)); err != nil {
			return nil, err
		}
		for k, r := range res {
			j := k
			if wave != nil {
				j = wave[k]
			}
			i := idx[j]
			upd, werr := r.Update, r.Err
			if werr != nil && isStale(werr) { // write again on its own, with new metadata
				w := &writes[i]
				werr = c.retryStale(ctx, w.Table, sub[k].Meta, werr, nil, func(m *TableMeta) error {
					req, err := c.writeRequest(m, w.Kind, w.Key, w.Columns, w.Changes, w.Condition)
					if err != nil {
						return err
					}
					upd, err = c.b.Write(ctx, req)
					return err
				})
			}
			switch {
			case werr != nil:
				out[i].Err = c.backendErr(werr, op, writes[i].Table)
			case upd != nil:
				out[i].Increments, out[i].Key = upd.Increments, upd.Key
			}
			if werr == nil {
				setReturnKey(writes[i].returnKey, out[i].Key, writes[i].Key)
			}
		}
	}
	return out, nil
}

// sameRowWaves splits a batch so that no two writes of one wave address the
// same row: wave n holds the n-th write of each row, in batch order. It
// returns [nil] (one wave: the whole batch) when no row is written twice.
func sameRowWaves(reqs []*WriteRequest) [][]int {
	if len(reqs) < 2 {
		return [][]int{nil}
	}
	seen := make(map[string]int, len(reqs))
	waveOf := make([]int, len(reqs))
	n := 1
	for j, r := range reqs {
		if r.Key.AutoIncrementIndex() >= 0 {
			continue // a new row: never one written before
		}
		id := string(encodeToken(token{table: r.Meta.Name, key: r.Key}))
		waveOf[j] = seen[id]
		seen[id]++
		n = max(n, seen[id])
	}
	if n == 1 {
		return [][]int{nil}
	}
	waves := make([][]int, n)
	for j, w := range waveOf {
		waves[w] = append(waves[w], j)
	}
	return waves
}

// batchWrite is the backend's BatchWriteRow, or Write a few at a time.
func (c *Client) batchWrite(ctx context.Context, reqs []*WriteRequest) ([]WriteResponse, error) {
	if bw, ok := optional[BatchWriter](c, c.caps.BatchWrite); ok {
		if res, err := bw.BatchWriteRow(ctx, reqs); !errors.Is(err, ErrSkip) {
			return res, err
		}
	}
	return perRow(ctx, reqs, func(ctx context.Context, q *WriteRequest, r *WriteResponse) error {
		r.Update, r.Err = c.b.Write(ctx, q)
		return r.Err
	})
}

// prepareBatch is the shared front of the batch calls: it checks the
// batch's size and builds each entry's request from its table's meta. An
// entry that fails validation gets its own error in errs (a context error
// or a closed client fails the whole call); the others' requests come back
// in reqs, idx[j] being the entry of reqs[j].
func prepareBatch[In any, Req any](ctx context.Context, c *Client, op string, limit int, in []In,
	table func(In) string, build func(*TableMeta, In) (Req, error)) (reqs []Req, idx []int, errs []error, err error) {
	if err := c.checkOpen(op, ""); err != nil {
		return nil, nil, nil, err
	}
	if len(in) == 0 || len(in) > limit {
		return nil, nil, nil, annotate(fmtLimit(op, len(in), limit), op, "")
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	reqs = make([]Req, 0, len(in))
	idx = make([]int, 0, len(in))
	errs = make([]error, len(in))
	for i, e := range in {
		m, err := c.tableMeta(ctx, table(e))
		var req Req
		if err == nil {
			req, err = build(m, e)
		}
		if err != nil {
			if isContextErr(err) || errors.Is(err, ErrClosed) {
				return nil, nil, nil, annotate(err, op, "")
			}
			errs[i] = annotate(err, op, table(e))
			continue
		}
		reqs = append(reqs, req)
		idx = append(idx, i)
	}
	return reqs, idx, errs, nil
}

// checkBatch checks a backend's batch answer: no call error, one result per request.
func checkBatch(op string, err error, got, want int) error {
	if err != nil {
		return annotate(err, op, "")
	}
	if got != want {
		return annotate(Errorf(ErrUnavailable, "backend returned %d results for %d requests", got, want), op, "")
	}
	return nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// batchChunks is how many BatchWriteRow or BatchGetRow calls WriteAll and
// GetAll make at once.
const batchChunks = 4

// WriteAll applies any number of writes in batches, four at a time (one
// when a row repeats), returning one result per write and the errors joined.
func (c *Client) WriteAll(ctx context.Context, writes []BatchWrite) ([]BatchWriteResult, error) {
	out := make([]BatchWriteResult, len(writes))
	if len(writes) == 0 {
		return out, nil
	}
	parallel := batchChunks
	seen := make(map[string]struct{}, len(writes))
	for _, w := range writes {
		if w.Key.AutoIncrementIndex() >= 0 {
			continue // a new row
		}
		id := string(encodeToken(token{table: w.Table, key: w.Key}))
		if _, dup := seen[id]; dup {
			parallel = 1
			break
		}
		seen[id] = struct{}{}
	}
	n := (len(writes) + MaxBatchWrite - 1) / MaxBatchWrite
	ran := make([]bool, n)
	err := base.Parallel(ctx, n, parallel, func(ctx context.Context, k int) error {
		lo, hi := k*MaxBatchWrite, min(len(writes), (k+1)*MaxBatchWrite)
		ran[k] = true
		res, err := c.BatchWriteRow(ctx, writes[lo:hi])
		if err != nil {
			for i := lo; i < hi; i++ {
				out[i].Err = err
			}
			if isContextErr(err) || errors.Is(err, ErrClosed) {
				return err // stop starting batches
			}
			return nil
		}
		copy(out[lo:hi], res)
		return nil
	})
	if err == nil {
		err = ctx.Err()
	}
	var errs []error
	for i := range out {
		if !ran[i/MaxBatchWrite] { // never started: the context ended or the client closed
			out[i].Err = err
			if err == nil {
				out[i].Err = Errorf(ErrUnavailable, "write %d was not attempted", i)
			}
		}
		if out[i].Err != nil {
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}
