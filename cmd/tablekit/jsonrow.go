package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"math"
	"slices"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// The JSON-lines format of export, import and scan --format json.
//
// An export starts with one header line describing the table:
//
//	{"table":"t","key":[{"name":"id","type":"String"}],"options":{"ttl":-1,"max_versions":3,"max_version_offset":86400}}
//
// then one line per row, key columns in schema order, attribute columns in
// name order, versions newest first:
//
//	{"key":{"id":{"s":"a\u0000b"}},"columns":{"n":[{"ts":1700000000001,"i":42},{"ts":1700000000000,"d":1.5}]}}
//
// A value is an object with exactly one of "s" (String), "i" (Integer, a
// JSON integer, exact to 64 bits), "d" (Double), "bool" (Boolean) or "b"
// (Binary, standard base64), so an Integer never turns into a Double or
// back. A key-only row has "columns":{}. InfMin and InfMax are never
// written: they are not values a row can hold.

// jsonValue is one typed value; exactly one field is set.
type jsonValue struct {
	S    *string  `json:"s,omitempty"`
	I    *int64   `json:"i,omitempty"`
	D    *float64 `json:"d,omitempty"`
	Bool *bool    `json:"bool,omitempty"`
	B    *[]byte  `json:"b,omitempty"`
}

// jsonCell is one version of a column.
type jsonCell struct {
	TS int64 `json:"ts"`
	jsonValue
}

type jsonKeyColumn struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	AutoIncrement bool   `json:"auto_increment,omitempty"` // SPEC §14
}

type jsonOptions struct {
	TTL              int64 `json:"ttl"`
	MaxVersions      int   `json:"max_versions"`
	MaxVersionOffset int64 `json:"max_version_offset"`
}

// jsonHeader is the first line of an export.
type jsonHeader struct {
	Table   string          `json:"table"`
	Key     []jsonKeyColumn `json:"key"`
	Options jsonOptions     `json:"options"`
}

// jsonRow is a row line as decoded.
type jsonRow struct {
	Key     map[string]jsonValue       `json:"key"`
	Columns map[string]json.RawMessage `json:"columns"` // each a []jsonCell
}

func toJSONValue(v tablekit.Value) jsonValue {
	var j jsonValue
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		j.S = &s
	case tablekit.TypeInteger:
		i, _ := v.Int()
		j.I = &i
	case tablekit.TypeDouble:
		f, _ := v.Float()
		j.D = &f
	case tablekit.TypeBoolean:
		b, _ := v.Bool()
		j.Bool = &b
	case tablekit.TypeBinary:
		b, _ := v.Bytes()
		if b == nil {
			b = []byte{}
		}
		j.B = &b
	}
	return j
}

func (j jsonValue) value() (tablekit.Value, error) {
	n := 0
	var v tablekit.Value
	if j.S != nil {
		n, v = n+1, tablekit.String(*j.S)
	}
	if j.I != nil {
		n, v = n+1, tablekit.Integer(*j.I)
	}
	if j.D != nil {
		if math.IsNaN(*j.D) || math.IsInf(*j.D, 0) {
			return v, fmt.Errorf("a Double must be finite, not %v", *j.D)
		}
		n, v = n+1, tablekit.Double(*j.D)
	}
	if j.Bool != nil {
		n, v = n+1, tablekit.Boolean(*j.Bool)
	}
	if j.B != nil {
		n, v = n+1, tablekit.Binary(*j.B)
	}
	if n != 1 {
		return tablekit.Value{}, fmt.Errorf("a value must have exactly one of s, i, d, bool, b; this one has %d", n)
	}
	return v, nil
}

func headerOf(m tablekit.TableMeta) jsonHeader {
	h := jsonHeader{Table: m.Name, Options: optionsToJSON(m.Options)}
	for _, kc := range m.Key {
		h.Key = append(h.Key, jsonKeyColumn{Name: kc.Name, Type: kc.Type.String(), AutoIncrement: kc.AutoIncrement})
	}
	return h
}

func (h jsonHeader) meta() (tablekit.TableMeta, error) {
	m := tablekit.TableMeta{Name: h.Table, Options: h.Options.options()}
	for _, kc := range h.Key {
		t, err := parseType(kc.Type)
		if err != nil {
			return m, fmt.Errorf("key column %q: %v", kc.Name, err)
		}
		m.Key = append(m.Key, tablekit.KeyColumn{Name: kc.Name, Type: t, AutoIncrement: kc.AutoIncrement})
	}
	return m, nil
}

// appendJSONRow appends the JSON line of r (without the newline).
func appendJSONRow(b []byte, r *tablekit.Row) ([]byte, error) {
	b = append(b, `{"key":{`...)
	for i, p := range r.Key {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSON(b, p.Name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = appendJSON(b, toJSONValue(p.Value)); err != nil {
			return nil, err
		}
	}
	b = append(b, `},"columns":{`...)
	for i := 0; i < len(r.Columns); {
		name := r.Columns[i].Name
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendJSON(b, name); err != nil {
			return nil, err
		}
		b = append(b, ":["...)
		for first := true; i < len(r.Columns) && r.Columns[i].Name == name; i++ {
			if !first {
				b = append(b, ',')
			}
			first = false
			c := r.Columns[i]
			if b, err = appendJSON(b, jsonCell{TS: c.Version, jsonValue: toJSONValue(c.Value)}); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, "}}"...), nil
}

func appendJSON(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// decodeJSONKey reads a key object of m's key schema (owner's), ordering
// it by the schema.
func decodeJSONKey(m *tablekit.TableMeta, owner keyOwner, line []byte) (tablekit.PrimaryKey, error) {
	var obj map[string]jsonValue
	if err := strictUnmarshal(line, &obj); err != nil {
		return nil, fmt.Errorf("key JSON: %v", err)
	}
	return keyFromJSONOf(m, owner, obj)
}

func keyFromJSON(m *tablekit.TableMeta, obj map[string]jsonValue) (tablekit.PrimaryKey, error) {
	return keyFromJSONOf(m, keyOwner{table: m.Name}, obj)
}

func keyFromJSONOf(m *tablekit.TableMeta, owner keyOwner, obj map[string]jsonValue) (tablekit.PrimaryKey, error) {
	auto := slices.ContainsFunc(m.Key, func(kc tablekit.KeyColumn) bool { _, ok := obj[kc.Name]; return kc.AutoIncrement && !ok })
	if n := len(m.Key); len(obj) != n && !(auto && len(obj) == n-1) {
		return nil, fmt.Errorf("key has %s; %s", plural(int64(len(obj)), "column"), owner.keyIs(m.Key))
	}
	k := make(tablekit.PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		jv, ok := obj[kc.Name]
		if !ok && kc.AutoIncrement { // left out: the store assigns it
			k[i] = tablekit.KeyPart{Name: kc.Name, Value: tablekit.AutoIncrement}
			continue
		}
		if !ok {
			return nil, fmt.Errorf("key lacks column %q; %s", kc.Name, owner.keyIs(m.Key))
		}
		v, err := jv.value()
		if err != nil {
			return nil, fmt.Errorf("key column %q: %v", kc.Name, err)
		}
		if v.Type() != kc.Type {
			return nil, fmt.Errorf("key column %q is %v, not %v", kc.Name, kc.Type, v.Type())
		}
		k[i] = tablekit.KeyPart{Name: kc.Name, Value: v}
	}
	return k, nil
}

// decodeJSONRow reads a row line of table m.
func decodeJSONRow(m *tablekit.TableMeta, line []byte) (tablekit.Row, error) {
	var jr jsonRow
	if err := strictUnmarshal(line, &jr); err != nil {
		return tablekit.Row{}, err
	}
	if jr.Key == nil {
		return tablekit.Row{}, fmt.Errorf(`row has no "key"`)
	}
	k, err := keyFromJSON(m, jr.Key)
	if err != nil {
		return tablekit.Row{}, err
	}
	r := tablekit.Row{Key: k}
	for name, raw := range jr.Columns {
		var cells []jsonCell
		if err := strictUnmarshal(raw, &cells); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field == "" {
				return tablekit.Row{}, fmt.Errorf(`column %q: its versions are a list, as in "%s":[{"ts":1700000000000,"i":42}], not a JSON %s`, name, name, te.Value)
			}
			return tablekit.Row{}, fmt.Errorf("column %q: %s", name, jsonProblem(err))
		}
		if len(cells) == 0 {
			return tablekit.Row{}, fmt.Errorf(`column %q has no versions: give at least one, as in "%s":[{"ts":1700000000000,"i":42}], or leave the column out`, name, name)
		}
		for _, c := range cells {
			v, err := c.value()
			if err != nil {
				return tablekit.Row{}, fmt.Errorf("column %q: %v", name, err)
			}
			if c.TS == 0 {
				return tablekit.Row{}, fmt.Errorf(`column %q: a cell needs its version "ts" (ms)`, name)
			}
			r.Columns = append(r.Columns, tablekit.Column{Name: name, Value: v, Version: c.TS})
		}
	}
	return r, nil
}

// strictUnmarshal decodes one JSON value, refusing unknown fields and
// trailing data, with integers kept exact.
func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// crcTable is the table of the per-row checksums.
var crcTable = crc64.MakeTable(crc64.ECMA)

// rowChecksum is the checksum copy compares rows by: a CRC-64 of a
// canonical encoding of the key, and of every cell's name, version, type
// and value. buf is scratch space, returned for reuse.
func rowChecksum(r *tablekit.Row, buf []byte) (uint64, []byte) {
	b := buf[:0]
	appendVal := func(v tablekit.Value) { b = codec.AppendValue(b, v) }
	b = append(b, byte(len(r.Key)))
	for _, p := range r.Key {
		b = binary.AppendUvarint(b, uint64(len(p.Name)))
		b = append(b, p.Name...)
		appendVal(p.Value)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Columns)))
	for _, c := range r.Columns {
		b = binary.AppendUvarint(b, uint64(len(c.Name)))
		b = append(b, c.Name...)
		b = binary.BigEndian.AppendUint64(b, uint64(c.Version))
		appendVal(c.Value)
	}
	return crc64.Checksum(b, crcTable), b
}
