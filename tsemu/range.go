package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// GetRange pages: at most MaxPageRows rows and MaxPageSize bytes of
// PlainBuffer rows per response (Tablestore's documented 5000 rows / 4 MB).
const (
	MaxPageRows = tablekit.MaxPageRows
	MaxPageSize = tablekit.MaxPageSize
)

// getRange serves GetRange: one Backend page (rangePage, backendcalls.go
// says why not the Client's GetRange), its rows cut at MaxPageSize. The
// checks tablekit's client applies to a range (key schema with INF bounds,
// direction order, limit, projection names, filter, version selection) are
// all done here first, with the service's messages, by decodeKey,
// decodeRead and the code below.
func (s *Server) getRange(ctx context.Context, body []byte) (proto.Message, error) {
	req, meta, err := decodeTableRequest[otsprotocol.GetRangeRequest](ctx, s, body)
	if err != nil {
		return nil, err
	}
	start, _, oe := decodeKey(meta, req.InclusiveStartPrimaryKey, true)
	if oe != nil {
		return nil, oe
	}
	end, _, oe := decodeKey(meta, req.ExclusiveEndPrimaryKey, true)
	if oe != nil {
		return nil, oe
	}
	backward := req.GetDirection() == otsprotocol.Direction_BACKWARD
	c := tablekit.CompareKeys(start, end)
	if !backward && c >= 0 {
		return nil, paramErr("Begin key must less than end key in FORWARD")
	}
	if backward && c <= 0 {
		return nil, paramErr("Begin key must more than end key in BACKWARD")
	}
	limit := MaxPageRows
	if req.Limit != nil {
		if req.GetLimit() <= 0 {
			return nil, paramErr("The limit must be greater than 0.")
		}
		limit = min(int(req.GetLimit()), MaxPageRows)
	}
	if !req.GetReturnEntirePrimaryKeys() {
		return nil, unsupported("return_entire_primary_keys=false")
	}
	rs, oe := decodeRead(meta, readParams{
		columns: req.ColumnsToGet, timeRange: req.TimeRange, maxVersions: req.MaxVersions, filter: req.Filter,
		startColumn: req.StartColumn, endColumn: req.EndColumn, token: req.Token,
	})
	if oe != nil {
		return nil, oe
	}
	page, err := s.readRange(ctx, req.TransactionId, &tablekit.GetRangeRequest{
		Meta: meta, Start: start, End: end, Backward: backward, Limit: limit, Read: rs.spec, Now: s.now(),
	})
	if err != nil {
		return nil, err
	}
	return s.rangeAnswer(ctx, meta, req, &rs, page)
}

// rangeAnswer encodes page as GetRange's answer: one header, then the
// rows, cut before the one that would pass 4 MB (a first row is always
// sent, so a range always progresses); the answer's room is reserved
// before it is encoded. The page is cut by its PlainBuffer size in either
// block type (a SimpleRowMatrix is smaller).
func (s *Server) rangeAnswer(ctx context.Context, meta *tablekit.TableMeta, req *otsprotocol.GetRangeRequest, rs *readSpec, page *tablekit.GetRangeResponse) (proto.Message, error) {
	matrix := req.GetDataBlockTypeHint() == otsprotocol.DataBlockType_DBT_SIMPLE_ROW_MATRIX
	var rows []plainbuffer.Row
	var mrows []matrixRow
	size := 4
	next := page.Next
	for _, r := range page.Rows {
		cols, keep := rs.finish(r.Key, r.Columns, false)
		if !keep {
			continue
		}
		row := wireRow(r.Key, cols)
		k := plainbuffer.RowSize(row)
		if len(rows) > 0 && size+k > MaxPageSize {
			next = r.Key
			break
		}
		rows = append(rows, row)
		if matrix {
			mrows = append(mrows, matrixRow{r.Key, cols})
		}
		size += k
	}
	if oe := s.reserveResponse(ctx, int64(size)); oe != nil {
		return nil, oe
	}
	resp := &otsprotocol.GetRangeResponse{
		Consumed:      capacity(units(size), 0),
		DataBlockType: otsprotocol.DataBlockType_DBT_PLAIN_BUFFER.Enum(),
		CompressType:  otsprotocol.CompressType_CPT_NONE.Enum(),
	}
	if matrix {
		resp.DataBlockType = otsprotocol.DataBlockType_DBT_SIMPLE_ROW_MATRIX.Enum()
		resp.Rows = encodeMatrix(meta, req.ColumnsToGet, mrows)
	} else {
		resp.Rows = rowsAnswer(ctx, rows)
	}
	if next != nil {
		// Next is a stored row's key, never INF_MIN/INF_MAX (the Go SDK's
		// reader would panic on those).
		resp.NextStartPrimaryKey = encodeKey(next)
	}
	return resp, nil
}
