package awsdynamodb

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/keycodec"
	"github.com/tablekit/tablekit/rowmodel"
)

// Attribute names the adapter reserves in every item. Each starts with a
// '.', which no portable column name can contain, so they never collide
// with a column.
const (
	attrShard    = ".s" // N, partition key: the shard number 0..N-1
	attrKey      = ".k" // B, sort key: keycodec encoding of the primary key
	attrRevision = ".r" // N, random revision, changed by every write
	attrMarker   = ".m" // BOOL true: a key-only row (SPEC §7)
	attrExpiry   = ".x" // N, epoch seconds after which every cell is invisible
)

// DynamoDB limits (Developer Guide, "Service, account, and table quotas").
const (
	maxItemSize    = 400 * 1024
	maxSortKeySize = 1024
	maxNativeName  = 255
	minNativeName  = 3
)

// cellFormat is the first byte of every column attribute.
const cellFormat = 1

// shardOf returns the shard of a row: FNV-1a 64 of the keycodec encoding of
// the partition-key (first) column, modulo n. This is part of the storage
// format: changing it would lose every stored row.
func shardOf(pk tablekit.Value, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write(keycodec.Encode(tablekit.PrimaryKey{{Value: pk}}))
	return int(h.Sum64() % uint64(n))
}

// nativeName maps a portable table name (plus the backend's prefix) to a
// DynamoDB table name: [a-zA-Z0-9_.-]{3,255}. Portable names use only
// [A-Za-z0-9_], so a name of 3–255 bytes maps to itself; shorter ones are
// padded with '-', longer ones cut and suffixed with '-' and 16 hex digits
// of their SHA-256. '-' never occurs in a portable name, so the mapping is
// injective for a fixed prefix.
func nativeName(prefix, name string) string {
	n := prefix + name
	for len(n) < minNativeName {
		n += "-"
	}
	if len(n) > maxNativeName {
		sum := sha256.Sum256([]byte(n))
		n = n[:maxNativeName-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return n
}

// newRevision returns a fresh random revision. Revisions are random, not
// counters, so that no two writes can leave the same revision behind (an
// unconditional PutRow does not read the old one).
func newRevision() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return strconv.FormatUint(binary.BigEndian.Uint64(b[:])>>1, 10)
}

// appendCell appends one cell of a column attribute: version (8 bytes big
// endian), type (1 byte), value (Integer/Double 8 bytes big endian, Boolean 1
// byte, String/Binary uvarint length then bytes).
func appendCell(dst []byte, c tablekit.Column) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Version))
	v := c.Value
	dst = append(dst, byte(v.Type()))
	switch v.Type() {
	case tablekit.TypeInteger:
		i, _ := v.Int()
		dst = binary.BigEndian.AppendUint64(dst, uint64(i))
	case tablekit.TypeDouble:
		f, _ := v.Float()
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	case tablekit.TypeBoolean:
		b, _ := v.Bool()
		if b {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	default:
		s, ok := v.Str()
		if !ok {
			s, _ = v.BytesString()
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

var errCorrupt = errors.New("malformed column attribute")

// appendCellText appends one cell of a String column attribute (a column
// with no Binary version): "<version> <type><length>:<payload>;" with type
// S (the UTF-8 string), I (decimal), D (strconv 'g' shortest form, which
// round-trips every float64, -0 included) or B (t or f), e.g.
// "1700000000000 I1:3;1699999999000 S5:hello;".
func appendCellText(dst []byte, c tablekit.Column) []byte {
	dst = strconv.AppendInt(dst, c.Version, 10)
	dst = append(dst, ' ')
	var typ byte
	var payload string
	v := c.Value
	switch v.Type() {
	case tablekit.TypeInteger:
		i, _ := v.Int()
		typ, payload = 'I', strconv.FormatInt(i, 10)
	case tablekit.TypeDouble:
		f, _ := v.Float()
		typ, payload = 'D', strconv.FormatFloat(f, 'g', -1, 64)
	case tablekit.TypeBoolean:
		typ, payload = 'B', "f"
		if b, _ := v.Bool(); b {
			payload = "t"
		}
	default:
		typ, payload = 'S', ""
		payload, _ = v.Str()
	}
	dst = append(dst, typ)
	dst = strconv.AppendInt(dst, int64(len(payload)), 10)
	dst = append(dst, ':')
	dst = append(dst, payload...)
	return append(dst, ';')
}

// decodeCellsText appends the cells of a String column attribute; String
// values share s's memory.
func decodeCellsText(dst []tablekit.Column, name, s string) ([]tablekit.Column, error) {
	if s == "" {
		return dst, errCorrupt
	}
	for len(s) > 0 {
		sp := strings.IndexByte(s, ' ')
		if sp <= 0 || sp+2 >= len(s) {
			return dst, errCorrupt
		}
		ver, err := strconv.ParseInt(s[:sp], 10, 64)
		if err != nil {
			return dst, errCorrupt
		}
		typ := s[sp+1]
		s = s[sp+2:]
		colon := strings.IndexByte(s, ':')
		if colon <= 0 {
			return dst, errCorrupt
		}
		n, err := strconv.Atoi(s[:colon])
		if err != nil || n < 0 || n > len(s)-colon-2 || s[colon+1+n] != ';' {
			return dst, errCorrupt
		}
		payload := s[colon+1 : colon+1+n]
		s = s[colon+2+n:]
		c := tablekit.Column{Name: name, Version: ver}
		switch typ {
		case 'S':
			c.Value = tablekit.String(payload)
		case 'I':
			i, err := strconv.ParseInt(payload, 10, 64)
			if err != nil {
				return dst, errCorrupt
			}
			c.Value = tablekit.Integer(i)
		case 'D':
			f, err := strconv.ParseFloat(payload, 64)
			if err != nil {
				return dst, errCorrupt
			}
			c.Value = tablekit.Double(f)
		case 'B':
			if payload != "t" && payload != "f" {
				return dst, errCorrupt
			}
			c.Value = tablekit.Boolean(payload == "t")
		default:
			return dst, errCorrupt
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// decodeCells appends the cells of column name held in attribute b.
func decodeCells(dst []tablekit.Column, name string, b []byte) ([]tablekit.Column, error) {
	if len(b) < 1 || b[0] != cellFormat {
		return dst, errCorrupt
	}
	b = b[1:]
	for len(b) > 0 {
		if len(b) < 9 {
			return dst, errCorrupt
		}
		c := tablekit.Column{Name: name, Version: int64(binary.BigEndian.Uint64(b))}
		typ := tablekit.Type(b[8])
		b = b[9:]
		switch typ {
		case tablekit.TypeInteger, tablekit.TypeDouble:
			if len(b) < 8 {
				return dst, errCorrupt
			}
			u := binary.BigEndian.Uint64(b)
			b = b[8:]
			if typ == tablekit.TypeInteger {
				c.Value = tablekit.Integer(int64(u))
			} else {
				c.Value = tablekit.Double(math.Float64frombits(u))
			}
		case tablekit.TypeBoolean:
			if len(b) < 1 || b[0] > 1 {
				return dst, errCorrupt
			}
			c.Value = tablekit.Boolean(b[0] == 1)
			b = b[1:]
		case tablekit.TypeString, tablekit.TypeBinary:
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) {
				return dst, errCorrupt
			}
			s := string(b[k : k+int(n)])
			b = b[k+int(n):]
			if typ == tablekit.TypeString {
				c.Value = tablekit.String(s)
			} else {
				c.Value = tablekit.BinaryString(s)
			}
		default:
			return dst, errCorrupt
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// numSize is an upper bound of the size DynamoDB counts for a Number
// attribute value (about one byte per two significant digits, plus one).
func numSize(s string) int { return (len(s)+1)/2 + 1 }

// encodedItem is a row ready to be written, with its size as DynamoDB counts it.
type encodedItem struct {
	item map[string]types.AttributeValue
	size int
}

// encodeItem builds the item of row r at (shard, sk). It returns
// ErrInvalidArgument, naming the table, the key and the limit, when the item
// would exceed DynamoDB's 400 KB.
func encodeItem(meta *tablekit.TableMeta, key tablekit.PrimaryKey, shard int, sk []byte, r *rowmodel.Row) (encodedItem, error) {
	n := 5
	item := make(map[string]types.AttributeValue, n+len(r.Cells))
	shardS := strconv.Itoa(shard)
	rev := newRevision()
	item[attrShard] = &types.AttributeValueMemberN{Value: shardS}
	item[attrKey] = &types.AttributeValueMemberB{Value: sk}
	item[attrRevision] = &types.AttributeValueMemberN{Value: rev}
	size := len(attrShard) + numSize(shardS) + len(attrKey) + len(sk) + len(attrRevision) + numSize(rev)
	if r.Marker {
		item[attrMarker] = &types.AttributeValueMemberBOOL{Value: true}
		size += len(attrMarker) + 1
	}
	var maxVs int64 = math.MinInt64
	for i := 0; i < len(r.Cells); {
		j := i
		name := r.Cells[i].Name
		binary := false
		for j < len(r.Cells) && r.Cells[j].Name == name {
			binary = binary || r.Cells[j].Value.Type() == tablekit.TypeBinary
			maxVs = max(maxVs, tablekit.Seconds(r.Cells[j].Version))
			j++
		}
		if binary {
			buf := []byte{cellFormat}
			for _, c := range r.Cells[i:j] {
				buf = appendCell(buf, c)
			}
			item[name] = &types.AttributeValueMemberB{Value: buf}
			size += len(name) + len(buf)
		} else {
			var buf []byte
			for _, c := range r.Cells[i:j] {
				buf = appendCellText(buf, c)
			}
			item[name] = &types.AttributeValueMemberS{Value: string(buf)}
			size += len(name) + len(buf)
		}
		i = j
	}
	if ttl := meta.Options.TTL; ttl != tablekit.NoExpiry && !r.Marker && len(r.Cells) > 0 {
		x := strconv.FormatInt(maxVs+ttl, 10)
		item[attrExpiry] = &types.AttributeValueMemberN{Value: x}
		size += len(attrExpiry) + numSize(x)
	}
	if size > maxItemSize {
		return encodedItem{}, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"table %q: row %v would be a DynamoDB item of about %d bytes; DynamoDB's item limit is %d bytes (400 KB)",
			meta.Name, key, size, maxItemSize)
	}
	return encodedItem{item: item, size: size}, nil
}

// sortKey returns the sort key of key, or ErrInvalidArgument when it is
// longer than DynamoDB's 1024-byte sort-key limit.
func sortKey(meta *tablekit.TableMeta, key tablekit.PrimaryKey) ([]byte, error) {
	sk := keycodec.Encode(key)
	if len(sk) > maxSortKeySize {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"table %q: key %v encodes to a %d-byte DynamoDB sort key; DynamoDB's sort-key limit is %d bytes",
			meta.Name, key, len(sk), maxSortKeySize)
	}
	return sk, nil
}

// decodeRow turns a stored item into a rowmodel.Row.
func decodeRow(item map[string]types.AttributeValue) (rowmodel.Row, error) {
	var r rowmodel.Row
	cells := make([]tablekit.Column, 0, len(item))
	for name, av := range item {
		if len(name) > 0 && name[0] == '.' {
			if name == attrMarker {
				if b, ok := av.(*types.AttributeValueMemberBOOL); ok && b.Value {
					r.Marker = true
				}
			}
			continue
		}
		var err error
		switch av := av.(type) {
		case *types.AttributeValueMemberS:
			cells, err = decodeCellsText(cells, name, av.Value)
		case *types.AttributeValueMemberB:
			cells, err = decodeCells(cells, name, av.Value)
		default:
			err = fmt.Errorf("%w (neither String nor Binary)", errCorrupt)
		}
		if err != nil {
			return r, fmt.Errorf("attribute %q: %w", name, err)
		}
	}
	rowmodel.SortCells(cells)
	r.Cells = cells
	return r, nil
}

// itemSortKey returns the sort-key bytes of an item.
func itemSortKey(item map[string]types.AttributeValue) []byte {
	if b, ok := item[attrKey].(*types.AttributeValueMemberB); ok {
		return b.Value
	}
	return nil
}

// itemRevision returns the revision of an item ("" when it has none).
func itemRevision(item map[string]types.AttributeValue) string {
	if n, ok := item[attrRevision].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

// keyAttrs returns the DynamoDB key of a row.
func keyAttrs(shard int, sk []byte) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrShard: &types.AttributeValueMemberN{Value: strconv.Itoa(shard)},
		attrKey:   &types.AttributeValueMemberB{Value: sk},
	}
}
