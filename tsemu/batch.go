package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"errors"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// Batches: a request-wide problem (empty, over the row limit, a duplicated
// key, an unparsable message, a missing table, as the service documents)
// fails the whole call; a row's own problem (its key or cells are invalid,
// its condition fails) is reported in that row's result. Results keep the request's
// table and row order, which the SDK's partial retry relies on.

var errDuplicateRow = paramErr("The input parameter is invalid.")

// dupKey reports whether key appears twice in one table of a batch.
func dupKey(seen map[string]bool, table string, key tablekit.PrimaryKey) bool {
	id := table + "\x00" + string(codec.EncodeKey(key))
	if seen[id] {
		return true
	}
	seen[id] = true
	return false
}

func rowError(err error) *otsprotocol.Error { return toOTS(err).proto() }

func (s *Server) batchGetRow(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.BatchGetRowRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	n := 0
	for _, t := range req.Tables {
		n += len(t.PrimaryKey)
	}
	if n == 0 {
		return nil, paramErr("No row specified in the request of BatchGetRow.")
	}
	if n > tablekit.MaxBatchGet {
		return nil, paramErr("Rows count exceeds the upper limit: %d.", tablekit.MaxBatchGet)
	}
	resp := &otsprotocol.BatchGetRowResponse{Tables: make([]*otsprotocol.TableInBatchGetRowResponse, len(req.Tables))}
	type slot struct{ t, r int }
	var gets []tablekit.BatchGet
	var slots []slot
	var specs []*readSpec
	seen := map[string]bool{}
	for ti, t := range req.Tables {
		tr := &otsprotocol.TableInBatchGetRowResponse{
			TableName: proto.String(t.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchGetRowResponse, len(t.PrimaryKey)),
		}
		resp.Tables[ti] = tr
		fail := func(err error) {
			for ri := range tr.Rows {
				tr.Rows[ri] = &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(false), Error: rowError(err)}
			}
		}
		meta, oe := s.meta(ctx, t.GetTableName())
		if oe == errNoTable {
			// The service fails the whole request for a missing table.
			return nil, oe
		}
		if oe != nil {
			if oe.status >= 500 {
				return nil, oe
			}
			fail(oe)
			continue
		}
		rs, oe := decodeRead(meta, readParams{
			columns: t.ColumnsToGet, timeRange: t.TimeRange, maxVersions: t.MaxVersions, filter: t.Filter,
			startColumn: t.StartColumn, endColumn: t.EndColumn, token: firstToken(t.Token),
		})
		if oe != nil {
			// The selection is shared by the table's rows: the request is wrong.
			return nil, oe
		}
		for ri, pk := range t.PrimaryKey {
			key, _, oe := decodeKey(meta, pk, false)
			if oe != nil {
				tr.Rows[ri] = &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
				continue
			}
			if dupKey(seen, meta.Name, key) {
				return nil, errDuplicateRow
			}
			gets = append(gets, tablekit.BatchGet{Table: meta.Name, Key: key, Options: rs.opts})
			slots = append(slots, slot{ti, ri})
			specs = append(specs, &rs)
		}
	}
	if len(gets) > 0 {
		res, err := s.client.BatchGetRow(ctx, gets)
		if err != nil {
			return nil, err
		}
		// The rows to answer, and room for them (twice: the encoded rows,
		// then the message that copies them) before they are encoded.
		rows := make([]*plainbuffer.Row, len(res))
		size := 0
		for i, r := range res {
			if r.Err == nil && r.Found {
				if cols, keep := specs[i].finish(r.Row.Key, r.Row.Columns, true); keep {
					row := wireRow(r.Row.Key, cols)
					rows[i] = &row
					size += 4 + plainbuffer.RowSize(row)
				}
			}
		}
		if oe := s.reserveResponse(ctx, 2*int64(size)); oe != nil {
			return nil, oe
		}
		for i, r := range res {
			sl := slots[i]
			var out *otsprotocol.RowInBatchGetRowResponse
			switch {
			case r.Err != nil:
				out = &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(false), Error: rowError(r.Err)}
			default:
				// The service leaves row out for a missing row.
				var row []byte
				if rows[i] != nil {
					row = plainbuffer.EncodeRow(*rows[i])
				}
				out = &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(true), Consumed: capacity(units(len(row)), 0), Row: row}
			}
			resp.Tables[sl.t].Rows[sl.r] = out
		}
	}
	return resp, nil
}

func firstToken(ts [][]byte) []byte {
	for _, t := range ts {
		if len(t) > 0 {
			return t
		}
	}
	return nil
}

func (s *Server) batchWriteRow(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.BatchWriteRowRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	if req.TransactionId != nil {
		return s.txnBatchWriteRow(ctx, &req)
	}
	if req.GetIsAtomic() {
		return s.atomicBatchWriteRow(ctx, &req)
	}
	n := 0
	for _, t := range req.Tables {
		n += len(t.Rows)
	}
	if n == 0 {
		return nil, paramErr("No row is specified in BatchWriteRow.")
	}
	if n > tablekit.MaxBatchWrite {
		return nil, paramErr("Rows count exceeds the upper limit: %d.", tablekit.MaxBatchWrite)
	}
	resp := &otsprotocol.BatchWriteRowResponse{Tables: make([]*otsprotocol.TableInBatchWriteRowResponse, len(req.Tables))}
	type slot struct {
		t, r int
		w    *write
	}
	var writes []tablekit.BatchWrite
	var slots []slot
	// Rows of tables with secondary indexes are applied one by one, each
	// with its index maintenance (the batch is not atomic either way).
	type indexedSlot struct {
		slot
		idx tableIndexes
	}
	var indexed []indexedSlot
	var held heldRows // rows admitted past the local transactions' locks
	defer held.release()
	seen := map[string]bool{}
	now := s.now()
	for ti, t := range req.Tables {
		tr := &otsprotocol.TableInBatchWriteRowResponse{
			TableName: proto.String(t.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchWriteRowResponse, len(t.Rows)),
		}
		resp.Tables[ti] = tr
		meta, oe := s.meta(ctx, t.GetTableName())
		if oe == errNoTable {
			// The service fails the whole request for a missing table.
			return nil, oe
		}
		if oe != nil {
			if oe.status >= 500 {
				return nil, oe
			}
			for ri := range tr.Rows {
				tr.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
			}
			continue
		}
		idx := s.extra(meta.Name).idx
		for ri, r := range t.Rows {
			w, oe := decodeWrite(meta, r.GetType(), r.RowChange, r.Condition, r.ReturnContent, now)
			if oe == nil && idx.baseOf != "" {
				oe = errIndexWrite(meta.Name)
			}
			if oe != nil {
				tr.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
				continue
			}
			if !hasPlaceholder(w.key) && dupKey(seen, meta.Name, w.key) {
				return nil, errDuplicateRow
			}
			if oe := held.hold(s, meta.Name, w.key); oe != nil {
				tr.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
				continue
			}
			if idx.indexed() {
				indexed = append(indexed, indexedSlot{slot{ti, ri, w}, idx})
				continue
			}
			writes = append(writes, w.bw)
			slots = append(slots, slot{ti, ri, w})
		}
	}
	if len(writes) > 0 {
		res, err := s.client.BatchWriteRow(ctx, writes)
		if err != nil {
			return nil, err
		}
		for i, r := range res {
			sl := slots[i]
			var out *otsprotocol.RowInBatchWriteRowResponse
			if r.Err != nil {
				out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: rowError(condError(sl.w.bw.Condition, r.Err))}
			} else {
				sl.w.written(r.Key)
				out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(sl.w, false)), Row: sl.w.returned(r.Increments)}
			}
			resp.Tables[sl.t].Rows[sl.r] = out
		}
	}
	for _, sl := range indexed {
		sl.idx.mu.Lock()
		incs, err := s.indexedApply(ctx, sl.idx, sl.w)
		sl.idx.mu.Unlock()
		out := &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(sl.w, true)), Row: sl.w.returned(incs)}
		if err != nil {
			if oe := toOTS(err); oe.status >= 500 && !errors.Is(err, tablekit.ErrConditionFailed) {
				return nil, err
			}
			out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: rowError(condError(sl.w.bw.Condition, err))}
		}
		resp.Tables[sl.t].Rows[sl.r] = out
	}
	return resp, nil
}
