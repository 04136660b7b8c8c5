package aliyuntablestore

import (
	"context"
	"slices"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

// keyAndCondition converts what every row change starts with.
func keyAndCondition(key tablekit.PrimaryKey, c tablekit.Condition) (*tablestore.PrimaryKey, *tablestore.RowCondition, error) {
	pk, err := nativeKey(key)
	if err != nil {
		return nil, nil, err
	}
	cond, err := nativeCondition(c)
	if err != nil {
		return nil, nil, err
	}
	return pk, cond, nil
}

// writeChange builds the SDK change of one write: a PutRowChange,
// UpdateRowChange or DeleteRowChange.
func writeChange(w *tablekit.WriteRequest) (tablestore.RowChange, error) {
	w, err := newRowWrite(w) // autoinc.go
	if err != nil {
		return nil, err
	}
	switch w.Kind {
	case tablekit.WritePut:
		return putChange(w)
	case tablekit.WriteUpdate:
		if asPut(w) { // autoinc.go
			return putOfUpdate(w)
		}
		return updateChange(w)
	case tablekit.WriteDelete:
		return deleteChange(w)
	}
	return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "write of unknown kind %d", w.Kind)
}

// putChange builds the SDK change of a put: every cell with its
// (resolved) version.
func putChange(req *tablekit.WriteRequest) (*tablestore.PutRowChange, error) {
	pk, cond, err := keyAndCondition(req.Key, req.Condition)
	if err != nil {
		return nil, err
	}
	ch := &tablestore.PutRowChange{
		TableName:  req.Meta.Name,
		PrimaryKey: pk,
		Columns:    make([]tablestore.AttributeColumn, len(req.Columns)),
		Condition:  cond,
	}
	if assigns(req) {
		ch.SetReturnPk()
	}
	for i, c := range req.Columns {
		x, ok := nativeValue(c.Value)
		if !ok {
			return nil, badValue("column "+c.Name, c.Value)
		}
		ch.Columns[i] = tablestore.AttributeColumn{ColumnName: c.Name, Value: x, Timestamp: c.Version}
	}
	return ch, nil
}

// updateChange builds the SDK change of an update. Increments ask for the
// row after the change (RT_AFTER_MODIFY) restricted to the incremented
// columns, which is how Tablestore returns their new values.
func updateChange(req *tablekit.WriteRequest) (*tablestore.UpdateRowChange, error) {
	pk, cond, err := keyAndCondition(req.Key, req.Condition)
	if err != nil {
		return nil, err
	}
	ch := &tablestore.UpdateRowChange{
		TableName:  req.Meta.Name,
		PrimaryKey: pk,
		Columns:    make([]tablestore.ColumnToUpdate, 0, len(req.Changes)),
		Condition:  cond,
	}
	if assigns(req) { // sent in a BatchWriteRow, which honours RT_PK (autoinc.go)
		ch.ReturnType = tablestore.ReturnType_RT_PK
	}
	for _, c := range req.Changes {
		switch c.Kind {
		case tablekit.ChangePut:
			x, ok := nativeValue(c.Value)
			if !ok {
				return nil, badValue("column "+c.Column, c.Value)
			}
			ch.PutColumnWithTimestamp(c.Column, x, c.Version)
		case tablekit.ChangeDeleteVersion:
			ch.DeleteColumnWithTimestamp(c.Column, c.Version)
		case tablekit.ChangeDeleteColumn:
			ch.DeleteColumn(c.Column)
		case tablekit.ChangeIncrement:
			ch.IncrementColumn(c.Column, c.Delta)
			if ch.ReturnType != tablestore.ReturnType_RT_AFTER_MODIFY {
				ch.SetReturnIncrementValue()
			}
			if !slices.Contains(ch.ColumnNamesToReturn, c.Column) {
				ch.AppendIncrementColumnToReturn(c.Column)
			}
		default:
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "column %q: unknown change kind %d", c.Column, c.Kind)
		}
	}
	return ch, nil
}

func deleteChange(req *tablekit.WriteRequest) (*tablestore.DeleteRowChange, error) {
	pk, cond, err := keyAndCondition(req.Key, req.Condition)
	if err != nil {
		return nil, err
	}
	return &tablestore.DeleteRowChange{TableName: req.Meta.Name, PrimaryKey: pk, Condition: cond}, nil
}

// hasIncrement reports whether an update has an increment.
func hasIncrement(changes []tablekit.Change) bool {
	for _, c := range changes {
		if c.Kind == tablekit.ChangeIncrement {
			return true
		}
	}
	return false
}

// noReplay reports whether sending a write twice could change its outcome:
// an increment would add twice, a condition could fail on the write's own
// first effect, a key to assign would write a second row. Puts and deletes
// at resolved versions are idempotent.
func noReplay(w *tablekit.WriteRequest) bool {
	return !w.Condition.IsZero() || (w.Kind == tablekit.WriteUpdate && hasIncrement(w.Changes)) || assigns(w)
}

// Write implements tablekit.Backend: a put is PutRow, an update
// UpdateRow, a delete DeleteRow. An update whose key holds the
// auto-increment placeholder is a one-row BatchWriteRow (see autoinc.go).
func (b *Backend) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	ch, err := writeChange(req)
	if err != nil {
		return nil, err
	}
	replay := noReplay(req)
	switch ch := ch.(type) {
	case *tablestore.PutRowChange:
		sreq := &tablestore.PutRowRequest{PutRowChange: ch}
		resp, err := doCall(ctx, b, "/PutRow", sreq, replay, b.c.PutRow)
		if err != nil {
			return nil, staleKey(err)
		}
		return writeResult(req, &resp.PrimaryKey, nil)
	case *tablestore.UpdateRowChange:
		if assigns(req) {
			out, err := b.BatchWriteRow(ctx, []*tablekit.WriteRequest{req})
			if err != nil {
				return nil, err
			}
			return out[0].Update, out[0].Err
		}
		sreq := &tablestore.UpdateRowRequest{UpdateRowChange: ch}
		resp, err := doCall(ctx, b, "/UpdateRow", sreq, replay, b.c.UpdateRow)
		if err != nil {
			return nil, staleKey(err)
		}
		return incrementResult(req, resp.Columns)
	case *tablestore.DeleteRowChange:
		sreq := &tablestore.DeleteRowRequest{DeleteRowChange: ch}
		_, err = doCall(ctx, b, "/DeleteRow", sreq, replay, b.c.DeleteRow)
		return nil, staleKey(err)
	}
	return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "write of unknown kind %d", req.Kind)
}

// incrementResult maps the columns an RT_AFTER_MODIFY answer returned to
// the increments of req, in the order they were given. When a column is
// incremented several times in one update and the server returns one cell
// per increment (tsemu does), they map by position; when it returns the
// column once (its final value), the earlier increments' values are that
// value minus the later deltas. Versions are the server's; a server that
// returns none gets req.Now.
func incrementResult(req *tablekit.WriteRequest, cols []*tablestore.AttributeColumn) (*tablekit.UpdateResult, error) {
	res := &tablekit.UpdateResult{}
	if !hasIncrement(req.Changes) {
		return res, nil
	}
	returned := map[string][]*tablestore.AttributeColumn{}
	for _, rc := range cols {
		if rc != nil {
			returned[rc.ColumnName] = append(returned[rc.ColumnName], rc)
		}
	}
	count := map[string]int{}
	for _, c := range req.Changes {
		if c.Kind == tablekit.ChangeIncrement {
			count[c.Column]++
		}
	}
	seen := map[string]int{}
	for i, c := range req.Changes {
		if c.Kind != tablekit.ChangeIncrement {
			continue
		}
		k := seen[c.Column]
		seen[c.Column]++
		got := returned[c.Column]
		if len(got) == 0 {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the write was applied, but the server did not return the new value of incremented column %q", c.Column)
		}
		var cell *tablestore.AttributeColumn
		var v int64
		if len(got) == count[c.Column] {
			cell = got[k]
			x, ok := cell.Value.(int64)
			if !ok {
				return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the write was applied, but the server returned incremented column %q as %T, not an Integer", c.Column, cell.Value)
			}
			v = x
		} else {
			cell = got[len(got)-1]
			x, ok := cell.Value.(int64)
			if !ok {
				return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the write was applied, but the server returned incremented column %q as %T, not an Integer", c.Column, cell.Value)
			}
			v = x
			for _, later := range req.Changes[i+1:] {
				if later.Column != c.Column {
					continue
				}
				if later.Kind != tablekit.ChangeIncrement {
					return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the write was applied, but the server returned column %q once, so the value of an increment followed by another change of that column cannot be known", c.Column)
				}
				v -= later.Delta
			}
		}
		version := cell.Timestamp
		if version == 0 {
			version = req.Now
		}
		res.Increments = append(res.Increments, tablekit.Column{Name: c.Column, Value: tablekit.Integer(v), Version: version})
	}
	return res, nil
}
