package awsdynamodb

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
	"github.com/tablekit/tablekit/internal/base"
	"github.com/tablekit/tablekit/rowmodel"
)

// Attribute names the adapter reserves in every item. Each starts with a
// '.', which no portable column name can contain, so they never collide
// with a column.
const (
	attrShard    = ".s" // N, partition key: the shard number 0..N-1
	attrKey      = ".k" // B, sort key: codec.EncodeKey of the primary key
	attrRevision = ".r" // S, revision (random, changed by every write) and base version
	attrMarker   = ".m" // BOOL true: a key-only row (SPEC §7)
	attrExpiry   = ".x" // N, epoch seconds after which every cell is invisible
	attrText     = ".c" // S, every column with no Binary version
	attrBinary   = ".b" // B, every column with a Binary version
	attrGen      = ".g" // N, the options generation the row was written under
	attrUpdates  = ".u" // N, one-call updates since the item was last written whole
)

// expiryMargin (seconds) is added to the expiry attribute .x: DynamoDB's
// TTL deletes an item only a day after the last of its cells became
// invisible, so that a writer's clock running behind DynamoDB's, and the
// up to an hour it takes an UpdateTable that raises TTL to turn native TTL
// off, never cost a visible cell.
const expiryMargin = 86400

// expiryAttr is the value of .x for an item whose newest cell version is
// maxVs (seconds) under a TTL of ttl seconds.
func expiryAttr(maxVs, ttl int64) string { return strconv.FormatInt(maxVs+ttl+expiryMargin, 10) }

// DynamoDB limits (Developer Guide, "Service, account, and table quotas").
const (
	maxItemSize    = 400 * 1024
	maxSortKeySize = 1024
	maxNativeName  = 255
	minNativeName  = 3
)

// placement is how a table maps a row to its shard, recorded in the
// table's metadata item at CreateTable (metaPlacement) and never changed:
// rows stay where they were written.
type placement int

const (
	// placementFNV: FNV-1a 64 of the codec.EncodeKey of the partition-key
	// (first) column, modulo the shard count. Tables created before
	// placements were recorded (no metaPlacement) use it. FNV-1a's low
	// bits depend only on the low bits of the input's bytes, so keys whose
	// bytes repeat a pattern fill only some shards (index entry keys,
	// whose values and row keys share their last digits, fill 2 of 4).
	placementFNV placement = 0
	// placementSpread: base.Spread of the same bytes (FNV-1a 64 finished
	// with splitmix64's finalizer, reduced by its high bits), which every
	// table made now uses.
	placementSpread placement = 1

	// currentPlacement is the placement CreateTable records.
	currentPlacement = placementSpread
)

// shardOf returns the shard of a row whose partition-key (first) column is
// pk, in a table of n shards placed by p. This is part of the storage
// format: changing what a placement computes would lose every row stored
// under it.
func shardOf(pk tablekit.Value, n int, p placement) int {
	if n <= 1 {
		return 0
	}
	b := codec.EncodeKey(tablekit.PrimaryKey{{Value: pk}})
	if p == placementFNV {
		return int(base.FNV1a64(b) % uint64(n))
	}
	return base.Spread(b, n)
}

// shardOf returns the shard of the row whose partition-key value is pk.
func (ti *tableInfo) shardOf(pk tablekit.Value) int { return shardOf(pk, ti.shards, ti.placement) }

// nativeName maps a portable table name (plus the backend's prefix) and
// its incarnation to a DynamoDB table name: [a-zA-Z0-9_.-]{3,255}. The
// incarnation, when not empty, follows the name after a '.'. Portable
// names use only [A-Za-z0-9_], so a result of 3–255 bytes is that
// concatenation; shorter ones are padded with '-', longer ones cut and
// suffixed with '-' and 16 hex digits of their SHA-256. Neither '-' nor
// '.' occurs in a portable name, so the mapping is injective for a fixed
// prefix.
func nativeName(prefix, name, incarnation string) string {
	n := prefix + name
	if incarnation != "" {
		n += "." + incarnation
	}
	for len(n) < minNativeName {
		n += "-"
	}
	if len(n) > maxNativeName {
		sum := sha256.Sum256([]byte(n))
		n = n[:maxNativeName-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return n
}

// revisionRandomLen is the length of a revision's random part: 8 random
// bytes in unpadded base64url.
const revisionRandomLen = 11

// newRevision returns the revision attribute of a write: a fresh random
// part, then, when the item has text cells, a space and their base
// version in decimal. The random part makes every revision unique (an
// unconditional PutRow does not read the old one, so no counter could);
// optimistic writes compare the whole string.
func newRevision(base int64, hasBase bool) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	buf := make([]byte, revisionRandomLen, revisionRandomLen+21)
	base64.RawURLEncoding.Encode(buf, b[:])
	if hasBase {
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, base, 10)
	}
	return string(buf)
}

// itemBase returns the base version an item's revision records, if any
// (none when the item has no text cells). Every item has a String
// revision of at least revisionRandomLen characters.
func itemBase(item map[string]types.AttributeValue) (int64, bool, error) {
	rev, ok := item[attrRevision].(*types.AttributeValueMemberS)
	if !ok || len(rev.Value) < revisionRandomLen {
		return 0, false, fmt.Errorf("%w: no revision", errCorrupt)
	}
	if len(rev.Value) == revisionRandomLen {
		return 0, false, nil
	}
	s := rev.Value[revisionRandomLen:]
	if s[0] != ' ' {
		return 0, false, fmt.Errorf("%w: revision %q", errCorrupt, rev.Value)
	}
	v, err := strconv.ParseInt(s[1:], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: revision %q", errCorrupt, rev.Value)
	}
	return v, true, nil
}

// column is the span of one column's cells in a row's stored order, and
// whether they are stored in .b (some version is Binary) rather than .c.
type column struct {
	lo, hi int
	binary bool
}

// columnsOf splits cells (in stored order) into columns.
func columnsOf(cells []tablekit.Column) []column {
	var cols []column
	for i := 0; i < len(cells); {
		c := column{lo: i}
		for i < len(cells) && cells[i].Name == cells[c.lo].Name {
			c.binary = c.binary || cells[i].Value.Type() == tablekit.TypeBinary
			i++
		}
		c.hi = i
		cols = append(cols, c)
	}
	return cols
}

// baseVersion picks the version most cells of the text columns share (the
// newest of the most frequent ones), which .c then leaves out: every cell
// of a PutRow or UpdateRow without explicit versions has the write's Now.
// ok is false when there is no text cell.
func baseVersion(cells []tablekit.Column, cols []column) (base int64, ok bool) {
	n, same := 0, true
	for _, c := range cols {
		if c.binary {
			continue
		}
		for _, cell := range cells[c.lo:c.hi] {
			if n == 0 {
				base = cell.Version
			} else if cell.Version != base {
				same = false
			}
			n++
		}
	}
	if n == 0 || same {
		return base, n > 0
	}
	vs := make([]int64, 0, n)
	for _, c := range cols {
		if !c.binary {
			for _, cell := range cells[c.lo:c.hi] {
				vs = append(vs, cell.Version)
			}
		}
	}
	slices.Sort(vs)
	best := 0
	for i := 0; i < len(vs); {
		j := i
		for j < len(vs) && vs[j] == vs[i] {
			j++
		}
		if j-i >= best { // ascending: a later run as long is newer
			base, best = vs[i], j-i
		}
		i = j
	}
	return base, true
}

// storesGeneration reports whether an item written under generation gen
// of meta's table carries it in .g. A missing .g reads as 0, which is
// right for a table without incarnation (made before generations, whose
// generation starts at 0), and harmless for generation 1 of a table with
// one: its generation starts at 1, so no request can be older than the
// row. Leaving .g out there saves an attribute on every item of a table
// whose options never changed (about 5% of a 100-row range read).
func storesGeneration(meta *tablekit.TableMeta, gen int64) bool {
	return gen != 0 && (gen != 1 || meta.Incarnation == "")
}

// numSize is an upper bound of the size DynamoDB counts for a Number
// attribute value (about one byte per two significant digits, plus one).
func numSize(s string) int { return (len(s)+1)/2 + 1 }

// encodedItem is a row ready to be written, with its size as DynamoDB counts it.
type encodedItem struct {
	item map[string]types.AttributeValue
	size int
}

// encodeItem builds the item of row r at (shard, sk), stamped with
// r.Generation (see storesGeneration). It returns ErrInvalidArgument, naming the key (cut short)
// and the limit, when the item would exceed DynamoDB's 400 KB.
//
// stamp, when not empty, is the write's .w (feed.go).
func encodeItem(meta *tablekit.TableMeta, key tablekit.PrimaryKey, shard int, sk []byte, r *rowmodel.Row, stamp string) (encodedItem, error) {
	cols := columnsOf(r.Cells)
	item := make(map[string]types.AttributeValue, 8)
	shardS := strconv.Itoa(shard)
	base, hasBase := baseVersion(r.Cells, cols)
	rev := newRevision(base, hasBase)
	item[attrShard] = &types.AttributeValueMemberN{Value: shardS}
	item[attrKey] = &types.AttributeValueMemberB{Value: sk}
	item[attrRevision] = &types.AttributeValueMemberS{Value: rev}
	size := len(attrShard) + numSize(shardS) + len(attrKey) + len(sk) + len(attrRevision) + len(rev)
	if stamp != "" {
		item[attrWrite] = &types.AttributeValueMemberS{Value: stamp}
		size += len(attrWrite) + len(stamp)
	}
	if r.Marker {
		item[attrMarker] = &types.AttributeValueMemberBOOL{Value: true}
		size += len(attrMarker) + 1
	}
	if storesGeneration(meta, r.Generation) {
		g := strconv.FormatInt(r.Generation, 10)
		item[attrGen] = &types.AttributeValueMemberN{Value: g}
		size += len(attrGen) + numSize(g)
	}
	textCap := 0
	for _, c := range cols {
		if !c.binary {
			textCap += textSize(r.Cells[c.lo:c.hi])
		}
	}
	text := make([]byte, 0, textCap)
	var bin []byte
	var maxVs int64 = math.MinInt64
	for _, c := range cols {
		cells := r.Cells[c.lo:c.hi]
		for _, cell := range cells {
			maxVs = max(maxVs, rowmodel.Seconds(cell.Version))
		}
		if c.binary {
			if bin == nil {
				bin = []byte{binaryFormat}
			}
			bin = appendBinaryColumn(bin, cells)
		} else {
			text = appendTextColumn(text, cells, base)
		}
	}
	if len(text) > 0 {
		item[attrText] = &types.AttributeValueMemberS{Value: string(text)}
		size += len(attrText) + len(text)
	}
	if bin != nil {
		item[attrBinary] = &types.AttributeValueMemberB{Value: bin}
		size += len(attrBinary) + len(bin)
	}
	if ttl := meta.Options.TTLSeconds(); meta.Options.TTL != tablekit.NoExpiry && !r.Marker && len(r.Cells) > 0 {
		x := expiryAttr(maxVs, ttl)
		item[attrExpiry] = &types.AttributeValueMemberN{Value: x}
		size += len(attrExpiry) + numSize(x)
	}
	if size > maxItemSize {
		return encodedItem{}, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"row %v would be a DynamoDB item of about %d bytes; DynamoDB's item limit is %d bytes (400 KB)",
			key, size, maxItemSize)
	}
	return encodedItem{item: item, size: size}, nil
}

// sortKey returns the sort key of key, or ErrInvalidArgument when it is
// longer than DynamoDB's 1024-byte sort-key limit.
func sortKey(key tablekit.PrimaryKey) ([]byte, error) {
	sk := codec.EncodeKey(key)
	if len(sk) > maxSortKeySize {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"key %v encodes to a %d-byte DynamoDB sort key; DynamoDB's sort-key limit is %d bytes",
			key, len(sk), maxSortKeySize)
	}
	return sk, nil
}

// decodeRow turns a stored item into a rowmodel.Row.
func decodeRow(item map[string]types.AttributeValue) (rowmodel.Row, error) {
	return appendRow(nil, item)
}

// appendRow decodes a stored item, appending its cells to dst: the
// returned row's Cells is dst's extension, in stored order.
func appendRow(dst []tablekit.Column, item map[string]types.AttributeValue) (rowmodel.Row, error) {
	var r rowmodel.Row
	base, hasBase, err := itemBase(item)
	if err != nil {
		return r, err
	}
	start := len(dst)
	parts := 0 // attributes holding cells; each is in stored order itself
	var overlays []tablekit.Column
	for name, av := range item {
		switch name {
		case attrMarker:
			if b, ok := av.(*types.AttributeValueMemberBOOL); ok && b.Value {
				r.Marker = true
			}
			continue
		case attrText:
			s, ok := av.(*types.AttributeValueMemberS)
			if !ok {
				return r, fmt.Errorf("attribute %q: %w (not a String)", name, errCorrupt)
			}
			dst, err = decodeText(dst, s.Value, base, hasBase)
		case attrBinary:
			b, ok := av.(*types.AttributeValueMemberB)
			if !ok {
				return r, fmt.Errorf("attribute %q: %w (not a Binary)", name, errCorrupt)
			}
			dst, err = decodeBinary(dst, b.Value)
		case attrGen:
			n, ok := av.(*types.AttributeValueMemberN)
			if !ok {
				return r, fmt.Errorf("attribute %q: %w (not a Number)", name, errCorrupt)
			}
			if r.Generation, err = strconv.ParseInt(n.Value, 10, 64); err != nil {
				return r, fmt.Errorf("attribute %q: %w (generation %q)", name, errCorrupt, n.Value)
			}
			continue
		case attrShard, attrKey, attrRevision, attrExpiry, attrUpdates, attrWrite:
			continue
		default:
			// An overlay cell (fastwrite.go), or not an attribute of the layout.
			var c tablekit.Column
			if c, err = decodeOverlay(name, av); err != nil {
				return r, fmt.Errorf("attribute %q: %w (not an attribute of the layout)", name, errCorrupt)
			}
			overlays = append(overlays, c)
			continue
		}
		if err != nil {
			return r, fmt.Errorf("attribute %q: %w", name, err)
		}
		parts++
	}
	r.Cells = dst[start:]
	if parts > 1 {
		rowmodel.SortCells(r.Cells)
		for i := 1; i < len(r.Cells); i++ {
			if a, b := &r.Cells[i-1], &r.Cells[i]; a.Name == b.Name && a.Version == b.Version {
				return r, fmt.Errorf("%w: column %q has version %d twice", errCorrupt, a.Name, a.Version)
			}
		}
	}
	if overlays != nil {
		r.Cells = mergeOverlays(r.Cells, overlays)
	}
	return r, nil
}

// itemSortKey returns the sort-key bytes of an item.
func itemSortKey(item map[string]types.AttributeValue) []byte {
	if b, ok := item[attrKey].(*types.AttributeValueMemberB); ok {
		return b.Value
	}
	return nil
}

// itemRevision returns the revision attribute of an item, or nil.
func itemRevision(item map[string]types.AttributeValue) types.AttributeValue {
	if rev, ok := item[attrRevision].(*types.AttributeValueMemberS); ok {
		return rev
	}
	return nil
}

// keyAttrs returns the DynamoDB key of a row.
func keyAttrs(shard int, sk []byte) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrShard: &types.AttributeValueMemberN{Value: strconv.Itoa(shard)},
		attrKey:   &types.AttributeValueMemberB{Value: sk},
	}
}
