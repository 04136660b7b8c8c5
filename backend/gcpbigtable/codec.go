package gcpbigtable

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/tablekit/tablekit"
)

// Column families and qualifiers of a data table (see the package doc).
const (
	famCells   = "c"       // attribute cells: qualifier = column name, ts = version*1000
	famMeta    = "m"       // per-row bookkeeping, always at timestamp 0
	qualMarker = "keyonly" // m:keyonly, a key-only row (SPEC §7)
	qualRev    = "rev"     // m:rev, the row's revision for optimistic writes

	famTable     = "t"       // metadata table family
	qualSchema   = "schema"  // t:schema, the key schema and Bigtable table id (JSON)
	qualOptions  = "options" // t:options, the table options (JSON)
	maxTableID   = 50        // Bigtable table ids are at most 50 characters
	maxRowKeyLen = 4096      // Bigtable row keys are at most 4 KiB
)

// Type prefixes of cell values.
const (
	tagString  = 's'
	tagInteger = 'i'
	tagDouble  = 'd'
	tagBoolean = 'b'
	tagBinary  = 'x'
)

// appendValue appends the cell encoding of v: one type byte, then the value
// in a form cbt prints readably (decimal numbers, "true"/"false", raw bytes).
func appendValue(dst []byte, v tablekit.Value) []byte {
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		dst = append(dst, tagString)
		return append(dst, s...)
	case tablekit.TypeInteger:
		i, _ := v.Int()
		dst = append(dst, tagInteger)
		return strconv.AppendInt(dst, i, 10)
	case tablekit.TypeDouble:
		f, _ := v.Float()
		dst = append(dst, tagDouble)
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	case tablekit.TypeBoolean:
		b, _ := v.Bool()
		dst = append(dst, tagBoolean)
		return strconv.AppendBool(dst, b)
	case tablekit.TypeBinary:
		s, _ := v.BytesString()
		dst = append(dst, tagBinary)
		return append(dst, s...)
	}
	return dst
}

func encodeValue(v tablekit.Value) []byte {
	return appendValue(make([]byte, 0, maxValueLen(v)), v)
}

// decodeValue decodes a cell value written by appendValue. Bytes that are
// not such an encoding (a cell written by another tool) give an error,
// never a panic.
func decodeValue(b []byte) (tablekit.Value, error) {
	if len(b) == 0 {
		return tablekit.Value{}, fmt.Errorf("empty cell value")
	}
	body := b[1:]
	switch b[0] {
	case tagString:
		return tablekit.String(string(body)), nil
	case tagBinary:
		return tablekit.Binary(body), nil
	case tagInteger:
		i, err := strconv.ParseInt(string(body), 10, 64)
		if err != nil || (len(body) > 1 && (body[0] == '+' || (body[0] == '0') || (body[0] == '-' && body[1] == '0'))) {
			return tablekit.Value{}, fmt.Errorf("malformed Integer cell %q", b)
		}
		return tablekit.Integer(i), nil
	case tagDouble:
		f, err := strconv.ParseFloat(string(body), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return tablekit.Value{}, fmt.Errorf("malformed Double cell %q", b)
		}
		return tablekit.Double(f), nil
	case tagBoolean:
		switch string(body) {
		case "true":
			return tablekit.Boolean(true), nil
		case "false":
			return tablekit.Boolean(false), nil
		}
		return tablekit.Value{}, fmt.Errorf("malformed Boolean cell %q", b)
	}
	return tablekit.Value{}, fmt.Errorf("cell value has unknown type byte 0x%02x", b[0])
}

// TableID returns the Bigtable table id of a portable table name: the name
// itself when it has at most 50 characters; otherwise its first 33
// characters, '-', and 16 hex digits of the SHA-256 of the whole name.
// Portable names never contain '-', so the two forms never collide.
func TableID(name string) string {
	if len(name) <= maxTableID {
		return name
	}
	h := sha256.Sum256([]byte(name))
	return name[:maxTableID-17] + "-" + hex.EncodeToString(h[:8])
}

// storedSchema is the JSON of t:schema.
type storedSchema struct {
	BigtableTable string         `json:"bigtable_table"`
	Key           []storedKeyCol `json:"key"`
}

type storedKeyCol struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// storedOptions is the JSON of t:options.
type storedOptions struct {
	TTL              int64 `json:"ttl"`
	MaxVersions      int   `json:"max_versions"`
	MaxVersionOffset int64 `json:"max_version_offset"`
}

func encodeSchema(m *tablekit.TableMeta) []byte {
	s := storedSchema{BigtableTable: TableID(m.Name)}
	for _, kc := range m.Key {
		s.Key = append(s.Key, storedKeyCol{Name: kc.Name, Type: kc.Type.String()})
	}
	b, _ := json.Marshal(s)
	return b
}

func encodeOptions(o tablekit.TableOptions) []byte {
	b, _ := json.Marshal(storedOptions{TTL: o.TTL, MaxVersions: o.MaxVersions, MaxVersionOffset: o.MaxVersionOffset})
	return b
}

func parseKeyType(s string) (tablekit.Type, bool) {
	for _, t := range []tablekit.Type{tablekit.TypeString, tablekit.TypeInteger, tablekit.TypeBinary} {
		if t.String() == s {
			return t, true
		}
	}
	return 0, false
}

// decodeMeta rebuilds a TableMeta from the metadata row's two cells.
func decodeMeta(name string, schema, options []byte) (*tablekit.TableMeta, error) {
	var s storedSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("metadata t:schema of table %q: %w", name, err)
	}
	var o storedOptions
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, fmt.Errorf("metadata t:options of table %q: %w", name, err)
	}
	m := &tablekit.TableMeta{Name: name, Options: tablekit.TableOptions{TTL: o.TTL, MaxVersions: o.MaxVersions, MaxVersionOffset: o.MaxVersionOffset}}
	if len(s.Key) == 0 || len(s.Key) > tablekit.MaxKeyColumns {
		return nil, fmt.Errorf("metadata t:schema of table %q has %d key columns", name, len(s.Key))
	}
	for _, kc := range s.Key {
		t, ok := parseKeyType(kc.Type)
		if !ok {
			return nil, fmt.Errorf("metadata t:schema of table %q: key column %q has unknown type %q", name, kc.Name, kc.Type)
		}
		m.Key = append(m.Key, tablekit.KeyColumn{Name: kc.Name, Type: t})
	}
	if m.Options.MaxVersions < 1 || (m.Options.TTL != tablekit.NoExpiry && m.Options.TTL < 1) || m.Options.MaxVersionOffset < 1 {
		return nil, fmt.Errorf("metadata t:options of table %q holds invalid options %+v", name, o)
	}
	return m, nil
}
