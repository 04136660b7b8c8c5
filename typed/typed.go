// Package typed maps Go structs to tablekit rows and back, and offers a
// typed view of a table, in the manner of the AWS SDK's attributevalue and
// gocloud's docstore:
//
//	type Event struct {
//		User  string    `tablekit:"user,key"` // key columns, in schema order
//		Seq   int64     `tablekit:"seq,key"`
//		Kind  string    `tablekit:"kind"`
//		At    time.Time `tablekit:"at"`            // Integer, ms since the epoch
//		Note  *string   `tablekit:"note"`          // nil: column absent
//		Score float64   `tablekit:"score,omitempty"`
//		Cache []byte    `tablekit:"-"`             // never stored
//	}
//	events := typed.Of[Event](db.Table("events"))
//	err := events.Put(ctx, &Event{User: "ann", Seq: 1, Kind: "click"})
//	e, found, err := events.Get(ctx, tablekit.Key("user", tablekit.String("ann")).Add("seq", tablekit.Integer(1)))
//
// A field's column is its tag name, or the field's name without one.
// Types: every signed and unsigned integer width (Integer; a uint64 above
// MaxInt64 is an error), float32 and float64 (Double), bool (Boolean),
// string (String), []byte (Binary), time.Time and time.Duration (Integer
// milliseconds), encoding.TextMarshaler (String) and
// encoding.BinaryMarshaler (Binary) with their unmarshalers, named types
// of these, pointers to them (nil means the column is absent), and
// embedded structs, whose fields are promoted. A stored value whose type
// does not fit its field is an ErrInvalidArgument naming the field, the
// column and both types. Field metadata is computed once per struct type.
package typed

import (
	"context"
	"encoding"
	"fmt"
	"iter"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
)

// field is one mapped struct field.
type field struct {
	index     []int
	name      string // Go field name, for messages
	column    string
	key       bool
	omitEmpty bool
	typ       reflect.Type
	kind      fieldKind
	ptr       bool // typ is a pointer to the mapped type
}

type fieldKind uint8

const (
	kindInt fieldKind = iota + 1
	kindUint
	kindFloat
	kindBool
	kindString
	kindBytes
	kindTime
	kindDuration
	kindText
	kindBinary
)

// structInfo is the cached metadata of one struct type.
type structInfo struct {
	keys  []field
	attrs []field // in ascending column order, as a Row's columns are
	err   error
}

var cache sync.Map // reflect.Type -> *structInfo

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
	textM        = reflect.TypeFor[encoding.TextMarshaler]()
	textU        = reflect.TypeFor[encoding.TextUnmarshaler]()
	binM         = reflect.TypeFor[encoding.BinaryMarshaler]()
	binU         = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

func invalid(format string, args ...any) error {
	return tablekit.Errorf(tablekit.ErrInvalidArgument, format, args...)
}

func infoOf(t reflect.Type) *structInfo {
	if v, ok := cache.Load(t); ok {
		return v.(*structInfo)
	}
	si := &structInfo{}
	si.err = collect(t, nil, si)
	slices.SortStableFunc(si.attrs, func(a, b field) int { return strings.Compare(a.column, b.column) })
	for i := 1; i < len(si.attrs) && si.err == nil; i++ {
		if si.attrs[i].column == si.attrs[i-1].column {
			si.err = invalid("typed: fields %s and %s of %v map to the same column %q", si.attrs[i-1].name, si.attrs[i].name, t, si.attrs[i].column)
		}
	}
	v, _ := cache.LoadOrStore(t, si)
	return v.(*structInfo)
}

func classify(t reflect.Type) fieldKind {
	switch {
	case t == timeType:
		return kindTime
	case t == durationType:
		return kindDuration
	case reflect.PointerTo(t).Implements(textU) && t.Implements(textM):
		return kindText
	case reflect.PointerTo(t).Implements(binU) && t.Implements(binM):
		return kindBinary
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.Bool:
		return kindBool
	case reflect.String:
		return kindString
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return kindBytes
		}
	}
	return 0
}

func collect(t reflect.Type, index []int, si *structInfo) error {
	if t.Kind() != reflect.Struct {
		return invalid("typed: %v is not a struct", t)
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("tablekit")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Struct && classify(et) == 0 {
				if err := collect(et, idx, si); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := field{index: idx, name: sf.Name, column: name, typ: sf.Type}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "key":
				f.key = true
			case "omitempty":
				f.omitEmpty = true
			case "":
			default:
				return invalid("typed: field %s of %v: unknown tag option %q", sf.Name, t, o)
			}
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer && classify(ft) == 0 {
			f.ptr, ft = true, ft.Elem()
		}
		if f.kind = classify(ft); f.kind == 0 {
			return invalid("typed: field %s of %v has type %v, which tablekit does not map", sf.Name, t, sf.Type)
		}
		f.typ = ft
		if f.key {
			si.keys = append(si.keys, f)
		} else {
			si.attrs = append(si.attrs, f)
		}
	}
	return nil
}

func structValue(v any) (reflect.Value, *structInfo, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return reflect.Value{}, nil, invalid("typed: nil %T", v)
		}
		rv = rv.Elem()
	}
	si := infoOf(rv.Type())
	return rv, si, si.err
}

// encode returns the value of field f of struct value sv; ok is false when
// the column is absent (a nil pointer, or an empty omitempty field).
func encode(f *field, sv reflect.Value) (tablekit.Value, bool, error) {
	fv := sv.FieldByIndex(f.index)
	if f.ptr {
		if fv.IsNil() {
			return tablekit.Value{}, false, nil
		}
		fv = fv.Elem()
	}
	if f.omitEmpty && fv.IsZero() {
		return tablekit.Value{}, false, nil
	}
	switch f.kind {
	case kindInt:
		return tablekit.Integer(fv.Int()), true, nil
	case kindUint:
		u := fv.Uint()
		if u > math.MaxInt64 {
			return tablekit.Value{}, false, invalid("typed: field %s (column %q): %d does not fit an Integer (max %d)", f.name, f.column, u, int64(math.MaxInt64))
		}
		return tablekit.Integer(int64(u)), true, nil
	case kindFloat:
		return tablekit.Double(fv.Float()), true, nil
	case kindBool:
		return tablekit.Boolean(fv.Bool()), true, nil
	case kindString:
		return tablekit.String(fv.String()), true, nil
	case kindBytes:
		return tablekit.Binary(fv.Bytes()), true, nil
	case kindTime:
		if fv.CanAddr() { // no boxing of the time.Time
			return tablekit.Integer(fv.Addr().Interface().(*time.Time).UnixMilli()), true, nil
		}
		return tablekit.Integer(fv.Interface().(time.Time).UnixMilli()), true, nil
	case kindDuration:
		return tablekit.Integer(time.Duration(fv.Int()).Milliseconds()), true, nil
	case kindText:
		b, err := fv.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return tablekit.Value{}, false, tablekit.WrapError(tablekit.ErrInvalidArgument, err, "typed: field %s (column %q): MarshalText", f.name, f.column)
		}
		return tablekit.String(string(b)), true, nil
	case kindBinary:
		b, err := fv.Interface().(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return tablekit.Value{}, false, tablekit.WrapError(tablekit.ErrInvalidArgument, err, "typed: field %s (column %q): MarshalBinary", f.name, f.column)
		}
		return tablekit.Binary(b), true, nil
	}
	return tablekit.Value{}, false, invalid("typed: field %s: unmapped", f.name)
}

// wantType is the stored type a field of kind k reads.
func wantType(k fieldKind) tablekit.Type {
	switch k {
	case kindInt, kindUint, kindTime, kindDuration:
		return tablekit.TypeInteger
	case kindFloat:
		return tablekit.TypeDouble
	case kindBool:
		return tablekit.TypeBoolean
	case kindString, kindText:
		return tablekit.TypeString
	}
	return tablekit.TypeBinary
}

// decode stores v into field f of struct value sv.
func decode(f *field, sv reflect.Value, v tablekit.Value) error {
	fv := sv.FieldByIndex(f.index)
	if v.Type() != wantType(f.kind) {
		return invalid("typed: field %s (column %q) of Go type %v cannot hold a stored %v", f.name, f.column, f.typ, v.Type())
	}
	if f.ptr {
		p := reflect.New(f.typ)
		fv.Set(p)
		fv = p.Elem()
	}
	switch f.kind {
	case kindInt:
		i, _ := v.Int()
		if fv.OverflowInt(i) {
			return invalid("typed: field %s (column %q) of Go type %v cannot hold the stored Integer %d", f.name, f.column, f.typ, i)
		}
		fv.SetInt(i)
	case kindUint:
		i, _ := v.Int()
		if i < 0 || fv.OverflowUint(uint64(i)) {
			return invalid("typed: field %s (column %q) of Go type %v cannot hold the stored Integer %d", f.name, f.column, f.typ, i)
		}
		fv.SetUint(uint64(i))
	case kindFloat:
		x, _ := v.Float()
		fv.SetFloat(x)
	case kindBool:
		b, _ := v.Bool()
		fv.SetBool(b)
	case kindString:
		s, _ := v.Str()
		fv.SetString(s)
	case kindBytes:
		b, _ := v.Bytes()
		fv.SetBytes(b)
	case kindTime:
		i, _ := v.Int()
		*fv.Addr().Interface().(*time.Time) = time.UnixMilli(i)
	case kindDuration:
		i, _ := v.Int()
		fv.SetInt(int64(time.Duration(i) * time.Millisecond))
	case kindText:
		s, _ := v.Str()
		if err := fv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return tablekit.WrapError(tablekit.ErrInvalidArgument, err, "typed: field %s (column %q): UnmarshalText", f.name, f.column)
		}
	case kindBinary:
		b, _ := v.Bytes()
		if err := fv.Addr().Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
			return tablekit.WrapError(tablekit.ErrInvalidArgument, err, "typed: field %s (column %q): UnmarshalBinary", f.name, f.column)
		}
	}
	return nil
}

// Marshal returns the primary key (the fields tagged key, in field order)
// and the attribute columns of the struct v (or pointer to one). Columns
// have Version 0: written at the clock's now.
func Marshal(v any) (tablekit.PrimaryKey, []tablekit.Column, error) {
	sv, si, err := structValue(v)
	if err != nil {
		return nil, nil, err
	}
	return marshal(sv, si)
}

func marshal(sv reflect.Value, si *structInfo) (tablekit.PrimaryKey, []tablekit.Column, error) {
	key := make(tablekit.PrimaryKey, 0, len(si.keys))
	for i := range si.keys {
		f := &si.keys[i]
		val, ok, err := encode(f, sv)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, invalid("typed: key field %s (column %q) is absent", f.name, f.column)
		}
		key = append(key, tablekit.KeyPart{Name: f.column, Value: val})
	}
	cols := make([]tablekit.Column, 0, len(si.attrs))
	for i := range si.attrs {
		f := &si.attrs[i]
		val, ok, err := encode(f, sv)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			cols = append(cols, tablekit.Column{Name: f.column, Value: val})
		}
	}
	return key, cols, nil
}

// Key returns the primary key of the struct v (or pointer to one).
func Key(v any) (tablekit.PrimaryKey, error) {
	sv, si, err := structValue(v)
	if err != nil {
		return nil, err
	}
	key, _, err := marshal(sv, &structInfo{keys: si.keys})
	return key, err
}

// Unmarshal sets the fields of the struct *v from row: key fields from its
// key, the others from its newest returned cells. A column the row lacks
// leaves its field zero (a pointer field nil); a stored value that does not
// fit its field is an error naming both.
func Unmarshal(row tablekit.Row, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return invalid("typed: Unmarshal needs a non-nil pointer to a struct, got %T", v)
	}
	sv := rv.Elem()
	si := infoOf(sv.Type())
	if si.err != nil {
		return si.err
	}
	return unmarshal(row, sv, si)
}

func unmarshal(row tablekit.Row, sv reflect.Value, si *structInfo) error {
	for i := range si.keys {
		f := &si.keys[i]
		if val, ok := row.Key.Get(f.column); ok {
			if err := decode(f, sv, val); err != nil {
				return err
			}
		}
	}
	// Fields and the row's columns are both in ascending column order:
	// one merge walk pairs them; the first cell of a column is its newest.
	cols := row.Columns
	for i := range si.attrs {
		f := &si.attrs[i]
		for len(cols) > 0 && cols[0].Name < f.column {
			cols = cols[1:]
		}
		if len(cols) == 0 || cols[0].Name != f.column {
			sv.FieldByIndex(f.index).SetZero()
			continue
		}
		if err := decode(f, sv, cols[0].Value); err != nil {
			return err
		}
	}
	return nil
}

// Table is a typed view of a table whose rows map to T.
type Table[T any] struct {
	t  *tablekit.Table
	si *structInfo
}

// Of returns a typed view of t. A T that cannot be mapped makes every call
// fail with the reason.
func Of[T any](t *tablekit.Table) *Table[T] {
	return &Table[T]{t: t, si: infoOf(reflect.TypeFor[T]())}
}

// Put replaces the row of v's key with v's columns.
func (t *Table[T]) Put(ctx context.Context, v *T, opts ...tablekit.WriteOption) error {
	if t.si.err != nil {
		return t.si.err
	}
	key, cols, err := marshal(reflect.ValueOf(v).Elem(), t.si)
	if err != nil {
		return err
	}
	return t.t.PutRow(ctx, key, cols, opts...)
}

// Update writes v's present columns into the row of v's key, keeping the
// row's other columns (nil pointers and empty omitempty fields are left
// as they are).
func (t *Table[T]) Update(ctx context.Context, v *T, opts ...tablekit.WriteOption) error {
	if t.si.err != nil {
		return t.si.err
	}
	key, cols, err := marshal(reflect.ValueOf(v).Elem(), t.si)
	if err != nil {
		return err
	}
	changes := make([]tablekit.Change, len(cols))
	for i, c := range cols {
		changes[i] = tablekit.Put(c.Name, c.Value)
	}
	_, err = t.t.UpdateRow(ctx, key, changes, opts...)
	return err
}

// Get reads the row at key into a T; found is false when it does not exist.
func (t *Table[T]) Get(ctx context.Context, key tablekit.PrimaryKey, opts ...tablekit.ReadOption) (v T, found bool, err error) {
	if t.si.err != nil {
		return v, false, t.si.err
	}
	row, found, err := t.t.GetRow(ctx, key, opts...)
	if err != nil || !found {
		return v, found, err
	}
	err = unmarshal(row, reflect.ValueOf(&v).Elem(), t.si)
	return v, err == nil, err
}

// Delete deletes the row at key.
func (t *Table[T]) Delete(ctx context.Context, key tablekit.PrimaryKey, opts ...tablekit.WriteOption) error {
	return t.t.DeleteRow(ctx, key, opts...)
}

// Rows streams the rows of [start, end) as T values (see [tablekit.Table.Rows]).
func (t *Table[T]) Rows(ctx context.Context, start, end tablekit.PrimaryKey, opts ...tablekit.RangeOption) iter.Seq2[T, error] {
	return t.values(t.t.Rows(ctx, start, end, opts...))
}

// PrefixRows streams the rows whose key starts with prefix as T values
// (see [tablekit.Table.PrefixRows]).
func (t *Table[T]) PrefixRows(ctx context.Context, prefix tablekit.PrimaryKey, opts ...tablekit.RangeOption) iter.Seq2[T, error] {
	return t.values(t.t.PrefixRows(ctx, prefix, opts...))
}

func (t *Table[T]) values(rows iter.Seq2[tablekit.Row, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if t.si.err != nil {
			yield(zero, t.si.err)
			return
		}
		for r, err := range rows {
			if err != nil {
				yield(zero, err)
				return
			}
			var v T
			if err := unmarshal(r, reflect.ValueOf(&v).Elem(), t.si); err != nil {
				yield(zero, err)
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// PutAll writes any number of values with [tablekit.Client.WriteAll] (the
// table's client, db), returning one error per value, in order, and the
// failures joined.
func PutAll[T any](ctx context.Context, db *tablekit.Client, t *Table[T], vs []T) ([]error, error) {
	if t.si.err != nil {
		return nil, t.si.err
	}
	ws := make([]tablekit.BatchWrite, len(vs))
	for i := range vs {
		key, cols, err := marshal(reflect.ValueOf(&vs[i]).Elem(), t.si)
		if err != nil {
			return nil, fmt.Errorf("value %d: %w", i, err)
		}
		ws[i] = tablekit.BatchPut(t.t.Name(), key, cols)
	}
	res, err := db.WriteAll(ctx, ws)
	errs := make([]error, len(res))
	for i, r := range res {
		errs[i] = r.Err
	}
	return errs, err
}
