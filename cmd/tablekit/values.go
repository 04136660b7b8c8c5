package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit"
)

// The command-line syntax of values and keys (see keySyntaxHelp).
//
// A value is TYPE:LITERAL, where TYPE is s (String), i (Integer), d
// (Double), bool (Boolean), b (Binary as hex, optionally 0x-prefixed) or
// b64 (Binary as standard base64). A String or Binary literal may be a Go
// double-quoted string ("a\x00b"), which is how the tool prints any String
// that is not plain. In a primary key the TYPE: may be left out, because
// the table's schema gives it; there a bare Binary is hex (0x00ff) and MIN
// and MAX are the infinite bounds of a scan.

const keySyntaxHelp = `Keys and values on the command line

A key is NAME=VALUE pairs joined by commas, in the table's key order:
    id=abc,seq=42            String "abc", Integer 42
    id="a\x00b",seq=-1       a Go-quoted string: any byte sequence
    blob=0x00ff              Binary, as hex (0x prefix)
    blob="\x00\xff"          Binary, as a quoted byte string
The table's schema gives each key column's type; a prefix TYPE: may be
given anyway and must agree: id=s:abc,seq=i:42. Write a String that looks
like one of these forms (MIN, MAX, "x", s:x) quoted. In scan bounds a
trailing column may be left out (it becomes MIN for --start, MAX for
--end) and MIN / MAX give the infinite bounds: --start id=a,seq=MIN.
A key may also be the JSON object of export's "key": '{"id":{"s":"a"}}'.
In put, AUTO is the value of a table's auto-increment column (create
--key conv:String,seq:Integer:auto): the store assigns it and put prints
the key written: tablekit put msgs conv=c1,seq=AUTO --col text=s:hi.

An attribute value (put --col NAME=VALUE, filters) always names its type:
    s:TEXT  or  "quoted"     String (a bare s: value is taken literally)
    i:42                     Integer (int64)
    d:1.5                    Double (NaN and ±Inf are refused)
    bool:true                Boolean
    b:00ff  b:0x00ff         Binary as hex;  b:"\x00\xff" quoted bytes
    b64:AP8=                 Binary as standard base64
TYPE may also be the type's name, in any case: String:hat, integer:42,
Double:1.5, BOOLEAN:true, Binary:00ff (short forms in any case too).
A version is appended with @: --col price=d:9.5@1700000000000 (ms).
One exception: in put and in filters (scan, count, the console's filter
box), a column that an index of the table declares with a type (create
--index by_status=status:String) takes that type when its value has no
TYPE:, written as in a key (a Binary as hex):
    --col status=pending     --filter 'status == pending'
    --col blob=0x00ff        --filter 'blob == 0x00ff'
A TYPE: given still wins (in put, one that disagrees with the index is
refused by the store). A column two indexes declare with different types
has none: its value must name one.

Index keys (scan, count and get --index NAME) are the index columns, then
the table's other key columns, in that order: --prefix status=pending,
--start status=a --end status=m, get --index by_status status=open,id=o1.
An attribute index column's value takes the type the index declares.

The tool prints keys in this syntax, quoting every String that is not
plain, so any key it prints (a NUL byte, binary, spaces) can be pasted
back into get, delete or scan.
`

// plainString reports whether s prints bare in a key without ambiguity.
func plainString(s string) bool {
	if s == "" || s == "MIN" || s == "MAX" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '-' || c == '.' || c == '/' || c == '@' || c == '+' || c == '~':
		default:
			return false
		}
	}
	return true
}

// quoteString quotes a String: printable Unicode stays as it is.
func quoteString(s string) string { return strconv.Quote(s) }

// formatKeyValue prints one key column's value without a type prefix.
func formatKeyValue(v tablekit.Value) string {
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		if plainString(s) {
			return s
		}
		return quoteString(s)
	case tablekit.TypeInteger:
		i, _ := v.Int()
		return strconv.FormatInt(i, 10)
	case tablekit.TypeBinary:
		s, _ := v.BytesString()
		return "0x" + hex.EncodeToString([]byte(s))
	}
	if v.IsInfMin() {
		return "MIN"
	}
	if v.IsInfMax() {
		return "MAX"
	}
	if v.IsAutoIncrement() {
		return "AUTO"
	}
	return formatValue(v)
}

// formatKey prints a key as name=value,... in the command-line syntax.
func formatKey(k tablekit.PrimaryKey) string {
	var b strings.Builder
	for i, p := range k {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Name)
		b.WriteByte('=')
		b.WriteString(formatKeyValue(p.Value))
	}
	return b.String()
}

// formatValue prints an attribute value with its type prefix; parseValue
// reads it back.
func formatValue(v tablekit.Value) string {
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		if plainString(s) {
			return "s:" + s
		}
		return quoteString(s)
	case tablekit.TypeInteger:
		i, _ := v.Int()
		return "i:" + strconv.FormatInt(i, 10)
	case tablekit.TypeDouble:
		f, _ := v.Float()
		return "d:" + strconv.FormatFloat(f, 'g', -1, 64)
	case tablekit.TypeBoolean:
		t, _ := v.Bool()
		return "bool:" + strconv.FormatBool(t)
	case tablekit.TypeBinary:
		s, _ := v.BytesString()
		return "b:0x" + hex.EncodeToString([]byte(s))
	}
	return v.String()
}

// splitList splits s at commas that are outside double quotes.
func splitList(s string) ([]string, error) {
	var out []string
	start, inQuote := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote in %s", shorten(s))
	}
	return append(out, s[start:]), nil
}

// shorten keeps error messages short whatever the user typed.
func shorten(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	cut := s[:64]
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(cut), len(s))
}

// typePrefixes maps a value prefix to its type; b64 is Binary too.
var typePrefixes = map[string]tablekit.Type{
	"s": tablekit.TypeString, "i": tablekit.TypeInteger, "d": tablekit.TypeDouble,
	"bool": tablekit.TypeBoolean, "b": tablekit.TypeBinary, "b64": tablekit.TypeBinary,
}

// typeNames maps a type's full name, lower-cased, to its short prefix.
var typeNames = map[string]string{"string": "s", "integer": "i", "double": "d", "boolean": "bool", "binary": "b"}

// canonicalPrefix returns the short prefix (a key of typePrefixes) that p
// names: a short form or a type's full name (String, Integer, Double,
// Boolean, Binary), in any case; ok is false for anything else.
func canonicalPrefix(p string) (string, bool) {
	if _, ok := typePrefixes[p]; ok {
		return p, true
	}
	l := strings.ToLower(p)
	if _, ok := typePrefixes[l]; ok {
		return l, true
	}
	short, ok := typeNames[l]
	return short, ok
}

// splitPrefix splits "TYPE:literal", TYPE as canonicalPrefix reads it;
// prefix is "" when lit has none, else the short form.
func splitPrefix(lit string) (prefix, rest string) {
	if strings.HasPrefix(lit, `"`) {
		return "", lit
	}
	if i := strings.IndexByte(lit, ':'); i > 0 {
		if p, ok := canonicalPrefix(lit[:i]); ok {
			return p, lit[i+1:]
		}
	}
	return "", lit
}

// parseLiteral reads lit as a value of type t; prefix is the type prefix
// the user wrote ("" for none, in which case a Binary is hex and a quoted
// literal is a String or the bytes of a Binary).
func parseLiteral(t tablekit.Type, prefix, lit string) (tablekit.Value, error) {
	quoted := strings.HasPrefix(lit, `"`)
	var text string
	if quoted {
		s, err := strconv.Unquote(lit)
		if err != nil {
			return tablekit.Value{}, fmt.Errorf("bad quoted literal %s: %v", shorten(lit), err)
		}
		text = s
	}
	switch t {
	case tablekit.TypeString:
		if !quoted {
			text = lit
		}
		if !utf8.ValidString(text) {
			return tablekit.Value{}, fmt.Errorf("a String must be valid UTF-8 (use a Binary for bytes), not %s", shorten(text))
		}
		return tablekit.String(text), nil
	case tablekit.TypeBinary:
		if quoted {
			return tablekit.BinaryString(text), nil
		}
		if prefix == "b64" {
			b, err := base64.StdEncoding.DecodeString(lit)
			if err != nil {
				return tablekit.Value{}, fmt.Errorf("not base64: %s (%v)", shorten(lit), err)
			}
			return tablekit.Binary(b), nil
		}
		h := strings.TrimPrefix(strings.TrimPrefix(lit, "0x"), "0X")
		b, err := hex.DecodeString(h)
		if err != nil {
			return tablekit.Value{}, fmt.Errorf("a Binary must be hex (0x00ff) or a quoted byte string, not %s", shorten(lit))
		}
		return tablekit.Binary(b), nil
	}
	if quoted {
		article := "a"
		if t == tablekit.TypeInteger {
			article = "an"
		}
		return tablekit.Value{}, fmt.Errorf("%s %v cannot be quoted: %s", article, t, shorten(lit))
	}
	switch t {
	case tablekit.TypeInteger:
		i, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			return tablekit.Value{}, fmt.Errorf("an Integer must be a decimal int64, not %s", shorten(lit))
		}
		return tablekit.Integer(i), nil
	case tablekit.TypeDouble:
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return tablekit.Value{}, fmt.Errorf("a Double must be a finite number, not %s", shorten(lit))
		}
		return tablekit.Double(f), nil
	case tablekit.TypeBoolean:
		b, err := strconv.ParseBool(lit)
		if err != nil {
			return tablekit.Value{}, fmt.Errorf("a Boolean must be true or false, not %s", shorten(lit))
		}
		return tablekit.Boolean(b), nil
	}
	return tablekit.Value{}, fmt.Errorf("unknown type %v", t)
}

// parseValue reads an attribute value, which names its type (a quoted
// literal alone is a String).
func parseValue(s string) (tablekit.Value, error) {
	prefix, lit := splitPrefix(s)
	if prefix == "" {
		if strings.HasPrefix(lit, `"`) {
			return parseLiteral(tablekit.TypeString, "", lit)
		}
		return tablekit.Value{}, fmt.Errorf("value %s needs a type: s:TEXT, i:INT, d:FLOAT, bool:BOOL, b:HEX or b64:BASE64, or the type's name (String:TEXT, Integer:INT, ...) (see 'tablekit help keys')", shorten(s))
	}
	return parseLiteral(typePrefixes[prefix], prefix, lit)
}

// parseColumn reads NAME=VALUE[@VERSION] for put.
func parseColumn(s string) (tablekit.Column, error) { return parseColumnTyped(s, columnTypes{}) }

// parseColumnTyped is parseColumn where the value is read by types.value:
// an untyped value of a column an index declares with a type takes it.
func parseColumnTyped(s string, types columnTypes) (tablekit.Column, error) {
	name, val, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return tablekit.Column{}, fmt.Errorf("column %s: want NAME=TYPE:VALUE[@VERSION]", shorten(s))
	}
	var version int64
	if i := strings.LastIndexByte(val, '@'); i >= 0 && !strings.HasSuffix(val, `"`) {
		if n, err := strconv.ParseInt(val[i+1:], 10, 64); err == nil {
			version, val = n, val[:i]
		}
	}
	v, err := types.value(name, val)
	if err != nil {
		return tablekit.Column{}, fmt.Errorf("column %q: %v", name, err)
	}
	return tablekit.Column{Name: name, Value: v, Version: version}, nil
}

// keyOwner names whose key schema a key is written in, for errors: a
// table's, or (index not "") one of its indexes', whose key is the index
// columns, then the table's other key columns.
type keyOwner struct{ table, index string }

// keyIs says what the owner's key is: "table "t"'s key is id:String".
func (o keyOwner) keyIs(ks tablekit.KeySchema) string {
	if o.index == "" {
		return fmt.Sprintf("table %q's key is %s", o.table, schemaString(ks))
	}
	return fmt.Sprintf("index %q of table %q has the key %s (its columns, then the table's other key columns)", o.index, o.table, schemaString(ks))
}

// parseKey reads a key of table m in the command-line syntax or as a JSON
// object. With bound, MIN and MAX are allowed and trailing columns left
// out are filled with fill (InfMin or InfMax).
func parseKey(m *tablekit.TableMeta, s string, bound bool, fill tablekit.Value) (tablekit.PrimaryKey, error) {
	return parseKeyOf(m, keyOwner{table: m.Name}, s, bound, fill)
}

// parseKeyOf is parseKey of the key schema m.Key, which is owner's (an
// index's: indexView's m); errors name owner.
func parseKeyOf(m *tablekit.TableMeta, owner keyOwner, s string, bound bool, fill tablekit.Value) (tablekit.PrimaryKey, error) {
	if strings.HasPrefix(strings.TrimSpace(s), "{") {
		k, err := decodeJSONKey(m, owner, []byte(s))
		if err != nil {
			return nil, err
		}
		return k, nil
	}
	var parts []string
	if s != "" {
		var err error
		if parts, err = splitList(s); err != nil {
			return nil, fmt.Errorf("key: %v", err)
		}
	}
	if len(parts) > len(m.Key) || (!bound && len(parts) != len(m.Key)) {
		return nil, fmt.Errorf("key %s has %s; %s", shorten(s), plural(int64(len(parts)), "column"), owner.keyIs(m.Key))
	}
	k := make(tablekit.PrimaryKey, 0, len(m.Key))
	for i, part := range parts {
		kc := m.Key[i]
		name, lit, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("key part %s: want NAME=VALUE", shorten(part))
		}
		if name != kc.Name {
			return nil, fmt.Errorf("key column %d is %q, not %q; %s", i+1, kc.Name, name, owner.keyIs(m.Key))
		}
		var v tablekit.Value
		switch {
		case bound && lit == "MIN":
			v = tablekit.InfMin
		case bound && lit == "MAX":
			v = tablekit.InfMax
		case kc.AutoIncrement && lit == "AUTO":
			v = tablekit.AutoIncrement // the store assigns it (a put; elsewhere refused)
		default:
			prefix, rest := splitPrefix(lit)
			if prefix != "" && typePrefixes[prefix] != kc.Type {
				return nil, fmt.Errorf("key column %q is %v, not %v", kc.Name, kc.Type, typePrefixes[prefix])
			}
			var err error
			if v, err = parseLiteral(kc.Type, prefix, rest); err != nil {
				return nil, fmt.Errorf("key column %q: %v", kc.Name, err)
			}
		}
		k = append(k, tablekit.KeyPart{Name: name, Value: v})
	}
	for _, kc := range m.Key[len(parts):] {
		k = append(k, tablekit.KeyPart{Name: kc.Name, Value: fill})
	}
	return k, nil
}

// schemaString prints a key schema as name:Type,... (an auto-increment
// column as name:Integer:auto).
func schemaString(ks tablekit.KeySchema) string {
	parts := make([]string, len(ks))
	for i, kc := range ks {
		parts[i] = kc.Name + ":" + kc.Type.String()
		if kc.AutoIncrement {
			parts[i] += ":auto"
		}
	}
	return strings.Join(parts, ",")
}

// parseSchema reads name:Type[:auto],... (types String, Integer, Binary,
// case insensitive, or s/i/b; :auto makes an auto-increment column).
func parseSchema(s string) (tablekit.KeySchema, error) {
	var ks tablekit.KeySchema
	for part := range strings.SplitSeq(s, ",") {
		name, typ, ok := strings.Cut(part, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("key column %s: want NAME:TYPE (String, Integer or Binary)", shorten(part))
		}
		typ, auto, isAuto := strings.Cut(typ, ":")
		if isAuto && auto != "auto" {
			return nil, fmt.Errorf("key column %q: %s after the type: want :auto (an auto-increment column) or nothing", name, shorten(auto))
		}
		t, err := parseType(typ)
		if err != nil {
			return nil, fmt.Errorf("key column %q: %v", name, err)
		}
		ks = append(ks, tablekit.KeyColumn{Name: name, Type: t, AutoIncrement: isAuto})
	}
	return ks, nil
}

func parseType(s string) (tablekit.Type, error) {
	switch strings.ToLower(s) {
	case "s", "string":
		return tablekit.TypeString, nil
	case "i", "int", "integer":
		return tablekit.TypeInteger, nil
	case "b", "binary":
		return tablekit.TypeBinary, nil
	case "d", "double":
		return tablekit.TypeDouble, nil
	case "bool", "boolean":
		return tablekit.TypeBoolean, nil
	}
	return 0, fmt.Errorf("unknown type %s (want String, Integer, Binary, Double or Boolean)", shorten(s))
}
