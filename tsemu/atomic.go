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
	if !tablekit.CapabilitiesOf(s.backend).AtomicWrite {
		return nil, unsupported("Atomic BatchWriteRow (is_atomic) over a backend that cannot write several rows atomically (tablekit Capabilities.AtomicWrite is false)")
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
	if n > tablekit.MaxAtomicWrite {
		return nil, paramErr("Rows count of an atomic BatchWriteRow exceeds the upper limit of the tablekit Tablestore emulator: %d.", tablekit.MaxAtomicWrite)
	}
	resp := &otsprotocol.BatchWriteRowResponse{Tables: make([]*otsprotocol.TableInBatchWriteRowResponse, len(req.Tables))}
	metas := make([]*tablekit.TableMeta, len(req.Tables))
	var fail *atomicFailure
	failAt := func(t, r int, oe *otsError) {
		if fail == nil {
			fail = &atomicFailure{t: t, r: r, oe: oe}
		}
	}
	// First the tables: a missing one fails the whole request.
	for ti, t := range req.Tables {
		resp.Tables[ti] = &otsprotocol.TableInBatchWriteRowResponse{
			TableName: proto.String(t.GetTableName()),
			Rows:      make([]*otsprotocol.RowInBatchWriteRowResponse, len(t.Rows)),
		}
		meta, oe := s.meta(ctx, t.GetTableName())
		if oe == errNoTable || (oe != nil && oe.status >= 500) {
			return nil, oe
		}
		if oe != nil {
			failAt(ti, 0, oe)
			continue
		}
		idx := s.extra(meta.Name).idx
		if idx.indexed() {
			return nil, unsupported(fmt.Sprintf("Atomic BatchWriteRow (is_atomic) on table '%s', which has secondary indexes,", meta.Name))
		}
		if idx.baseOf != "" {
			failAt(ti, 0, errIndexWrite(meta.Name))
		}
		metas[ti] = meta
		if ti > 0 && meta.Name != metas[0].Name {
			failAt(ti, 0, paramErr("An atomic BatchWriteRow writes rows of one table: table '%s' follows table '%s'.", meta.Name, metas[0].Name))
		}
	}
	type slot struct {
		t, r int
		w    *write
	}
	// A row written again in the batch joins its first write (group):
	// the service applies the rows in order.
	type group struct {
		bw    tablekit.BatchWrite
		slots []slot
	}
	var groups []*group
	byKey := map[string]*group{}
	now := s.now()
	for ti, t := range req.Tables {
		meta := metas[ti]
		if meta == nil {
			continue
		}
		for ri, r := range t.Rows {
			w, oe := decodeWrite(meta, r.GetType(), r.RowChange, r.Condition, r.ReturnContent, now)
			if oe != nil {
				failAt(ti, ri, oe)
				continue
			}
			if len(groups) > 0 {
				first := groups[0].bw.Key[0]
				if !w.key[0].Value.Equal(first.Value) {
					failAt(ti, ri, paramErr("An atomic BatchWriteRow writes rows of one partition key: %s=%v is not %s=%v, the first row's.",
						w.key[0].Name, w.key[0].Value, first.Name, first.Value))
				}
			}
			id := fmt.Sprintf("\x01%d,%d", ti, ri) // a key to assign: a new row, never merged
			if !hasPlaceholder(w.key) {
				id = meta.Name + "\x00" + string(codec.EncodeKey(w.key))
			}
			if g := byKey[id]; g != nil {
				bw, oe := mergeWrites(meta, g.bw, w.bw, now)
				if oe != nil {
					failAt(ti, ri, oe)
				}
				g.bw = bw
				g.slots = append(g.slots, slot{ti, ri, w})
				continue
			}
			g := &group{bw: w.bw, slots: []slot{{ti, ri, w}}}
			byKey[id] = g
			groups = append(groups, g)
		}
	}
	if fail != nil {
		return fail.answer(resp, req), nil
	}
	writes := make([]tablekit.BatchWrite, len(groups))
	for i, g := range groups {
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
		if !errors.As(err, &ae) || ae.Index < 0 || ae.Index >= len(groups) {
			return nil, err
		}
		rowErr := condError(writes[ae.Index].Condition, unprefixed(ae.Err, ae.Index))
		oe := toOTS(rowErr)
		if oe.status >= 500 {
			return nil, err
		}
		sl := groups[ae.Index].slots[0]
		return (&atomicFailure{t: sl.t, r: sl.r, oe: oe}).answer(resp, req), nil
	}
	for i, g := range groups {
		for _, sl := range g.slots {
			sl.w.written(res[i].Key)
			resp.Tables[sl.t].Rows[sl.r] = &otsprotocol.RowInBatchWriteRowResponse{
				IsOk: proto.Bool(true), Consumed: capacity(writeCapacity(sl.w, false)), Row: sl.w.returned(res[i].Increments)}
		}
	}
	return resp, nil
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
