package typed

import (
	"context"
	"fmt"
	"reflect"

	"github.com/tablekit/tablekit"
)

// PutWrite is v's Put as a [tablekit.BatchWrite] of the table, for an
// atomic write that mixes values of several types (an order and its
// lines, each a struct of its own, in one table):
//
//	o, _ := orders.PutWrite(&order, tablekit.ExpectNotExist)
//	l, _ := lines.PutWrite(&line)
//	_, err := db.AtomicWrite(ctx, []tablekit.BatchWrite{o, l})
//
// A zero autoincrement field is left to the store: [Table.SetKey] fills
// it in from the write's result. PutWrite takes no context, so it does not
// read the schema: unlike the writes that do, it does not refuse a field
// that maps to the table's auto-increment column without the tag.
func (t *Table[T]) PutWrite(v *T, opts ...tablekit.WriteOption) (tablekit.BatchWrite, error) {
	if t.si.err != nil {
		return tablekit.BatchWrite{}, t.si.err
	}
	if v == nil {
		return tablekit.BatchWrite{}, invalid("typed: Put of a nil *%v", reflect.TypeFor[T]())
	}
	key, cols, err := marshal(reflect.ValueOf(v).Elem(), t.si)
	if err != nil {
		return tablekit.BatchWrite{}, err
	}
	return tablekit.BatchPut(t.t.Name(), key, cols, opts...), nil
}

// PutAtomic puts every value of vs, rows of one partition key (SPEC §13),
// all or nothing with [tablekit.Table.AtomicWrite]; opts guard every put.
// A failed condition is ErrConditionFailed with a
// [*tablekit.AtomicWriteError] whose Index is the value's in vs, and
// nothing is written.
func (t *Table[T]) PutAtomic(ctx context.Context, vs []T, opts ...tablekit.WriteOption) error {
	if err := t.checkAutoInc(ctx); err != nil {
		return err
	}
	ws := make([]tablekit.BatchWrite, len(vs))
	for i := range vs {
		w, err := t.PutWrite(&vs[i], opts...)
		if err != nil {
			return fmt.Errorf("value %d: %w", i, err)
		}
		ws[i] = w
	}
	res, err := t.t.AtomicWrite(ctx, ws)
	if err != nil {
		return err
	}
	for i, r := range res {
		if err := t.SetKey(&vs[i], r.Key); err != nil {
			return err
		}
	}
	return nil
}
