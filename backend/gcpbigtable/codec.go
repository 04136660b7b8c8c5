package gcpbigtable

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tablekit/tablekit"
)

// Column families and qualifiers of a data table (see the package doc).
const (
	famCells   = "c"       // attribute cells: qualifier = column name, ts = version*1000
	famMeta    = "m"       // per-row bookkeeping, always at timestamp 0
	qualMarker = "keyonly" // m:keyonly, a key-only row (SPEC §7)
	qualRev    = "rev"     // m:rev, the row's revision for optimistic writes
	qualGen    = "gen"     // m:gen, the newest options generation the row was written under

	famTable        = "t"           // metadata table family
	qualSchema      = "schema"      // t:schema, the key schema and Bigtable table id (JSON)
	qualOptions     = "options"     // t:options, the table options (JSON)
	qualIncarnation = "incarnation" // t:incarnation, the table's incarnation (absent on tables made before incarnations)
	qualGeneration  = "generation"  // t:generation, the options' generation in decimal (absent: 1)
	maxTableID      = 50            // Bigtable table ids are at most 50 characters
	maxRowKeyLen    = 4096          // Bigtable row keys are at most 4 KiB
	incLen          = 16            // the hex digits of an incarnation in a table id
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
			return tablekit.Value{}, fmt.Errorf("malformed Integer cell %v", quoteBytes(b))
		}
		return tablekit.Integer(i), nil
	case tagDouble:
		f, err := strconv.ParseFloat(string(body), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return tablekit.Value{}, fmt.Errorf("malformed Double cell %v", quoteBytes(b))
		}
		return tablekit.Double(f), nil
	case tagBoolean:
		switch string(body) {
		case "true":
			return tablekit.Boolean(true), nil
		case "false":
			return tablekit.Boolean(false), nil
		}
		return tablekit.Value{}, fmt.Errorf("malformed Boolean cell %v", quoteBytes(b))
	}
	return tablekit.Value{}, fmt.Errorf("cell value has unknown type byte 0x%02x", b[0])
}

// quoteBytes formats raw bytes of a cell or row key for a message: a
// Binary value's form, which quotes at most 32 bytes and gives the full
// length (SPEC §12: messages never echo kilobytes of key or value).
func quoteBytes[T ~string | ~[]byte](b T) string { return tablekit.BinaryString(string(b)).String() }

// TableID returns the Bigtable table id of a portable table name and one
// incarnation of it (tablekit.TableMeta.Incarnation), so that a table
// deleted and created again under the same name is another Bigtable table.
//
// Without an incarnation (a table made before incarnations existed) it is
// the name itself when that has at most 50 characters, otherwise the
// name's first 33 characters, '-', and 16 hex digits of the SHA-256 of the
// whole name. With one, '.' and the incarnation follow a base made the same
// way but short enough that the whole id has at most 50 characters: the
// name itself when it has at most 33 characters, otherwise its first 16,
// '-' and the 16 hex digits. The Client makes incarnations of 16 hex
// digits; any other incarnation is replaced by 16 hex digits of its
// SHA-256. Portable names never contain '-' or '.', so no two of these
// forms collide.
func TableID(name, incarnation string) string {
	if incarnation == "" {
		return shortName(name, maxTableID)
	}
	if !isIncarnation(incarnation) {
		h := sha256.Sum256([]byte(incarnation))
		incarnation = hex.EncodeToString(h[:incLen/2])
	}
	return shortName(name, maxTableID-1-incLen) + "." + incarnation
}

// shortName returns name when it has at most max characters, otherwise its
// first max-17 characters, '-', and 16 hex digits of its SHA-256.
func shortName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	h := sha256.Sum256([]byte(name))
	return name[:max-17] + "-" + hex.EncodeToString(h[:8])
}

// isIncarnation reports whether s is 16 lower-case hex digits, as the
// Client makes them.
func isIncarnation(s string) bool {
	if len(s) != incLen {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// storedSchema is the JSON of t:schema.
type storedSchema struct {
	BigtableTable string         `json:"bigtable_table"`
	Key           []storedKeyCol `json:"key"`
}

type storedKeyCol struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	AutoIncrement bool   `json:"auto_increment,omitempty"` // SPEC §14
}

// storedOptions is the JSON of t:options.
type storedOptions struct {
	TTL              int64 `json:"ttl"`
	MaxVersions      int   `json:"max_versions"`
	MaxVersionOffset int64 `json:"max_version_offset"`
}

func encodeSchema(m *tablekit.TableMeta) []byte {
	s := storedSchema{BigtableTable: TableID(m.Name, m.Incarnation)}
	for _, kc := range m.Key {
		s.Key = append(s.Key, storedKeyCol{Name: kc.Name, Type: kc.Type.String(), AutoIncrement: kc.AutoIncrement})
	}
	b, _ := json.Marshal(s)
	return b
}

func encodeOptions(o tablekit.TableOptions) []byte {
	b, _ := json.Marshal(storedOptions{TTL: o.TTLSeconds(), MaxVersions: o.MaxVersions, MaxVersionOffset: o.MaxVersionOffsetSeconds()})
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

// decodeMeta rebuilds a TableMeta from the metadata row's cells. A row
// without t:generation (a table made before generations were counted, or
// never updated since) is at Generation 1; one without t:incarnation has
// the empty Incarnation and keeps the Bigtable table id it always had.
func decodeMeta(name string, schema, options, incarnation, generation []byte) (*tablekit.TableMeta, error) {
	var s storedSchema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("metadata t:schema of table %q: %w", name, err)
	}
	var o storedOptions
	if err := json.Unmarshal(options, &o); err != nil {
		return nil, fmt.Errorf("metadata t:options of table %q: %w", name, err)
	}
	m := &tablekit.TableMeta{Name: name, Options: tablekit.TableOptions{TTL: time.Duration(o.TTL) * time.Second, MaxVersions: o.MaxVersions, MaxVersionOffset: time.Duration(o.MaxVersionOffset) * time.Second},
		Incarnation: string(incarnation), Generation: 1}
	if generation != nil {
		g, err := strconv.ParseInt(string(generation), 10, 64)
		if err != nil || g < 1 {
			return nil, fmt.Errorf("metadata t:generation of table %q holds %v, not a generation", name, quoteBytes(generation))
		}
		m.Generation = g
	}
	if s.BigtableTable != "" && s.BigtableTable != TableID(name, m.Incarnation) {
		return nil, fmt.Errorf("metadata of table %q names Bigtable table %q, want %q", name, s.BigtableTable, TableID(name, m.Incarnation))
	}
	if len(s.Key) == 0 || len(s.Key) > tablekit.MaxKeyColumns {
		return nil, fmt.Errorf("metadata t:schema of table %q has %d key columns", name, len(s.Key))
	}
	for _, kc := range s.Key {
		t, ok := parseKeyType(kc.Type)
		if !ok {
			return nil, fmt.Errorf("metadata t:schema of table %q: key column %q has unknown type %q", name, kc.Name, kc.Type)
		}
		m.Key = append(m.Key, tablekit.KeyColumn{Name: kc.Name, Type: t, AutoIncrement: kc.AutoIncrement})
	}
	if m.Options.MaxVersions < 1 || (o.TTL != -1 && o.TTL < 1) || o.MaxVersionOffset < 1 {
		return nil, fmt.Errorf("metadata t:options of table %q holds invalid options %+v", name, o)
	}
	return m, nil
}
