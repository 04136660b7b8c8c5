package awsdynamodb

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

var docMeta = &tablekit.TableMeta{
	Name:        "orders",
	Incarnation: "5f0c1d2e3a4b6978",
	Generation:  1,
	Key:         tablekit.KeySchema{{Name: "customer", Type: tablekit.TypeString}, {Name: "id", Type: tablekit.TypeInteger}},
	Options:     tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 2, MaxVersionOffset: 86400 * time.Second},
}

// The storage format is what the package doc shows.
func TestDocumentedLayout(t *testing.T) {
	for _, p := range []placement{placementSpread, placementFNV} {
		if got := shardOf(tablekit.String("c42"), 8, p); got != 3 {
			t.Errorf("shard of \"c42\" with N=8, placement %d = %d, the package doc says 3", p, got)
		}
	}
	key := tablekit.Key("customer", tablekit.String("c42")).Add("id", tablekit.Integer(7))
	r := rowmodel.Row{Generation: 1, Cells: []tablekit.Column{
		{Name: "blob", Value: tablekit.Binary([]byte{0xab}), Version: 1700000000000},
		{Name: "note", Value: tablekit.String("hi"), Version: 1700000000000},
		{Name: "score", Value: tablekit.Integer(3), Version: 1700000000000},
		{Name: "score", Value: tablekit.String("héllo"), Version: 1699999999000},
	}}
	sk, err := sortKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if want := "c42\x00\x01=0000000000000000007"; string(sk) != want {
		t.Errorf(".k = %q, the package doc says %q", sk, want)
	}
	enc, err := encodeItem(docMeta, key, 3, sk, &r, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(enc.item) != 5 {
		t.Errorf("item has %d attributes, the package doc shows 5: %v", len(enc.item), enc.item)
	}
	// Generation 1 of a table with an incarnation goes without saying; a
	// later one, or any of a table without incarnation, is stored.
	r.Generation = 2
	if enc, err := encodeItem(docMeta, key, 3, sk, &r, ""); err != nil || enc.item[attrGen].(*types.AttributeValueMemberN).Value != "2" {
		t.Errorf("generation 2: .g = %v (%v), want 2", enc.item[attrGen], err)
	}
	legacy := *docMeta
	legacy.Incarnation, r.Generation = "", 1
	if enc, err := encodeItem(&legacy, key, 3, sk, &r, ""); err != nil || enc.item[attrGen].(*types.AttributeValueMemberN).Value != "1" {
		t.Errorf("generation 1 without incarnation: .g = %v (%v), want 1", enc.item[attrGen], err)
	}
	if s := enc.item[attrShard].(*types.AttributeValueMemberN).Value; s != "3" {
		t.Errorf(".s = %s", s)
	}
	rev := enc.item[attrRevision].(*types.AttributeValueMemberS).Value
	if len(rev) != 11+1+13 || rev[11:] != " 1700000000000" {
		t.Errorf(".r = %q, the package doc says 11 random characters, a space and the base version", rev)
	}
	if got, want := enc.item[attrText].(*types.AttributeValueMemberS).Value, "note~2Shiscore~1I3~6@1699999999000Shéllo"; got != want {
		t.Errorf(".c = %q, the package doc says %q", got, want)
	}
	want := []byte{2, 4, 'b', 'l', 'o', 'b', 1, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 5, 1, 0xab}
	if got := enc.item[attrBinary].(*types.AttributeValueMemberB).Value; !bytes.Equal(got, want) {
		t.Errorf(".b = % x, the package doc says % x", got, want)
	}
	if rev := newRevision(0, false); len(rev) != 11 {
		t.Errorf("revision without a base version %q, want 11 characters", rev)
	}
}

func TestNativeName(t *testing.T) {
	long := strings.Repeat("a", 255)
	const inc = "0123456789abcdef"
	cases := map[[3]string]string{
		{"", "t", ""}:       "t--",
		{"", "ab", ""}:      "ab-",
		{"", "abc", ""}:     "abc",
		{"app.", "t", ""}:   "app.t",
		{"", long, ""}:      long,
		{"p", long[1:], ""}: "p" + long[1:],
		{"", "t", inc}:      "t." + inc,
		{"app.", "t", inc}:  "app.t." + inc,
	}
	for in, want := range cases {
		if got := nativeName(in[0], in[1], in[2]); got != want {
			t.Errorf("nativeName(%q, %q, %q) = %q, want %q", in[0], in[1], in[2], got, want)
		}
	}
	a, b := nativeName("x_", long, ""), nativeName("x_", long[:254]+"b", "")
	if len(a) != 255 || len(b) != 255 || a == b {
		t.Errorf("long names: %q and %q (len %d, %d) must be distinct and 255 bytes", a, b, len(a), len(b))
	}
	// Two incarnations of one long name are two DynamoDB tables.
	c, d := nativeName("x_", long[:240], inc), nativeName("x_", long[:240], "fedcba9876543210")
	if len(c) != 255 || len(d) != 255 || c == d {
		t.Errorf("long names with incarnations: %q and %q (len %d, %d) must be distinct and 255 bytes", c, d, len(c), len(d))
	}
}

func checkCells(t *testing.T, got, want []tablekit.Column) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("cells %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Version != w.Version || !g.Value.Equal(w.Value) || g.Value.Type() != w.Value.Type() {
			t.Errorf("cell %d = %+v, want %+v", i, g, w)
		}
	}
}

// encodeItem and decodeRow round-trip every kind of row, and the base
// version is the most common version of the text cells (the newest on a tie).
func TestItemRoundTrip(t *testing.T) {
	key := tablekit.Key("customer", tablekit.String("x")).Add("id", tablekit.Integer(1))
	rows := []struct {
		row  rowmodel.Row
		base string // the revision's base version, "" for none
	}{
		{rowmodel.Row{Marker: true}, ""},
		{rowmodel.Row{Marker: true, Generation: 3}, ""},
		{rowmodel.Row{Marker: true, Generation: 1}, ""}, // reads back as 0: see storesGeneration
		{rowmodel.Row{Cells: []tablekit.Column{{Name: "b", Value: tablekit.Binary([]byte{0}), Version: 5}}}, ""},
		{rowmodel.Row{Cells: []tablekit.Column{
			{Name: "a", Value: tablekit.String(""), Version: 7},
			{Name: "a", Value: tablekit.String("~1@2S"), Version: 6},
			{Name: "a", Value: tablekit.Integer(-12), Version: -3},
			{Name: "a_", Value: tablekit.Double(math.Inf(1)), Version: 7},
			{Name: "b", Value: tablekit.Binary(nil), Version: 9},
			{Name: "b", Value: tablekit.Boolean(true), Version: 6},
			{Name: "c", Value: tablekit.Double(0.5), Version: 6},
			{Name: "c0", Value: tablekit.Binary([]byte("\x00\xff")), Version: 1},
			{Name: "d", Value: tablekit.Boolean(false), Version: 7},
			{Name: "e", Value: tablekit.String("12"), Version: 7},
			{Name: "e", Value: tablekit.String("3"), Version: 6},
		}}, "7"},
		{rowmodel.Row{Cells: []tablekit.Column{
			{Name: "a", Value: tablekit.Integer(1), Version: 2},
			{Name: "a", Value: tablekit.Integer(2), Version: 1},
			{Name: "b", Value: tablekit.String("é"), Version: 1},
		}}, "1"},
		{rowmodel.Row{Cells: []tablekit.Column{
			{Name: "a", Value: tablekit.Integer(1), Version: 2},
			{Name: "b", Value: tablekit.String("é"), Version: 1},
		}, Marker: true, Generation: 1 << 40}, "2"},
	}
	for _, tc := range rows {
		enc, err := encodeItem(docMeta, key, 0, []byte("x\x00\x01"), &tc.row, "")
		if err != nil {
			t.Fatal(err)
		}
		rev := enc.item[attrRevision].(*types.AttributeValueMemberS).Value
		if got := strings.TrimPrefix(rev[min(len(rev), 11):], " "); got != tc.base {
			t.Errorf("revision %q: base version %q, want %q", rev, got, tc.base)
		}
		got, err := decodeRow(enc.item)
		if err != nil {
			t.Fatalf("%+v: %v", enc.item, err)
		}
		if got.Marker != tc.row.Marker {
			t.Errorf("marker %v, want %v", got.Marker, tc.row.Marker)
		}
		wantGen := tc.row.Generation
		if wantGen == 1 {
			wantGen = 0
		}
		if got.Generation != wantGen {
			t.Errorf("generation %d read back as %d, want %d", tc.row.Generation, got.Generation, wantGen)
		}
		if _, ok := enc.item[attrGen]; ok != (wantGen != 0) {
			t.Errorf("generation %d: .g present = %v", tc.row.Generation, ok)
		}
		checkCells(t, got.Cells, tc.row.Cells)
	}
}

// Malformed column data is an error, never a panic or a misordered row.
func TestCorruptItems(t *testing.T) {
	rev := &types.AttributeValueMemberS{Value: "AAAAAAAAAAA 5"}
	text := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	binaryA := appendBinaryColumn([]byte{binaryFormat}, []tablekit.Column{{Name: "a", Value: tablekit.Binary(nil), Version: 5}})
	for _, tc := range []struct {
		why  string
		item map[string]types.AttributeValue
	}{
		{"names out of order", map[string]types.AttributeValue{attrText: text("b~1Sxa~1Sy"), attrRevision: rev}},
		{"a name twice", map[string]types.AttributeValue{attrText: text("a~1Sxa~1Sy"), attrRevision: rev}},
		{"versions ascending", map[string]types.AttributeValue{attrText: text("a~1@1Sx~1@2Sy"), attrRevision: rev}},
		{"no base version", map[string]types.AttributeValue{attrText: text("a~1Sx")}},
		{"short payload", map[string]types.AttributeValue{attrText: text("a~2Sx"), attrRevision: rev}},
		{"bad name", map[string]types.AttributeValue{attrText: text("a-b~1Sx"), attrRevision: rev}},
		{"bad type", map[string]types.AttributeValue{attrText: text("a~1Xx"), attrRevision: rev}},
		{"empty", map[string]types.AttributeValue{attrText: text(""), attrRevision: rev}},
		{"wrong kind", map[string]types.AttributeValue{attrText: &types.AttributeValueMemberB{Value: []byte("a~1Sx")}, attrRevision: rev}},
		{"bad revision", map[string]types.AttributeValue{attrRevision: text("AAAAAAAAAAAx5")}},
		{"no revision", map[string]types.AttributeValue{attrMarker: &types.AttributeValueMemberBOOL{Value: true}}},
		{"a Number revision", map[string]types.AttributeValue{attrRevision: &types.AttributeValueMemberN{Value: "3879871239910284411"}}},
		{"a column as an attribute", map[string]types.AttributeValue{"score": text("1700000000000 I1:3;"), attrRevision: rev}},
		{"a String generation", map[string]types.AttributeValue{attrGen: text("1"), attrRevision: rev}},
		{"a fractional generation", map[string]types.AttributeValue{attrGen: &types.AttributeValueMemberN{Value: "1.5"}, attrRevision: rev}},
		{"a cell in both", map[string]types.AttributeValue{attrText: text("a~1Sx"), attrBinary: &types.AttributeValueMemberB{Value: binaryA}, attrRevision: rev}},
	} {
		if r, err := decodeRow(tc.item); err == nil {
			t.Errorf("%s: %v decoded as %+v", tc.why, tc.item, r)
		}
	}
	r, err := decodeRow(map[string]types.AttributeValue{attrText: text("a~1Sx"), attrRevision: rev})
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, r.Cells, []tablekit.Column{{Name: "a", Value: tablekit.String("x"), Version: 5}})
}

func TestItemTooLarge(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}, Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1}}
	key := tablekit.Key("k", tablekit.String("x"))
	r := rowmodel.Row{Cells: []tablekit.Column{{Name: "v", Value: tablekit.Binary(make([]byte, maxItemSize-40)), Version: 1}}}
	enc, err := encodeItem(meta, key, 0, []byte("x\x00\x01"), &r, "")
	if err != nil {
		t.Fatalf("an item of about %d bytes: %v", enc.size, err)
	}
	r.Cells[0].Value = tablekit.Binary(make([]byte, maxItemSize))
	if _, err := encodeItem(meta, key, 0, []byte("x\x00\x01"), &r, ""); err == nil {
		t.Errorf("an item over 400 KB was accepted")
	}
}

func sameCells(t *testing.T, what string, a, b []tablekit.Column) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d cells, then %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].Value.Equal(b[i].Value) || a[i].Version != b[i].Version {
			t.Fatalf("%s: cell %d changed: %+v, then %+v", what, i, a[i], b[i])
		}
	}
}

// textColumns re-encodes decoded cells as a .c attribute.
func textColumns(cells []tablekit.Column, base int64) string {
	var b []byte
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j].Name == cells[i].Name {
			j++
		}
		b = appendTextColumn(b, cells[i:j], base)
		i = j
	}
	return string(b)
}

// FuzzDecodeText: .c attributes read from DynamoDB never panic the
// decoder, and what decodes re-encodes to the same cells.
func FuzzDecodeText(f *testing.F) {
	f.Add("note~2Shiscore~1I3~6@1699999999000Shéllo", int64(1700000000000), true)
	f.Add("a~6@1D1e+300~2@0D-0~1@-3Bt~1@-4Bfb~0S", int64(0), false)
	f.Add("x~0S~0@-1S", int64(5), true)
	f.Fuzz(func(t *testing.T, s string, base int64, hasBase bool) {
		cells, err := decodeText(nil, s, base, hasBase)
		if err != nil {
			return
		}
		again, err := decodeText(nil, textColumns(cells, base), base, true)
		if err != nil {
			t.Fatalf("re-encoding of %q does not decode: %v", s, err)
		}
		sameCells(t, "re-encoding", cells, again)
	})
}

// FuzzDecodeBinary: .b attributes never panic the decoder, and what
// decodes re-encodes to the same bytes.
func FuzzDecodeBinary(f *testing.F) {
	f.Add([]byte{2, 4, 'b', 'l', 'o', 'b', 1, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 5, 1, 0xab})
	f.Add(appendBinaryColumn(appendBinaryColumn([]byte{binaryFormat},
		[]tablekit.Column{{Name: "a", Value: tablekit.Integer(-1), Version: 2}, {Name: "a", Value: tablekit.String("é"), Version: -1}}),
		[]tablekit.Column{{Name: "b", Value: tablekit.Double(-0.5), Version: 0}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		cells, err := decodeBinary(nil, b)
		if err != nil {
			return
		}
		re := []byte{binaryFormat}
		for i := 0; i < len(cells); {
			j := i
			for j < len(cells) && cells[j].Name == cells[i].Name {
				j++
			}
			re = appendBinaryColumn(re, cells[i:j])
			i = j
		}
		again, err := decodeBinary(nil, re)
		if err != nil {
			t.Fatalf("re-encoding of % x does not decode: %v", b, err)
		}
		sameCells(t, "re-encoding", cells, again)
	})
}
