// Package typed is for programs that keep Go structs in tables: it maps Go
// structs to tablekit rows and back, and offers a typed view of a table, in
// the manner of the AWS SDK's attributevalue and gocloud's docstore:
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
// embedded structs, whose fields are promoted. An unexported field is not
// stored; one with a tablekit tag is an error, since the tag says it was
// meant to be. A stored value whose type does not fit its field, or that
// is out of its field's range (an Integer 300 into an int8, a Double 1e300
// into a float32), is an ErrInvalidArgument naming the field, the column
// and both types, and leaves the field as it was; so is a nil struct
// pointer. Field metadata is computed once per struct type.
//
// Auto-increment keys (SPEC §14): a key field tagged
// `tablekit:"seq,key,autoincrement"` (an integer, the table's
// auto-increment column) that is zero in a write asks the store for its
// value, and Put, Update, UpdateFields, PutAtomic and PutAll fill the
// field in with it; after a [Table.PutWrite], [Table.SetKey] does. A key
// field that maps to the table's auto-increment column without the tag is
// refused by those writes (ErrInvalidArgument naming the field, the column
// and the table): its zero would otherwise be written as the real key 0.
//
// Indexes (SPEC §16): a field tagged `tablekit:"status,index=by_status"`
// is a column of index by_status (in field order), one tagged
// `include=by_status` is included in it; [IndexSpecs] returns the specs
// for CreateTable or AddIndex, and [Table.IndexRows] reads structs through
// an index.
//
// Writes: [Table.Put] replaces a row; [Table.Update] writes every field,
// zero values included; [Table.UpdateFields] writes only the fields it
// names, a patch. Each takes conditions, as the untyped writes do; a
// condition on a column the row may lack should be Required (see
// [tablekit.SingleColumnValue]), or a missing column passes it.
package typed

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit"
)

// field is one mapped struct field.
type field struct {
	index []int
	// offset is the field's offset from the start of the outermost struct
	// (embedded structs are values, so the offsets along index add up):
	// decode writes through it without walking index per call.
	offset    uintptr
	name      string // Go field name, for messages
	column    string
	key       bool
	autoInc   bool // tag option autoincrement: zero asks the store (SPEC §14)
	omitEmpty bool
	indexes   []string // tag options index=NAME: an index column of NAME (index.go)
	includes  []string // tag options include=NAME: included in index NAME
	typ       reflect.Type
	kind      fieldKind
	ptr       bool          // typ is a pointer to the mapped type
	want      tablekit.Type // the stored type the field reads (wantType)
	size      uintptr       // typ.Size()
	// arr is [1]typ for the Text and Binary kinds: a view of the field
	// that reflect.Copy can fill (see decodeUnmarshaler).
	arr reflect.Type
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
	keys    []field
	attrs   []field // in ascending column order, as a Row's columns are
	autoInc bool    // a key field is tagged autoincrement
	// untagged: no key field is tagged autoincrement, and one after the
	// first is an integer: it may map to the table's auto-increment
	// column, which writes check (checkAutoInc).
	untagged bool
	err      error
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
	si.err = collect(t, nil, 0, si)
	slices.SortStableFunc(si.attrs, func(a, b field) int { return strings.Compare(a.column, b.column) })
	for i := 1; i < len(si.attrs) && si.err == nil; i++ {
		if si.attrs[i].column == si.attrs[i-1].column {
			si.err = invalid("typed: fields %s and %s of %v map to the same column %q", si.attrs[i-1].name, si.attrs[i].name, t, si.attrs[i].column)
		}
	}
	for i := 1; i < len(si.keys) && !si.autoInc; i++ {
		if k := si.keys[i].kind; k == kindInt || k == kindUint {
			si.untagged = true
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

func collect(t reflect.Type, index []int, offset uintptr, si *structInfo) error {
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
				if err := collect(et, idx, offset+sf.Offset, si); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			if tag != "" {
				// A tag says the program meant the field to be stored;
				// reflection cannot read an unexported field, so saying
				// nothing would silently drop the column.
				return invalid("typed: field %s of %v has the tag %q but is unexported, so it cannot be stored: export it, or tag it `tablekit:\"-\"`", sf.Name, t, tag)
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := field{index: idx, offset: offset + sf.Offset, name: sf.Name, column: name, typ: sf.Type}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "key":
				f.key = true
			case "autoincrement":
				f.autoInc = true
			case "omitempty":
				f.omitEmpty = true
			case "":
			default:
				if !indexOption(&f, o) {
					return invalid("typed: field %s of %v: unknown tag option %q", sf.Name, t, o)
				}
			}
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer && classify(ft) == 0 {
			f.ptr, ft = true, ft.Elem()
		}
		if f.kind = classify(ft); f.kind == 0 {
			return invalid("typed: field %s of %v has type %v, which tablekit does not map", sf.Name, t, sf.Type)
		}
		f.typ, f.want, f.size = ft, wantType(f.kind), ft.Size()
		if f.kind == kindText || f.kind == kindBinary {
			f.arr = reflect.ArrayOf(1, ft)
		}
		if f.autoInc && (!f.key || f.ptr || (f.kind != kindInt && f.kind != kindUint) || si.autoInc) {
			return invalid("typed: field %s of %v is tagged autoincrement: it must be the one such key field, of an integer type (not a pointer)", sf.Name, t)
		}
		si.autoInc = si.autoInc || f.autoInc
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
	if !rv.IsValid() {
		return reflect.Value{}, nil, invalid("typed: nil value: want a struct or a non-nil pointer to one")
	}
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return reflect.Value{}, nil, invalid("typed: nil %T: want a struct or a non-nil pointer to one", v)
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

// decode stores v into field f of the struct at base. The metadata of
// the field (offset, kind, width) was computed once for its type, so
// decode writes the value in place with no reflection, except through the
// Text and Binary unmarshalers and for a pointer field's new target.
func decode(f *field, base unsafe.Pointer, v tablekit.Value) error {
	if v.Type() != f.want {
		return invalid("typed: field %s (column %q) of Go type %v cannot hold a stored %v", f.name, f.column, f.typ, v.Type())
	}
	p := unsafe.Add(base, f.offset)
	if f.ptr {
		np := reflect.New(f.typ).UnsafePointer()
		*(*unsafe.Pointer)(p) = np
		p = np
	}
	switch f.kind {
	case kindInt:
		i, _ := v.Int()
		if !setInt(p, f.size, i) {
			return invalid("typed: field %s (column %q) of Go type %v cannot hold the stored Integer %d", f.name, f.column, f.typ, i)
		}
	case kindUint:
		i, _ := v.Int()
		if i < 0 || !setUint(p, f.size, uint64(i)) {
			return invalid("typed: field %s (column %q) of Go type %v cannot hold the stored Integer %d", f.name, f.column, f.typ, i)
		}
	case kindFloat:
		x, _ := v.Float()
		if f.size == 4 {
			if !math.IsInf(x, 0) && math.Abs(x) > math.MaxFloat32 { // reflect's OverflowFloat
				return invalid("typed: field %s (column %q) of Go type %v cannot hold the stored Double %g (max %g)", f.name, f.column, f.typ, x, math.MaxFloat32)
			}
			*(*float32)(p) = float32(x)
		} else {
			*(*float64)(p) = x
		}
	case kindBool:
		*(*bool)(p), _ = v.Bool()
	case kindString:
		*(*string)(p), _ = v.Str()
	case kindBytes:
		*(*[]byte)(p), _ = v.Bytes()
	case kindTime:
		i, _ := v.Int()
		*(*time.Time)(p) = time.UnixMilli(i)
	case kindDuration:
		i, _ := v.Int()
		*(*time.Duration)(p) = time.Duration(i) * time.Millisecond
	case kindText, kindBinary:
		return decodeUnmarshaler(f, p, v)
	}
	return nil
}

// decodeUnmarshaler runs the field's UnmarshalText or UnmarshalBinary on
// a copy of the field and copies the result back (also after an error, so
// the field ends as the method left it). The method, the program's code,
// is thus never given the field's address: a struct that Table.Get
// decodes can live on Get's stack.
func decodeUnmarshaler(f *field, p unsafe.Pointer, v tablekit.Value) error {
	tmp := reflect.New(f.typ)
	field := reflect.NewAt(f.arr, p).Elem()
	view := reflect.NewAt(f.arr, tmp.UnsafePointer()).Elem()
	reflect.Copy(view, field)
	var err error
	if f.kind == kindText {
		s, _ := v.Str()
		if err = tmp.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			err = tablekit.WrapError(tablekit.ErrInvalidArgument, err, "typed: field %s (column %q): UnmarshalText", f.name, f.column)
		}
	} else {
		b, _ := v.Bytes()
		if err = tmp.Interface().(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
			err = tablekit.WrapError(tablekit.ErrInvalidArgument, err, "typed: field %s (column %q): UnmarshalBinary", f.name, f.column)
		}
	}
	reflect.Copy(field, view)
	return err
}

// setInt stores i in the signed integer of size bytes at p; false, with
// nothing stored, when it does not fit (reflect's OverflowInt).
func setInt(p unsafe.Pointer, size uintptr, i int64) bool {
	switch {
	case size == 1 && int64(int8(i)) == i:
		*(*int8)(p) = int8(i)
	case size == 2 && int64(int16(i)) == i:
		*(*int16)(p) = int16(i)
	case size == 4 && int64(int32(i)) == i:
		*(*int32)(p) = int32(i)
	case size == 8:
		*(*int64)(p) = i
	default:
		return false
	}
	return true
}

// setUint stores u in the unsigned integer of size bytes at p; false, with
// nothing stored, when it does not fit (reflect's OverflowUint).
func setUint(p unsafe.Pointer, size uintptr, u uint64) bool {
	switch {
	case size == 1 && uint64(uint8(u)) == u:
		*(*uint8)(p) = uint8(u)
	case size == 2 && uint64(uint16(u)) == u:
		*(*uint16)(p) = uint16(u)
	case size == 4 && uint64(uint32(u)) == u:
		*(*uint32)(p) = uint32(u)
	case size == 8:
		*(*uint64)(p) = u
	default:
		return false
	}
	return true
}

// clearField sets field f of the struct at base to its zero value (a
// pointer field to nil).
func clearField(f *field, base unsafe.Pointer) {
	p := unsafe.Add(base, f.offset)
	if f.ptr {
		*(*unsafe.Pointer)(p) = nil
		return
	}
	switch f.kind {
	case kindString:
		*(*string)(p) = ""
	case kindBytes:
		*(*[]byte)(p) = nil
	case kindTime:
		*(*time.Time)(p) = time.Time{}
	case kindText, kindBinary:
		reflect.NewAt(f.typ, p).Elem().SetZero()
	default: // integers, floats, bools, durations: no pointers inside
		clear(unsafe.Slice((*byte)(p), f.size))
	}
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
		if f.autoInc && val == tablekit.Integer(0) {
			val = tablekit.AutoIncrement // the store assigns it; the write fills the field in
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
	si := infoOf(rv.Type().Elem())
	if si.err != nil {
		return si.err
	}
	return unmarshal(row, rv.UnsafePointer(), si)
}

// unmarshal decodes row into the struct at base, whose type si describes.
func unmarshal(row tablekit.Row, base unsafe.Pointer, si *structInfo) error {
	for i := range si.keys {
		f := &si.keys[i]
		// Key fields are usually in schema order, as the row's key parts.
		val, ok := tablekit.Value{}, false
		if i < len(row.Key) && row.Key[i].Name == f.column {
			val, ok = row.Key[i].Value, true
		} else {
			val, ok = row.Key.Get(f.column)
		}
		if ok {
			if err := decode(f, base, val); err != nil {
				return err
			}
		}
	}
	// Fields and the row's columns are both in ascending column order:
	// one merge walk pairs them; the first cell of a column is its newest.
	cols := row.Columns
	for i := range si.attrs {
		f := &si.attrs[i]
		// Each name is compared once for equality (the usual case, and
		// cheaper than an ordering comparison), and for order only when
		// it differs.
		found := false
		for len(cols) > 0 {
			if n := cols[0].Name; n == f.column {
				found = true
				break
			} else if n > f.column {
				break
			}
			cols = cols[1:]
		}
		if !found {
			clearField(f, base)
			continue
		}
		if err := decode(f, base, cols[0].Value); err != nil {
			return err
		}
		// The column's older versions, if any, sort below the next field's
		// column: the search above steps past them.
		cols = cols[1:]
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

// Put replaces the row of v's key with v's columns: every mapped field's
// value, zero values included, except nil pointers and empty omitempty
// fields, whose columns the row then lacks. Each column is written as one
// new version at the clock's now (milliseconds): two writes of a column in
// the same millisecond leave one version, the later; to keep every step of
// a history, give each step its own key or version (see the package
// example "history").
func (t *Table[T]) Put(ctx context.Context, v *T, opts ...tablekit.WriteOption) error {
	if err := t.checkAutoInc(ctx); err != nil {
		return err
	}
	w, err := t.PutWrite(v)
	if err != nil {
		return err
	}
	if !t.si.autoInc {
		return t.t.PutRow(ctx, w.Key, w.Columns, opts...)
	}
	var k tablekit.PrimaryKey
	if err := t.t.PutRow(ctx, w.Key, w.Columns, append(opts[:len(opts):len(opts)], tablekit.ReturnKey(&k))...); err != nil {
		return err
	}
	return t.SetKey(v, k)
}

// checkAutoInc refuses a write of a T whose key field maps to the table's
// auto-increment column without the autoincrement tag: its zero would be
// written as the real key 0, silently, and the next Put would replace that
// row. Refusing, rather than letting the schema turn the field into an
// autoincrement one, keeps what a struct's write does readable in its
// type: the same struct writes the same keys into every table, and a
// field the write fills in says so in its tag. A table whose metadata
// cannot be read is left to the write, which reports it.
func (t *Table[T]) checkAutoInc(ctx context.Context) error {
	if t.si.err != nil {
		return t.si.err
	}
	if !t.si.untagged {
		return nil
	}
	m, err := t.t.Meta(ctx)
	if err != nil {
		return nil
	}
	for _, k := range m.Key {
		if !k.AutoIncrement {
			continue
		}
		for i := range t.si.keys {
			if f := &t.si.keys[i]; f.column == k.Name {
				return &tablekit.Error{Op: "typed", Table: m.Name, Code: tablekit.ErrInvalidArgument,
					Msg: fmt.Sprintf("field %s of %v maps to column %q, the table's auto-increment column (SPEC §14), without the autoincrement tag: its zero would be written as the real key 0 and the next write of a zero would replace that row; tag it `tablekit:\"%s,key,autoincrement\"`",
						f.name, reflect.TypeFor[T](), f.column, f.column)}
			}
		}
	}
	return nil
}

// SetKey sets v's key fields from key: after a write of v whose
// autoincrement field was zero, the key the store assigned (the write
// result's Key, as [tablekit.BatchWriteResult] and
// [tablekit.UpdateResult] carry it). A nil key changes nothing.
func (t *Table[T]) SetKey(v *T, key tablekit.PrimaryKey) error {
	if t.si.err != nil {
		return t.si.err
	}
	if v == nil || key == nil {
		return nil
	}
	return unmarshal(tablekit.Row{Key: key}, reflect.ValueOf(v).UnsafePointer(), &structInfo{keys: t.si.keys})
}

// Update writes into the row of v's key, creating it if absent, every
// mapped field's value, zero values included: a field the program did not
// set writes its zero (0, "", false) over the stored value. Only nil
// pointers and empty omitempty fields leave their columns as they are, and
// Update never deletes a column. The row's columns that T does not map are
// kept. To change some columns from a partly filled struct, use
// [Table.UpdateFields].
func (t *Table[T]) Update(ctx context.Context, v *T, opts ...tablekit.WriteOption) error {
	if err := t.checkAutoInc(ctx); err != nil {
		return err
	}
	if v == nil {
		return invalid("typed: Update of a nil *%v", reflect.TypeFor[T]())
	}
	key, cols, err := marshal(reflect.ValueOf(v).Elem(), t.si)
	if err != nil {
		return err
	}
	changes := make([]tablekit.Change, len(cols))
	for i, c := range cols {
		changes[i] = tablekit.Put(c.Name, c.Value)
	}
	res, err := t.t.UpdateRow(ctx, key, changes, opts...)
	if err != nil {
		return err
	}
	return t.SetKey(v, res.Key)
}

// UpdateFields is the partial update, a patch: in the row of v's key
// (created if absent) it makes each named field's column what Put would
// store for it, and leaves every other column as it is. A named field
// whose Put would leave its column absent (a nil pointer, an empty
// omitempty field) deletes the column. Name a field by its Go name or its
// column; naming a key field, an unknown or ambiguous name, or no field is
// an ErrInvalidArgument and writes nothing. With opts, the write is
// conditional, as UpdateRow's:
//
//	// hits goes to 0 only if the program names it; status is set only while the row is "pending".
//	err := pages.UpdateFields(ctx, &Page{URL: u, Status: "done"}, []string{"Status"},
//		tablekit.IfMatch(tablekit.SingleColumnValue("status", tablekit.Equal, tablekit.String("pending")).Required()))
//
// Why a field list, not omitempty or pointer semantics: which fields a
// write changes is then said at the call, not by how the struct was
// declared or filled, so one struct type serves both whole-row writes and
// patches, and a zero (hits = 0) can be written on purpose. AWS's
// attributevalue omitempty cannot write a zero, and gocloud's docstore
// Update also takes the fields to change (Mods) from the caller.
func (t *Table[T]) UpdateFields(ctx context.Context, v *T, fields []string, opts ...tablekit.WriteOption) error {
	if err := t.checkAutoInc(ctx); err != nil {
		return err
	}
	if v == nil {
		return invalid("typed: UpdateFields of a nil *%v", reflect.TypeFor[T]())
	}
	sv := reflect.ValueOf(v).Elem()
	key, _, err := marshal(sv, &structInfo{keys: t.si.keys})
	if err != nil {
		return err
	}
	changes, err := t.si.patch(sv, fields)
	if err != nil {
		return err
	}
	res, err := t.t.UpdateRow(ctx, key, changes, opts...)
	if err != nil {
		return err
	}
	return t.SetKey(v, res.Key)
}

// patch returns the changes of UpdateFields: one per named field.
func (si *structInfo) patch(sv reflect.Value, fields []string) ([]tablekit.Change, error) {
	if len(fields) == 0 {
		return nil, invalid("typed: UpdateFields of %v names no field", sv.Type())
	}
	changes := make([]tablekit.Change, 0, len(fields))
	done := make([]bool, len(si.attrs))
	for _, name := range fields {
		i, err := si.attrNamed(sv.Type(), name)
		if err != nil {
			return nil, err
		}
		if done[i] {
			return nil, invalid("typed: UpdateFields of %v names field %s (column %q) twice", sv.Type(), si.attrs[i].name, si.attrs[i].column)
		}
		done[i] = true
		f := &si.attrs[i]
		val, ok, err := encode(f, sv)
		switch {
		case err != nil:
			return nil, err
		case ok:
			changes = append(changes, tablekit.Put(f.column, val))
		default:
			changes = append(changes, tablekit.DeleteColumn(f.column))
		}
	}
	return changes, nil
}

// attrNamed returns the index in si.attrs of the attribute field whose Go
// name or column is name.
func (si *structInfo) attrNamed(t reflect.Type, name string) (int, error) {
	found := -1
	for i := range si.attrs {
		if f := &si.attrs[i]; f.name == name || f.column == name {
			if found >= 0 {
				return 0, invalid("typed: UpdateFields of %v: %q is ambiguous: fields %s (column %q) and %s (column %q)", t, name, si.attrs[found].name, si.attrs[found].column, f.name, f.column)
			}
			found = i
		}
	}
	if found >= 0 {
		return found, nil
	}
	for i := range si.keys {
		if f := &si.keys[i]; f.name == name || f.column == name {
			return 0, invalid("typed: UpdateFields of %v: field %s (column %q) is a key field: the key selects the row and cannot be updated", t, f.name, f.column)
		}
	}
	names := make([]string, len(si.attrs))
	for i := range si.attrs {
		names[i] = si.attrs[i].name
	}
	return 0, invalid("typed: UpdateFields of %v: no field or column %q (fields: %s)", t, name, strings.Join(names, ", "))
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
	err = unmarshal(row, unsafe.Pointer(&v), t.si)
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
			if err := unmarshal(r, unsafe.Pointer(&v), t.si); err != nil {
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
// table's client, db), returning one error per value, in order (nil for a
// value written), and the failures joined. A value that cannot be stored
// (say a uint64 above MaxInt64) gets its error, naming the field, and is
// not sent; the others are written.
func PutAll[T any](ctx context.Context, db *tablekit.Client, t *Table[T], vs []T) ([]error, error) {
	if err := t.checkAutoInc(ctx); err != nil {
		return nil, err
	}
	errs := make([]error, len(vs))
	ws := make([]tablekit.BatchWrite, 0, len(vs))
	at := make([]int, 0, len(vs)) // at[j]: the value of ws[j]
	for i := range vs {
		key, cols, err := marshal(reflect.ValueOf(&vs[i]).Elem(), t.si)
		if err != nil {
			errs[i] = fmt.Errorf("value %d: %w", i, err)
			continue
		}
		ws = append(ws, tablekit.BatchPut(t.t.Name(), key, cols))
		at = append(at, i)
	}
	res, _ := db.WriteAll(ctx, ws)
	for j, r := range res {
		errs[at[j]] = r.Err
		if r.Err == nil && r.Key != nil {
			errs[at[j]] = t.SetKey(&vs[at[j]], r.Key)
		}
	}
	return errs, errors.Join(errs...)
}
