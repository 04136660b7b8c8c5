package aliyuntablestore

import (
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// Auto-increment key columns (SPEC §14) are Tablestore's own: a key column
// declared AUTO_INCREMENT at CreateTable (read back from DescribeTable), the
// tablekit.AutoIncrement placeholder sent as the SDK's AUTO_INCREMENT value,
// and the key the service assigned read from the answer with ReturnType
// RT_PK (PutRow, and each row of BatchWriteRow, atomic or not).
//
// The SDK's UpdateRow answers no key, and a row change returns either its
// key (RT_PK) or its incremented columns (RT_AFTER_MODIFY), not both. So an
// update whose key holds the placeholder goes out as a one-row BatchWriteRow
// with RT_PK; one that also increments creates its row (the key is new),
// so it goes out as the put of the row that update leaves on an absent row
// (rowmodel.Update, the rule every backend shares), whose increments are
// known before the call. A write whose key holds the placeholder is never
// sent twice: a second attempt would write a second row.
//
// Tablestore takes no condition on such a write (400 "Invalid
// expect:EXPECT_NOT_EXIST when modify row with pk auto increment"; tsemu
// answers so too), but SPEC §14 gives it one, evaluated against the absent
// row it creates: the adapter evaluates it (rowmodel.Check, the rule every
// backend shares) and sends the write without it, or, when it fails,
// nothing.

// assigns reports whether w's key holds the placeholder.
func assigns(w *tablekit.WriteRequest) bool { return w.Key.AutoIncrementIndex() >= 0 }

// asPut reports whether w is an update that goes out as a put (see above).
func asPut(w *tablekit.WriteRequest) bool {
	return w.Kind == tablekit.WriteUpdate && assigns(w) && hasIncrement(w.Changes)
}

// newRowUpdate is what update w does to an absent row: the cells it
// leaves and its increments' values.
func newRowUpdate(w *tablekit.WriteRequest) (rowmodel.Row, []tablekit.Column, error) {
	return rowmodel.Update(nil, w.Changes, w.Meta.Options, w.Now)
}

// putOfUpdate is the put change of an update w for which asPut holds.
func putOfUpdate(w *tablekit.WriteRequest) (*tablestore.PutRowChange, error) {
	row, _, err := newRowUpdate(w)
	if err != nil {
		return nil, err
	}
	put := *w
	put.Kind, put.Columns, put.Changes = tablekit.WritePut, row.Cells, nil
	return putChange(&put)
}

// writeResult is the result of write req, which succeeded, from the
// answer's key (RT_PK) and columns (RT_AFTER_MODIFY): nil for a put whose
// key was given, the increments of an update, and the key written when req's
// key held the placeholder.
func writeResult(req *tablekit.WriteRequest, pk *tablestore.PrimaryKey, cols []*tablestore.AttributeColumn) (*tablekit.UpdateResult, error) {
	if !assigns(req) {
		if req.Kind != tablekit.WriteUpdate {
			return nil, nil
		}
		return incrementResult(req, cols)
	}
	res := &tablekit.UpdateResult{}
	if asPut(req) {
		_, incs, err := newRowUpdate(req)
		if err != nil {
			return nil, err
		}
		res.Increments = incs
	}
	if pk == nil || len(pk.PrimaryKeys) != len(req.Key) {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "table %q: the write was applied, but the server did not return the primary key it assigned", req.Meta.Name)
	}
	k, err := keyOf(pk)
	if err != nil {
		return nil, err
	}
	i := req.Key.AutoIncrementIndex()
	if k[i].Name != req.Key[i].Name || k[i].Value.Type() != tablekit.TypeInteger {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "table %q: the write was applied, but the server returned key %v for auto-increment column %q", req.Meta.Name, k, req.Key[i].Name)
	}
	res.Key = k
	return res, nil
}

// newRowWrite is w without its condition when its key holds the
// placeholder (see above): the condition holds on the absent row, or w
// fails with ErrConditionFailed.
func newRowWrite(w *tablekit.WriteRequest) (*tablekit.WriteRequest, error) {
	if !assigns(w) || w.Condition.IsZero() {
		return w, nil
	}
	if err := rowmodel.Check(nil, w.Meta.Options, w.Condition, w.Now); err != nil {
		return nil, err
	}
	cp := *w
	cp.Condition = tablekit.Condition{}
	return &cp, nil
}
