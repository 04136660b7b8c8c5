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

// batchMeta reads the metadata of a batch's table. A missing table, or
// the Backend failing, fails the whole request (fatal, as the service
// does for a missing table); another problem fails only the table's rows.
func (s *Server) batchMeta(ctx context.Context, table string) (meta *tablekit.TableMeta, oe *otsError, fatal bool) {
	meta, oe = s.meta(ctx, table)
	return meta, oe, oe == errNoTable || (oe != nil && oe.status >= 500)
}

// batchSlot is a row of a batch request: row r of table t.
type batchSlot struct{ t, r int }

// batchGets are the reads of a BatchGetRow for the Backend, with the
// request row and the read selection of each.
type batchGets struct {
	gets  []tablekit.BatchGet
	slots []batchSlot
	specs []*readSpec
	seen  map[string]bool // the keys read, per table: a key read twice fails the request
}

func (s *Server) batchGetRow(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.BatchGetRowRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	n := 0
	for _, t := range req.Tables {
		n += len(t.PrimaryKey)
	}
	if oe := checkRowCount(n, tablekit.MaxBatchGet, "No row specified in the request of BatchGetRow."); oe != nil {
		return nil, oe
	}
	resp := &otsprotocol.BatchGetRowResponse{Tables: make([]*otsprotocol.TableInBatchGetRowResponse, len(req.Tables))}
	b := &batchGets{seen: map[string]bool{}}
	for ti, t := range req.Tables {
		resp.Tables[ti] = &otsprotocol.TableInBatchGetRowResponse{
			TableName: proto.String(t.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchGetRowResponse, len(t.PrimaryKey)),
		}
		if oe := s.batchGetTable(ctx, b, ti, t, resp.Tables[ti]); oe != nil {
			return nil, oe
		}
	}
	if len(b.gets) > 0 {
		if err := s.answerBatchGets(ctx, b, resp); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// batchGetTable decodes the reads of table ti of a BatchGetRow into b,
// answering in tr the rows that fail on their own. It returns the
// problems that fail the whole request.
func (s *Server) batchGetTable(ctx context.Context, b *batchGets, ti int, t *otsprotocol.TableInBatchGetRowRequest, tr *otsprotocol.TableInBatchGetRowResponse) *otsError {
	meta, oe, fatal := s.batchMeta(ctx, t.GetTableName())
	if fatal {
		return oe
	}
	if oe != nil {
		for ri := range tr.Rows {
			tr.Rows[ri] = &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(false), Error: rowError(oe)}
		}
		return nil
	}
	rs, oe := decodeRead(meta, readParams{
		columns: t.ColumnsToGet, timeRange: t.TimeRange, maxVersions: t.MaxVersions, filter: t.Filter,
		startColumn: t.StartColumn, endColumn: t.EndColumn, token: firstToken(t.Token),
	})
	if oe != nil {
		// The selection is shared by the table's rows: the request is wrong.
		return oe
	}
	for ri, pk := range t.PrimaryKey {
		key, _, oe := decodeKey(meta, pk, false)
		if oe != nil {
			tr.Rows[ri] = &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
			continue
		}
		if dupKey(b.seen, meta.Name, key) {
			return errDuplicateRow
		}
		b.gets = append(b.gets, tablekit.BatchGet{Table: meta.Name, Key: key, Options: rs.opts})
		b.slots = append(b.slots, batchSlot{ti, ri})
		b.specs = append(b.specs, &rs)
	}
	return nil
}

// answerBatchGets reads b's rows from the Backend and answers each in
// resp, once the room for the answer is reserved.
func (s *Server) answerBatchGets(ctx context.Context, b *batchGets, resp *otsprotocol.BatchGetRowResponse) error {
	res, err := s.client.BatchGetRow(ctx, b.gets)
	if err != nil {
		return err
	}
	// The rows to answer, and room for them (twice: the encoded rows,
	// then the message that copies them) before they are encoded.
	rows := make([]*plainbuffer.Row, len(res))
	size := 0
	for i, r := range res {
		if r.Err == nil && r.Found {
			if cols, keep := b.specs[i].finish(r.Row.Key, r.Row.Columns, true); keep {
				row := wireRow(r.Row.Key, cols)
				rows[i] = &row
				size += 4 + plainbuffer.RowSize(row)
			}
		}
	}
	if oe := s.reserveResponse(ctx, 2*int64(size)); oe != nil {
		return oe
	}
	for i, r := range res {
		sl := b.slots[i]
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
	return nil
}

func firstToken(ts [][]byte) []byte {
	for _, t := range ts {
		if len(t) > 0 {
			return t
		}
	}
	return nil
}

// batchWrites are the writes of a (non-atomic) BatchWriteRow: those for
// one Backend batch, and those to tables with secondary indexes, applied
// one by one, each with its index maintenance (the batch is not atomic
// either way).
type batchWrites struct {
	writes  []tablekit.BatchWrite
	slots   []writeSlot
	indexed []indexedSlot
	held    heldRows        // rows admitted past the local transactions' locks
	seen    map[string]bool // the keys written, per table: a key written twice fails the request
	now     int64
}

// writeSlot is a write of a batch and its request row.
type writeSlot struct {
	batchSlot
	w *write
}

// indexedSlot is a write to a table with secondary indexes.
type indexedSlot struct {
	writeSlot
	idx tableIndexes
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
	if _, oe := writeRowCount(&req); oe != nil {
		return nil, oe
	}
	resp := &otsprotocol.BatchWriteRowResponse{Tables: make([]*otsprotocol.TableInBatchWriteRowResponse, len(req.Tables))}
	b := &batchWrites{seen: map[string]bool{}}
	defer b.held.release()
	b.now = s.now()
	for ti, t := range req.Tables {
		resp.Tables[ti] = &otsprotocol.TableInBatchWriteRowResponse{
			TableName: proto.String(t.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchWriteRowResponse, len(t.Rows)),
		}
		if oe := s.batchWriteTable(ctx, b, ti, t, resp.Tables[ti]); oe != nil {
			return nil, oe
		}
	}
	if len(b.writes) > 0 {
		if err := s.applyBatchWrites(ctx, b, resp); err != nil {
			return nil, err
		}
	}
	if err := s.applyIndexedWrites(ctx, b, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// batchWriteTable decodes the writes of table ti of a BatchWriteRow into
// b, answering in tr the rows that fail on their own. It returns the
// problems that fail the whole request.
func (s *Server) batchWriteTable(ctx context.Context, b *batchWrites, ti int, t *otsprotocol.TableInBatchWriteRowRequest, tr *otsprotocol.TableInBatchWriteRowResponse) *otsError {
	meta, oe, fatal := s.batchMeta(ctx, t.GetTableName())
	if fatal {
		return oe
	}
	if oe != nil {
		for ri := range tr.Rows {
			tr.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
		}
		return nil
	}
	idx := s.extra(meta.Name).idx
	for ri, r := range t.Rows {
		w, oe := s.decodeRowWrite(meta, r.GetType(), r.RowChange, r.Condition, r.ReturnContent, b.now)
		if oe == nil && idx.baseOf != "" {
			oe = errIndexWrite(meta.Name)
		}
		if oe != nil {
			tr.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
			continue
		}
		if !hasPlaceholder(w.key) && dupKey(b.seen, meta.Name, w.key) {
			return errDuplicateRow
		}
		if oe := b.held.hold(s, meta.Name, w.key); oe != nil {
			tr.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: oe.proto()}
			continue
		}
		sl := writeSlot{batchSlot{ti, ri}, w}
		if idx.indexed() {
			b.indexed = append(b.indexed, indexedSlot{sl, idx})
			continue
		}
		b.writes = append(b.writes, w.bw)
		b.slots = append(b.slots, sl)
	}
	return nil
}

// applyBatchWrites writes b's writes in one Backend batch and answers each
// row in resp.
func (s *Server) applyBatchWrites(ctx context.Context, b *batchWrites, resp *otsprotocol.BatchWriteRowResponse) error {
	res, err := s.client.BatchWriteRow(ctx, b.writes)
	if err != nil {
		return err
	}
	for i, r := range res {
		sl := b.slots[i]
		var out *otsprotocol.RowInBatchWriteRowResponse
		if r.Err != nil {
			out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: rowError(condError(sl.w.bw.Condition, r.Err))}
		} else {
			sl.w.written(r.Key)
			out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(sl.w, false)), Row: sl.w.returned(r.Increments)}
		}
		resp.Tables[sl.t].Rows[sl.r] = out
	}
	return nil
}

// applyIndexedWrites applies b's writes to tables with secondary indexes
// one by one and answers each row in resp. A failure of the Backend (not
// the row's own) fails the request.
func (s *Server) applyIndexedWrites(ctx context.Context, b *batchWrites, resp *otsprotocol.BatchWriteRowResponse) error {
	for _, sl := range b.indexed {
		sl.idx.mu.Lock()
		incs, err := s.indexedApply(ctx, sl.idx, sl.w)
		sl.idx.mu.Unlock()
		out := &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(sl.w, true)), Row: sl.w.returned(incs)}
		if err != nil {
			if oe := toOTS(err); oe.status >= 500 && !errors.Is(err, tablekit.ErrConditionFailed) {
				return err
			}
			out = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: rowError(condError(sl.w.bw.Condition, err))}
		}
		resp.Tables[sl.t].Rows[sl.r] = out
	}
	return nil
}

// writeRowCount returns the rows of a BatchWriteRow, or the service's
// refusal of none or too many.
func writeRowCount(req *otsprotocol.BatchWriteRowRequest) (int, *otsError) {
	n := 0
	for _, t := range req.Tables {
		n += len(t.Rows)
	}
	return n, checkRowCount(n, tablekit.MaxBatchWrite, "No row is specified in BatchWriteRow.")
}

// checkRowCount refuses a batch of n rows when it has none (with the
// message empty) or more than max.
func checkRowCount(n, max int, empty string) *otsError {
	if n == 0 {
		return paramErr("%s", empty)
	}
	if n > max {
		return paramErr("Rows count exceeds the upper limit: %d.", max)
	}
	return nil
}
