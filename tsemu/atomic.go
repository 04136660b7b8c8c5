package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/rowmodel"
)

// Atomic batches (BatchWriteRow with is_atomic): every row of one table
// and one partition key (the value of the first primary-key column), all
// applied or none, through the Backend's tablekit.AtomicWriter (one
// tablekit.Client.AtomicWrite). A request-wide problem fails the whole call
// as in a plain batch (no row, over the row limit, a missing
// table, unparsable). A row written twice or more is applied in order, as
// the Go SDK's own test of an atomic batch expects: the emulator merges the
// writes of one row into one (see mergeWrites). When a row fails — its own problem (its key or cells
// are invalid, its condition fails), or the atomic rules (a second table,
// another partition key) — nothing is written and every row of the answer
// fails, with the call itself answered 200 as the Go SDK's own test of a
// batch across two partition keys expects: the failing row carries its
// error, every other row the same code with a message (prefixed
// atomicNotApplied) naming the failing row.
//
// Over a Backend without atomic writes (tablekit.CapabilitiesOf(backend)
// .AtomicWrite false), is_atomic is refused as the emulator refuses every
// feature it lacks: a 400 OTSParameterInvalid saying so, nothing written.
// So are atomic batches of more than tablekit.MaxAtomicWrite rows and of a
// table with secondary indexes.

// atomicNotApplied begins the message of the rows of a failed atomic
// batch that did not fail themselves.
const atomicNotApplied = "Not applied: the atomic batch failed at row "

func (s *Server) atomicBatchWriteRow(ctx context.Context, req *otsprotocol.BatchWriteRowRequest) (proto.Message, error) {
	if oe := s.checkAtomicBatch(req); oe != nil {
		return nil, oe
	}
	b := &atomicBatch{
		resp:  &otsprotocol.BatchWriteRowResponse{Tables: make([]*otsprotocol.TableInBatchWriteRowResponse, len(req.Tables))},
		metas: make([]*tablekit.TableMeta, len(req.Tables)),
		byKey: map[string]*atomicGroup{},
	}
	if oe := s.atomicTables(ctx, b, req); oe != nil {
		return nil, oe
	}
	s.atomicRows(b, req)
	if b.fail != nil {
		return b.fail.answer(b.resp, req), nil
	}
	return s.applyAtomic(ctx, b, req)
}

// checkAtomicBatch refuses an atomic batch the emulator cannot apply
// atomically at all: over a Backend without atomic writes, or of more rows
// than one tablekit atomic write takes.
func (s *Server) checkAtomicBatch(req *otsprotocol.BatchWriteRowRequest) *otsError {
	if !tablekit.CapabilitiesOf(s.backend).AtomicWrite {
		return unsupported("Atomic BatchWriteRow (is_atomic) over a backend that cannot write several rows atomically (tablekit Capabilities.AtomicWrite is false)")
	}
	n, oe := writeRowCount(req)
	if oe != nil {
		return oe
	}
	if n > tablekit.MaxAtomicWrite {
		return paramErr("Rows count of an atomic BatchWriteRow exceeds the upper limit of the tablekit Tablestore emulator: %d.", tablekit.MaxAtomicWrite)
	}
	return nil
}

// atomicBatch is an atomic BatchWriteRow being decoded: the answer it
// builds, each request table's metadata (nil for a table that failed), the
// writes grouped by the row they write, and the first row to fail.
type atomicBatch struct {
	resp   *otsprotocol.BatchWriteRowResponse
	metas  []*tablekit.TableMeta
	groups []*atomicGroup
	byKey  map[string]*atomicGroup
	fail   *atomicFailure
}

// atomicGroup is one row's writes: a row written again in the batch joins
// its first write, merged into bw, as the service applies the rows in
// order. slots are the request rows (table t, row r) that wrote it.
type atomicGroup struct {
	bw    tablekit.BatchWrite
	slots []atomicSlot
}

type atomicSlot struct {
	t, r int
	w    *write
}

// failAt records row r of table t as failing with oe, unless an earlier
// row failed already.
func (b *atomicBatch) failAt(t, r int, oe *otsError) {
	if b.fail == nil {
		b.fail = &atomicFailure{t: t, r: r, oe: oe}
	}
}

// atomicTables reads the request tables' metadata into b. A missing table
// (or the Backend's failure) fails the whole request; a table the batch
// may not write fails the batch at its first row.
func (s *Server) atomicTables(ctx context.Context, b *atomicBatch, req *otsprotocol.BatchWriteRowRequest) *otsError {
	for ti, t := range req.Tables {
		b.resp.Tables[ti] = &otsprotocol.TableInBatchWriteRowResponse{
			TableName: proto.String(t.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchWriteRowResponse, len(t.Rows)),
		}
		meta, oe, fatal := s.batchMeta(ctx, t.GetTableName())
		if fatal {
			return oe
		}
		if oe != nil {
			b.failAt(ti, 0, oe)
			continue
		}
		idx := s.extra(meta.Name).idx
		if idx.indexed() {
			return unsupported(fmt.Sprintf("Atomic BatchWriteRow (is_atomic) on table '%s', which has secondary indexes,", meta.Name))
		}
		if idx.baseOf != "" {
			b.failAt(ti, 0, errIndexWrite(meta.Name))
		}
		b.metas[ti] = meta
		if ti > 0 && meta.Name != b.metas[0].Name {
			b.failAt(ti, 0, paramErr("An atomic BatchWriteRow writes rows of one table: table '%s' follows table '%s'.", meta.Name, b.metas[0].Name))
		}
	}
	return nil
}

// atomicRows decodes the rows of the tables atomicTables kept into b's
// groups, failing the batch at a row that is invalid, of another
// partition key than the first row's, or that cannot be merged with the
// earlier writes of its row.
func (s *Server) atomicRows(b *atomicBatch, req *otsprotocol.BatchWriteRowRequest) {
	now := s.now()
	for ti, t := range req.Tables {
		meta := b.metas[ti]
		if meta == nil {
			continue
		}
		for ri, r := range t.Rows {
			w, oe := s.decodeRowWrite(meta, r.GetType(), r.RowChange, r.Condition, r.ReturnContent, now)
			if oe != nil {
				b.failAt(ti, ri, oe)
				continue
			}
			if len(b.groups) > 0 {
				first := b.groups[0].bw.Key[0]
				if !w.key[0].Value.Equal(first.Value) {
					b.failAt(ti, ri, paramErr("An atomic BatchWriteRow writes rows of one partition key: %s=%v is not %s=%v, the first row's.",
						w.key[0].Name, w.key[0].Value, first.Name, first.Value))
				}
			}
			b.add(meta, atomicSlot{ti, ri, w}, now)
		}
	}
}

// add puts the write of slot sl into the group of its row, merging it with
// the row's earlier writes, or into a new group.
func (b *atomicBatch) add(meta *tablekit.TableMeta, sl atomicSlot, now int64) {
	id := fmt.Sprintf("\x01%d,%d", sl.t, sl.r) // a key to assign: a new row, never merged
	if !hasPlaceholder(sl.w.key) {
		id = meta.Name + "\x00" + string(codec.EncodeKey(sl.w.key))
	}
	if g := b.byKey[id]; g != nil {
		bw, oe := mergeWrites(meta, g.bw, sl.w.bw, now)
		if oe != nil {
			b.failAt(sl.t, sl.r, oe)
		}
		g.bw = bw
		g.slots = append(g.slots, sl)
		return
	}
	g := &atomicGroup{bw: sl.w.bw, slots: []atomicSlot{sl}}
	b.byKey[id] = g
	b.groups = append(b.groups, g)
}

// applyAtomic writes b's groups in one Client.AtomicWrite and answers
// every row: all written, or all failed at the write that failed.
func (s *Server) applyAtomic(ctx context.Context, b *atomicBatch, req *otsprotocol.BatchWriteRowRequest) (proto.Message, error) {
	writes := make([]tablekit.BatchWrite, len(b.groups))
	for i, g := range b.groups {
		writes[i] = g.bw
	}
	release, oe := s.holdRow(writes[0].Table, writes[0].Key)
	if oe != nil {
		return nil, oe
	}
	defer release()
	res, err := s.client.AtomicWrite(ctx, writes)
	if err != nil {
		var ae *tablekit.AtomicWriteError
		if !errors.As(err, &ae) || ae.Index < 0 || ae.Index >= len(b.groups) {
			return nil, err
		}
		rowErr := condError(writes[ae.Index].Condition, unprefixed(ae.Err, ae.Index))
		oe := toOTS(rowErr)
		if oe.status >= 500 {
			return nil, err
		}
		sl := b.groups[ae.Index].slots[0]
		return (&atomicFailure{t: sl.t, r: sl.r, oe: oe}).answer(b.resp, req), nil
	}
	for i, g := range b.groups {
		for _, sl := range g.slots {
			sl.w.written(res[i].Key)
			b.resp.Tables[sl.t].Rows[sl.r] = &otsprotocol.RowInBatchWriteRowResponse{
				IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(sl.w, false)), Row: sl.w.returned(res[i].Increments)}
		}
	}
	return b.resp, nil
}

// mergeWrites returns the one write whose effect on a row is w's followed
// by next's, checked with w's condition. The emulator merges only writes
// it can merge exactly: next must carry no condition (it would be checked
// against the row as w leaves it), and neither may increment a column
// (each row returns its own increments).
func mergeWrites(meta *tablekit.TableMeta, w, next tablekit.BatchWrite, now int64) (tablekit.BatchWrite, *otsError) {
	if !next.Condition.IsZero() || hasIncrement(w.Changes) || hasIncrement(next.Changes) {
		return w, unsupported("Writing a row again in an atomic BatchWriteRow with a condition or an increment")
	}
	switch {
	case next.Kind != tablekit.WriteUpdate: // a put or a delete replaces the row
		next.Condition = w.Condition
		return next, nil
	case w.Kind == tablekit.WriteUpdate:
		w.Changes = append(slices.Clip(w.Changes), next.Changes...)
		return w, nil
	}
	// An update of the row a put or a delete leaves: a put of what remains,
	// or a delete when nothing does.
	var row *rowmodel.Row
	if w.Kind == tablekit.WritePut {
		r := rowmodel.Put(w.Columns, meta.Options, now)
		row = &r
	}
	after, _, err := rowmodel.Update(row, next.Changes, meta.Options, now)
	if err != nil {
		return w, toOTS(err)
	}
	if len(after.Cells) == 0 && !after.Marker {
		return tablekit.BatchWrite{Table: w.Table, Key: w.Key, Kind: tablekit.WriteDelete, Condition: w.Condition}, nil
	}
	return tablekit.BatchWrite{Table: w.Table, Key: w.Key, Kind: tablekit.WritePut, Columns: after.Cells, Condition: w.Condition}, nil
}

func hasIncrement(changes []tablekit.Change) bool {
	return slices.ContainsFunc(changes, func(c tablekit.Change) bool { return c.Kind == tablekit.ChangeIncrement })
}

// atomicFailure is the row an atomic batch failed at (table t, row r of
// the request) and its error.
type atomicFailure struct {
	t, r int
	oe   *otsError
}

// answer fills every row of resp as failed: row (t, r) with its error,
// the others with the same code and a message naming it.
func (f *atomicFailure) answer(resp *otsprotocol.BatchWriteRowResponse, req *otsprotocol.BatchWriteRowRequest) *otsprotocol.BatchWriteRowResponse {
	other := &otsprotocol.Error{Code: proto.String(f.oe.code), Message: proto.String(fmt.Sprintf("%s%d of table '%s' (%s: %s); nothing was written.",
		atomicNotApplied, f.r, req.Tables[f.t].GetTableName(), f.oe.code, f.oe.msg))}
	for ti, t := range resp.Tables {
		for ri := range t.Rows {
			e := other
			if ti == f.t && ri == f.r {
				e = f.oe.proto()
			}
			t.Rows[ri] = &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: e}
		}
	}
	return resp
}

// unprefixed is err, the error of write i of a Client.AtomicWrite, without
// the "write i: " its message begins with, so that it reads as the row's
// own error (and condError recognizes a failed existence condition).
func unprefixed(err error, i int) error {
	var te *tablekit.Error
	if !errors.As(err, &te) {
		return err
	}
	cp := *te
	cp.Msg = strings.TrimPrefix(cp.Msg, fmt.Sprintf("write %d: ", i))
	return &cp
}
