package awsdynamodb

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// The cells of a row live in at most two attributes (see the package doc):
// .c, a String holding every column that has no Binary version, and .b, a
// Binary holding the others. Both list their columns in ascending name
// order and each column's cells newest first, so a decoded row is in
// rowmodel's stored order as it comes.

var errCorrupt = errors.New("malformed column data")

// appendTextColumn appends a column (its cells, newest first) to a .c
// attribute: the name, then per cell '~' length ['@' version] type
// payload. The length is the payload's, in bytes; the version is left out
// when it is the item's base version. Types: S (the UTF-8 string), I
// (decimal), D (strconv's shortest 'g' form, which round-trips every
// float64, -0 and 1e300 included, as DynamoDB's N could not) and B (t or f).
func appendTextColumn(dst []byte, cells []tablekit.Column, base int64) []byte {
	dst = append(dst, cells[0].Name...)
	for _, c := range cells {
		var scratch [32]byte
		var typ byte
		var payload []byte
		var s string
		switch v := c.Value; v.Type() {
		case tablekit.TypeInteger:
			i, _ := v.Int()
			typ, payload = 'I', strconv.AppendInt(scratch[:0], i, 10)
		case tablekit.TypeDouble:
			f, _ := v.Float()
			typ, payload = 'D', strconv.AppendFloat(scratch[:0], f, 'g', -1, 64)
		case tablekit.TypeBoolean:
			typ, payload = 'B', append(scratch[:0], 'f')
			if b, _ := v.Bool(); b {
				payload[0] = 't'
			}
		default:
			typ = 'S'
			s, _ = v.Str()
		}
		dst = append(dst, '~')
		dst = strconv.AppendInt(dst, int64(len(payload)+len(s)), 10)
		if c.Version != base {
			dst = append(dst, '@')
			dst = strconv.AppendInt(dst, c.Version, 10)
		}
		dst = append(dst, typ)
		dst = append(dst, payload...)
		dst = append(dst, s...)
	}
	return dst
}

// textSize is about the size of a column in a .c attribute.
func textSize(cells []tablekit.Column) int {
	n := len(cells[0].Name)
	for _, c := range cells {
		n += c.Value.Size() + 28
	}
	return n
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// decimalEnd returns the end of the (optionally signed) decimal number at
// the start of s.
func decimalEnd(s string, signed bool) int {
	i := 0
	if signed && i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// decodeText appends the cells of a .c attribute to dst. Names and String
// values share s's memory. A cell without a version has base (hasBase
// false: the item recorded none, so every cell must carry one). Columns
// must come in strictly ascending name order, and versions strictly
// descending within a column.
func decodeText(dst []tablekit.Column, s string, base int64, hasBase bool) ([]tablekit.Column, error) {
	if s == "" {
		return dst, errCorrupt
	}
	prev := ""
	for len(s) > 0 {
		i := 0
		for i < len(s) && isNameByte(s[i]) {
			i++
		}
		if i == 0 || i == len(s) || s[i] != '~' || (prev != "" && s[:i] <= prev) {
			return dst, errCorrupt
		}
		name := s[:i]
		s, prev = s[i:], name
		first := len(dst)
		for len(s) > 0 && s[0] == '~' {
			e := 1 + decimalEnd(s[1:], false)
			n, err := strconv.Atoi(s[1:e])
			if err != nil {
				return dst, errCorrupt
			}
			s = s[e:]
			ver, ok := base, hasBase
			if len(s) > 0 && s[0] == '@' {
				e := 1 + decimalEnd(s[1:], true)
				v, err := strconv.ParseInt(s[1:e], 10, 64)
				if err != nil {
					return dst, errCorrupt
				}
				ver, ok, s = v, true, s[e:]
			}
			if !ok || n >= len(s) || (len(dst) > first && ver >= dst[len(dst)-1].Version) {
				return dst, errCorrupt
			}
			v, err := parseTextValue(s[0], s[1:1+n])
			if err != nil {
				return dst, err
			}
			s = s[1+n:]
			dst = append(dst, tablekit.Column{Name: name, Value: v, Version: ver})
		}
	}
	return dst, nil
}

func parseTextValue(typ byte, payload string) (tablekit.Value, error) {
	switch typ {
	case 'S':
		return tablekit.String(payload), nil
	case 'I':
		i, err := strconv.ParseInt(payload, 10, 64)
		if err != nil {
			return tablekit.Value{}, errCorrupt
		}
		return tablekit.Integer(i), nil
	case 'D':
		f, err := strconv.ParseFloat(payload, 64)
		if err != nil {
			return tablekit.Value{}, errCorrupt
		}
		return tablekit.Double(f), nil
	case 'B':
		if payload != "t" && payload != "f" {
			return tablekit.Value{}, errCorrupt
		}
		return tablekit.Boolean(payload == "t"), nil
	}
	return tablekit.Value{}, errCorrupt
}

// binaryFormat is the first byte of a .b attribute.
const binaryFormat = 2

// appendBinaryColumn appends a column to a .b attribute (which starts with
// the byte binaryFormat): uvarint name length, name, uvarint cell count,
// then the cells as appendCell writes them.
func appendBinaryColumn(dst []byte, cells []tablekit.Column) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(cells[0].Name)))
	dst = append(dst, cells[0].Name...)
	dst = binary.AppendUvarint(dst, uint64(len(cells)))
	for _, c := range cells {
		dst = appendCell(dst, c)
	}
	return dst
}

// decodeBinary appends the cells of a .b attribute to dst, with the same
// order rules as decodeText.
func decodeBinary(dst []tablekit.Column, b []byte) ([]tablekit.Column, error) {
	if len(b) < 2 || b[0] != binaryFormat {
		return dst, errCorrupt
	}
	b = b[1:]
	// One copy of the attribute: the names and the String and Binary values
	// are substrings of it, as decodeText's are of its attribute.
	s := string(b)
	prev := ""
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > uint64(len(b)-k) {
			return dst, errCorrupt
		}
		at := len(s) - len(b) + k
		name := s[at : at+int(n)]
		b = b[k+int(n):]
		if prev != "" && name <= prev {
			return dst, errCorrupt
		}
		prev = name
		count, k := binary.Uvarint(b)
		if k <= 0 || count == 0 || count > uint64(len(b)) {
			return dst, errCorrupt
		}
		b = b[k:]
		for i := uint64(0); i < count; i++ {
			c, m, err := decodeCell(s[len(s)-len(b):])
			if err != nil {
				return dst, err
			}
			b = b[m:]
			if i > 0 && c.Version >= dst[len(dst)-1].Version {
				return dst, errCorrupt
			}
			c.Name = name
			dst = append(dst, c)
		}
	}
	return dst, nil
}

// appendCell appends one binary cell: version (8 bytes big endian), type
// (1 byte: 1 String, 2 Integer, 3 Double, 4 Boolean, 5 Binary), value
// (Integer/Double 8 bytes big endian, Boolean 1 byte, String/Binary uvarint
// length then bytes).
func appendCell(dst []byte, c tablekit.Column) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Version))
	return codec.AppendValue(dst, c.Value)
}

// decodeCell decodes the binary cell at the start of s (its Name unset)
// and returns it and its length; the value is decoded by codec.DecodeValue,
// and a String or Binary one is a substring of s.
func decodeCell(s string) (tablekit.Column, int, error) {
	if len(s) < 8 {
		return tablekit.Column{}, 0, errCorrupt
	}
	v, n, err := codec.DecodeValue(s[8:])
	if err != nil {
		return tablekit.Column{}, 0, errCorrupt
	}
	return tablekit.Column{Value: v, Version: int64(binary.BigEndian.Uint64([]byte(s[:8])))}, 8 + n, nil
}
