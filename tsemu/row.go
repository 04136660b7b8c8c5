package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// write is one decoded, validated row write: what tablekit needs to apply it
// and what the response needs (the key, the return content).
type write struct {
	bw        tablekit.BatchWrite
	key       tablekit.PrimaryKey
	ret       otsprotocol.ReturnType
	retNames  []string
	sizeBytes int
}

// decodeWrite decodes and validates one row change of kind op
// (PUT, UPDATE or DELETE) against meta, at now.
func decodeWrite(meta *tablekit.TableMeta, op otsprotocol.OperationType, change []byte, cond *otsprotocol.Condition, rc *otsprotocol.ReturnContent, now int64) (*write, *otsError) {
	if cond == nil {
		return nil, errParse
	}
	key, row, oe := decodeKeyAuto(meta, change, false, op != otsprotocol.OperationType_DELETE)
	if oe == nil {
		oe = checkAutoIncrementCondition(key, cond) // autoinc.go
	}
	if oe != nil {
		return nil, oe
	}
	c, oe := condition(meta, cond)
	if oe != nil {
		return nil, oe
	}
	w := &write{key: key, sizeBytes: len(change)}
	if rc != nil {
		w.ret = rc.GetReturnType()
		w.retNames = rc.ReturnColumnNames
	}
	switch op {
	case otsprotocol.OperationType_PUT:
		if row.DeleteMarker {
			return nil, paramErr("A row to put must not carry a delete marker.")
		}
		cols, oe := putColumns(meta, row.Columns, now)
		if oe != nil {
			return nil, oe
		}
		w.bw = tablekit.BatchPut(meta.Name, key, cols, c)
	case otsprotocol.OperationType_UPDATE:
		if row.DeleteMarker {
			return nil, paramErr("A row to update must not carry a delete marker.")
		}
		changes, oe := updateChanges(meta, row.Columns, now)
		if oe != nil {
			return nil, oe
		}
		w.bw = tablekit.BatchUpdate(meta.Name, key, changes, c)
	case otsprotocol.OperationType_DELETE:
		if len(row.Columns) > 0 {
			return nil, paramErr("A row to delete must carry only its primary key.")
		}
		w.bw = tablekit.BatchDelete(meta.Name, key, c)
	default:
		return nil, paramErr("Invalid operation type: %d.", op)
	}
	return w, nil
}

// decodeRowWrite is decodeWrite after the table's own refusals the
// Backend does not know (allow_update=false).
func (s *Server) decodeRowWrite(meta *tablekit.TableMeta, op otsprotocol.OperationType, change []byte, cond *otsprotocol.Condition, rc *otsprotocol.ReturnContent, now int64) (*write, *otsError) {
	if oe := s.checkAllowUpdate(meta.Name, op); oe != nil {
		return nil, oe
	}
	return decodeWrite(meta, op, change, cond, rc, now)
}

// returned encodes a successful write's return content: nothing for
// RT_NONE; the key for RT_PK; the key and the incremented columns (those
// named in return_column_names, or all when none is named) for
// RT_AFTER_MODIFY.
func (w *write) returned(incs []tablekit.Column) []byte {
	switch w.ret {
	case otsprotocol.ReturnType_RT_PK:
		return encodeKey(w.key)
	case otsprotocol.ReturnType_RT_AFTER_MODIFY:
		var cols []tablekit.Column
		for _, c := range incs {
			if len(w.retNames) == 0 || contains(w.retNames, c.Name) {
				cols = append(cols, c)
			}
		}
		return plainbuffer.EncodeRow(wireRow(w.key, cols))
	}
	return nil
}

func contains(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// apply runs one write through the tablekit client.
func (s *Server) apply(ctx context.Context, w *write) ([]tablekit.Column, error) {
	t := s.client.Table(w.bw.Table)
	cond := w.bw.Condition
	switch w.bw.Kind {
	case tablekit.WritePut:
		return nil, w.put(ctx, t, cond) // autoinc.go
	case tablekit.WriteUpdate:
		res, err := t.UpdateRow(ctx, w.key, w.bw.Changes, cond)
		w.written(res.Key)
		return res.Increments, err
	default:
		return nil, t.DeleteRow(ctx, w.key, cond)
	}
}

func (s *Server) now() int64 { return s.clock.Now().UnixMilli() }

// singleWrite serves PutRow, UpdateRow and DeleteRow.
func (s *Server) singleWrite(ctx context.Context, table string, op otsprotocol.OperationType, change []byte, cond *otsprotocol.Condition, rc *otsprotocol.ReturnContent, txn *string) (*otsprotocol.ConsumedCapacity, []byte, error) {
	if txn != nil {
		return s.txnSingleWrite(ctx, *txn, table, op, change, cond, rc)
	}
	meta, oe := s.meta(ctx, table)
	if oe != nil {
		return nil, nil, oe
	}
	w, oe := s.decodeRowWrite(meta, op, change, cond, rc, s.now())
	if oe != nil {
		return nil, nil, oe
	}
	idx := s.extra(meta.Name).idx
	if idx.baseOf != "" {
		return nil, nil, errIndexWrite(meta.Name)
	}
	release, oe := s.holdRow(meta.Name, w.key)
	if oe != nil {
		return nil, nil, oe
	}
	defer release()
	var incs []tablekit.Column
	var err error
	if idx.indexed() {
		idx.mu.Lock()
		incs, err = s.indexedApply(ctx, idx, w)
		idx.mu.Unlock()
	} else {
		incs, err = s.apply(ctx, w)
	}
	if err != nil {
		return nil, nil, condError(w.bw.Condition, err)
	}
	return capacity(writeCapacity(w, idx.indexed())), w.returned(incs), nil
}

func (s *Server) putRow(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.PutRowRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	cc, row, err := s.singleWrite(ctx, req.GetTableName(), otsprotocol.OperationType_PUT, req.Row, req.Condition, req.ReturnContent, req.TransactionId)
	if err != nil {
		return nil, err
	}
	return &otsprotocol.PutRowResponse{Consumed: cc, Row: row}, nil
}

func (s *Server) updateRow(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.UpdateRowRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	cc, row, err := s.singleWrite(ctx, req.GetTableName(), otsprotocol.OperationType_UPDATE, req.RowChange, req.Condition, req.ReturnContent, req.TransactionId)
	if err != nil {
		return nil, err
	}
	return &otsprotocol.UpdateRowResponse{Consumed: cc, Row: row}, nil
}

func (s *Server) deleteRow(ctx context.Context, body []byte) (proto.Message, error) {
	var req otsprotocol.DeleteRowRequest
	if err := unmarshal(body, &req); err != nil {
		return nil, err
	}
	cc, row, err := s.singleWrite(ctx, req.GetTableName(), otsprotocol.OperationType_DELETE, req.PrimaryKey, req.Condition, req.ReturnContent, req.TransactionId)
	if err != nil {
		return nil, err
	}
	return &otsprotocol.DeleteRowResponse{Consumed: cc, Row: row}, nil
}

func (s *Server) getRow(ctx context.Context, body []byte) (proto.Message, error) {
	req, meta, err := decodeTableRequest[otsprotocol.GetRowRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	key, _, oe := decodeKey(meta, req.PrimaryKey, false)
	if oe != nil {
		return nil, oe
	}
	rs, oe := decodeRead(meta, readParams{
		columns: req.ColumnsToGet, timeRange: req.TimeRange, maxVersions: req.MaxVersions, filter: req.Filter,
		startColumn: req.StartColumn, endColumn: req.EndColumn, token: req.Token,
	})
	if oe != nil {
		return nil, oe
	}
	r, found, err := s.readRow(ctx, req.TransactionId, meta, key, &rs)
	if err != nil {
		return nil, err
	}
	// A missing row is an empty, but set, row field: proto2 requires it.
	var rows []plainbuffer.Row
	size := 0
	if found {
		if cols, keep := rs.finish(r.Key, r.Columns, true); keep {
			rows = []plainbuffer.Row{wireRow(r.Key, cols)}
			size = 4 + plainbuffer.RowSize(rows[0])
		}
	}
	if oe := s.reserveResponse(ctx, int64(size)); oe != nil {
		return nil, oe
	}
	return &otsprotocol.GetRowResponse{Consumed: capacity(units(size), 0), Row: rowsAnswer(ctx, rows)}, nil
}
