package typed

import (
	"context"
	"iter"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/tablekit/tablekit"
)

// indexOption reads the tag options index=NAME and include=NAME.
func indexOption(f *field, o string) bool {
	if name, ok := strings.CutPrefix(o, "index="); ok && name != "" {
		f.indexes = append(f.indexes, name)
		return true
	}
	if name, ok := strings.CutPrefix(o, "include="); ok && name != "" {
		f.includes = append(f.includes, name)
		return true
	}
	return false
}

// IndexSpecs returns the indexes T's tags declare, in the order of their
// first field: index=NAME makes the field's column a column of index NAME
// (in field order; a key field's type is the table's), include=NAME
// includes it. tablekit checks the specs when the table is created.
func IndexSpecs[T any]() ([]tablekit.IndexSpec, error) {
	si := infoOf(reflect.TypeFor[T]())
	if si.err != nil {
		return nil, si.err
	}
	var specs []tablekit.IndexSpec
	spec := func(name string) *tablekit.IndexSpec {
		i := slices.IndexFunc(specs, func(s tablekit.IndexSpec) bool { return s.Name == name })
		if i < 0 {
			specs = append(specs, tablekit.IndexSpec{Name: name})
			i = len(specs) - 1
		}
		return &specs[i]
	}
	// Fields in declaration order: keys and attributes are kept apart, so
	// sort them back by their index paths.
	fields := append(slices.Clone(si.keys), si.attrs...)
	slices.SortFunc(fields, func(a, b field) int { return slices.Compare(a.index, b.index) })
	for _, f := range fields {
		for _, name := range f.indexes {
			kc := tablekit.KeyColumn{Name: f.column}
			if !f.key {
				kc.Type = f.want
			}
			s := spec(name)
			s.Columns = append(s.Columns, kc)
		}
		for _, name := range f.includes {
			s := spec(name)
			s.Include = append(s.Include, f.column)
		}
	}
	return specs, nil
}

// IndexRows streams the rows of index (bounds over its key, see
// [tablekit.IndexTable.Rows]) as T values: key fields and the index's
// columns from the index key, other fields from the included columns
// (fields of columns the index does not include are zero; read the whole
// row with [Table.Get] when they are needed).
func (t *Table[T]) IndexRows(ctx context.Context, index string, start, end tablekit.PrimaryKey, opts ...tablekit.RangeOption) iter.Seq2[T, error] {
	ix := t.t.Index(index)
	return func(yield func(T, error) bool) {
		var zero T
		if t.si.err != nil {
			yield(zero, t.si.err)
			return
		}
		for r, err := range ix.Rows(ctx, start, end, opts...) {
			if err != nil {
				yield(zero, err)
				return
			}
			// The index key's attribute columns become cells, so that
			// unmarshal finds them where a table row has them.
			row := tablekit.Row{Key: r.Key, Columns: slices.Clone(r.Columns)}
			for _, p := range r.Key {
				if !slices.ContainsFunc(t.si.keys, func(f field) bool { return f.column == p.Name }) {
					row.Columns = append(row.Columns, tablekit.Column{Name: p.Name, Value: p.Value})
				}
			}
			slices.SortStableFunc(row.Columns, func(a, b tablekit.Column) int { return strings.Compare(a.Name, b.Name) })
			var v T
			if err := unmarshal(row, unsafe.Pointer(&v), t.si); err != nil {
				yield(zero, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}
