package aliyuntablestore

import (
	"cmp"
	"slices"
	"unsafe"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// The SDK panics on a value of a Go type it does not know (NewColumn,
// NewPrimaryKeyColumn) and on a nil Condition; everything that reaches it
// from here is one of the five Go types it knows, built from a validated
// tablekit.Value, and every change carries a RowCondition.
//
// Binary values cross without a copy, both ways. The SDK only reads the
// []byte of a request's value (it serializes it, plain_buffer.go and
// util.go writeCellValue/getCheckSum), so nativeValue lends it the bytes
// of the Value's immutable string. Each []byte of a decoded answer is a
// fresh allocation of the SDK's (plain_buffer.go readBytes) that only
// the adapter sees and nothing writes to, so valueOf adopts it as the
// Value's string.

// nativeValue returns the SDK's Go value for v: string, int64, float64,
// bool or []byte. ok is false for a value that is not one of the five types.
func nativeValue(v tablekit.Value) (any, bool) {
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		return s, true
	case tablekit.TypeInteger:
		i, _ := v.Int()
		return i, true
	case tablekit.TypeDouble:
		f, _ := v.Float()
		return f, true
	case tablekit.TypeBoolean:
		b, _ := v.Bool()
		return b, true
	case tablekit.TypeBinary:
		s, _ := v.BytesString()
		if len(s) == 0 {
			return []byte{}, true
		}
		return unsafe.Slice(unsafe.StringData(s), len(s)), true // read only: see above
	}
	return nil, false
}

// valueOf converts a value the SDK decoded.
func valueOf(x any) (tablekit.Value, bool) {
	switch x := x.(type) {
	case string:
		return tablekit.String(x), true
	case int64:
		return tablekit.Integer(x), true
	case float64:
		return tablekit.Double(x), true
	case bool:
		return tablekit.Boolean(x), true
	case []byte:
		return tablekit.BinaryString(unsafe.String(unsafe.SliceData(x), len(x))), true // adopted: see above
	}
	return tablekit.Value{}, false
}

func badValue(what string, v tablekit.Value) error {
	return tablekit.Errorf(tablekit.ErrInvalidArgument, "%s: value %v cannot be sent to Tablestore", what, v)
}

// nativeKey converts a key (or range bound, with InfMin/InfMax; or the
// key of a put or update, with AutoIncrement).
func nativeKey(k tablekit.PrimaryKey) (*tablestore.PrimaryKey, error) {
	pk := &tablestore.PrimaryKey{PrimaryKeys: make([]*tablestore.PrimaryKeyColumn, 0, len(k))}
	for _, p := range k {
		switch {
		case p.Value.IsInfMin():
			pk.AddPrimaryKeyColumnWithMinValue(p.Name)
		case p.Value.IsInfMax():
			pk.AddPrimaryKeyColumnWithMaxValue(p.Name)
		case p.Value.IsAutoIncrement():
			pk.AddPrimaryKeyColumnWithAutoIncrement(p.Name)
		default:
			if !p.Value.Type().IsKeyType() {
				return nil, badValue("primary-key column "+p.Name, p.Value)
			}
			x, _ := nativeValue(p.Value)
			pk.AddPrimaryKeyColumn(p.Name, x)
		}
	}
	return pk, nil
}

// keyOf converts a key the SDK decoded.
func keyOf(pk *tablestore.PrimaryKey) (tablekit.PrimaryKey, error) {
	k, err := appendKey(nil, pk)
	return k, err
}

// appendKey converts a key the SDK decoded, appending its parts to dst;
// it returns the key alone (capacity-limited, so it never aliases what
// follows in dst) and dst extended.
func appendKey(dst []tablekit.KeyPart, pk *tablestore.PrimaryKey) (tablekit.PrimaryKey, error) {
	if pk == nil || len(pk.PrimaryKeys) == 0 {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the server returned a row without a primary key")
	}
	start := len(dst)
	for _, c := range pk.PrimaryKeys {
		if c == nil {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the server returned an empty primary-key column")
		}
		v, ok := valueOf(c.Value)
		if !ok || !v.Type().IsKeyType() {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the server returned primary-key column %q with a value of Go type %T", c.ColumnName, c.Value)
		}
		dst = append(dst, tablekit.KeyPart{Name: c.ColumnName, Value: v})
	}
	return tablekit.PrimaryKey(dst[start:len(dst):len(dst)]), nil
}

// columnsOf converts the cells the SDK decoded into tablekit's read order
// (name ascending, version descending), sorting only when needed.
func columnsOf(cols []*tablestore.AttributeColumn) ([]tablekit.Column, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	return appendColumns(make([]tablekit.Column, 0, len(cols)), cols)
}

// appendColumns is columnsOf appending to dst; it returns the row's cells
// alone, capacity-limited. dst must have room for cols, so that the cells
// are not moved by a later append (a range page converts all its rows into
// one array).
func appendColumns(dst []tablekit.Column, cols []*tablestore.AttributeColumn) ([]tablekit.Column, error) {
	start := len(dst)
	sorted := true
	for _, c := range cols {
		if c == nil {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the server returned an empty cell")
		}
		v, ok := valueOf(c.Value)
		if !ok {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "the server returned column %q with a value of Go type %T", c.ColumnName, c.Value)
		}
		col := tablekit.Column{Name: c.ColumnName, Value: v, Version: c.Timestamp}
		if len(dst) > start && sorted && cellOrder(dst[len(dst)-1], col) > 0 {
			sorted = false
		}
		dst = append(dst, col)
	}
	out := dst[start:len(dst):len(dst)]
	if !sorted {
		slices.SortStableFunc(out, cellOrder)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func cellOrder(a, b tablekit.Column) int {
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(b.Version, a.Version)
}

// The service bounds a filter: its documentation gives 10 to 32
// single-column conditions per filter depending on the page, and the
// emulator (tsemu.MaxFilterConditions, tsemu.MaxFilterWidth) allows 32.
// tablekit sets no such bound (SPEC §10), so a read whose filter is larger
// is filtered by the adapter alone; a write condition must be checked
// atomically by the service, so a larger one is refused (see the package
// documentation).
const (
	maxNativeConditions = 32
	maxNativeWidth      = 32
)

// fitsNative reports whether the service accepts f as one filter.
func fitsNative(f tablekit.Filter) bool {
	n := 0
	var fits func(f tablekit.Filter) bool
	fits = func(f tablekit.Filter) bool {
		var c *tablekit.CompositeFilter
		switch f := f.(type) {
		case tablekit.ColumnFilter, *tablekit.ColumnFilter:
			n++
			return n <= maxNativeConditions
		case tablekit.CompositeFilter:
			c = &f
		case *tablekit.CompositeFilter:
			c = f
		default:
			return true // nativeFilter reports it
		}
		if c == nil || len(c.Filters) > maxNativeWidth {
			return c == nil
		}
		for _, s := range c.Filters {
			if !fits(s) {
				return false
			}
		}
		return true
	}
	return fits(f)
}

// nativeFilter translates a tablekit filter into a Tablestore column
// condition: SingleColumnCondition with FilterIfMissing = !PassIfMissing
// and LatestVersionOnly = !AllVersions; And/Or/Not as a
// CompositeColumnValueFilter. A nil filter gives nil.
func nativeFilter(f tablekit.Filter) (tablestore.ColumnFilter, error) {
	switch f := f.(type) {
	case nil:
		return nil, nil
	case tablekit.ColumnFilter:
		return nativeColumnFilter(&f)
	case *tablekit.ColumnFilter:
		if f == nil {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "filter is a nil *ColumnFilter")
		}
		return nativeColumnFilter(f)
	case tablekit.CompositeFilter:
		return nativeComposite(&f)
	case *tablekit.CompositeFilter:
		if f == nil {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "filter is a nil *CompositeFilter")
		}
		return nativeComposite(f)
	}
	return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "filter of type %T is not a tablekit filter", f)
}

func nativeColumnFilter(f *tablekit.ColumnFilter) (tablestore.ColumnFilter, error) {
	ct, ok := tsproto.Comparators.SDK(f.Op)
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "filter on column %q: unknown comparison %d", f.Column, f.Op)
	}
	x, ok := nativeValue(f.Value)
	if !ok {
		return nil, badValue("filter on column "+f.Column, f.Value)
	}
	c := tablestore.NewSingleColumnCondition(f.Column, ct, x)
	c.FilterIfMissing = f.FilterIfMissing
	c.LatestVersionOnly = !f.AllVersions
	return c, nil
}

func nativeComposite(f *tablekit.CompositeFilter) (tablestore.ColumnFilter, error) {
	lo, ok := tsproto.LogicOps.SDK(f.Op)
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "unknown filter combinator %d", f.Op)
	}
	if f.Op == tablekit.LogicNot && len(f.Filters) != 1 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "NOT filter needs exactly one sub-filter, got %d", len(f.Filters))
	}
	if len(f.Filters) == 0 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "%v filter needs at least one sub-filter", f.Op)
	}
	c := tablestore.NewCompositeColumnCondition(lo)
	for _, s := range f.Filters {
		if s == nil {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "%v filter has a nil sub-filter", f.Op)
		}
		n, err := nativeFilter(s)
		if err != nil {
			return nil, err
		}
		c.AddFilter(n)
	}
	return c, nil
}

// nativeCondition translates a write condition; it never returns nil (the
// SDK dereferences the condition of every change).
func nativeCondition(c tablekit.Condition) (*tablestore.RowCondition, error) {
	existence, ok := tsproto.RowExistences.SDK(c.Row)
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "unknown row existence expectation %d", c.Row)
	}
	rc := &tablestore.RowCondition{RowExistenceExpectation: existence}
	if c.Column != nil && !fitsNative(c.Column) {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"write condition %v: Tablestore checks at most %d column conditions (%d per AND/OR) in one condition",
			c.Column, maxNativeConditions, maxNativeWidth)
	}
	f, err := nativeFilter(c.Column)
	if err != nil {
		return nil, err
	}
	rc.ColumnCondition = f
	return rc, nil
}
