package awsdynamodb

import (
	"math"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// The storage format is what the package doc shows.
func TestDocumentedLayout(t *testing.T) {
	if got := shardOf(tablekit.String("c42"), 8); got != 3 {
		t.Errorf("shard of \"c42\" with N=8 = %d, the package doc says 3", got)
	}
	text := appendCellText(nil, tablekit.Column{Name: "score", Value: tablekit.Integer(3), Version: 1700000000000})
	text = appendCellText(text, tablekit.Column{Name: "score", Value: tablekit.String("héllo"), Version: 1699999999000})
	if want := "1700000000000 I1:3;1699999999000 S6:héllo;"; string(text) != want {
		t.Errorf("String attribute = %q, the package doc says %q", text, want)
	}
	cell := appendCell([]byte{cellFormat}, tablekit.Column{Name: "blob", Value: tablekit.Binary([]byte{0xab}), Version: 1700000000000})
	want := []byte{1, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 5, 1, 0xab}
	if string(cell) != string(want) {
		t.Errorf("Binary attribute = % x, the package doc says % x", cell, want)
	}
}

func TestNativeName(t *testing.T) {
	long := strings.Repeat("a", 255)
	cases := map[[2]string]string{
		{"", "t"}:       "t--",
		{"", "ab"}:      "ab-",
		{"", "abc"}:     "abc",
		{"app.", "t"}:   "app.t",
		{"", long}:      long,
		{"p", long[1:]}: "p" + long[1:],
	}
	for in, want := range cases {
		if got := nativeName(in[0], in[1]); got != want {
			t.Errorf("nativeName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	a, b := nativeName("x_", long), nativeName("x_", long[:254]+"b")
	if len(a) != 255 || len(b) != 255 || a == b {
		t.Errorf("long names: %q and %q (len %d, %d) must be distinct and 255 bytes", a, b, len(a), len(b))
	}
}

func TestCellsRoundTrip(t *testing.T) {
	cols := []tablekit.Column{
		{Name: "c", Value: tablekit.Double(1e300), Version: 9},
		{Name: "c", Value: tablekit.Double(math.Copysign(0, -1)), Version: 8},
		{Name: "c", Value: tablekit.Integer(math.MinInt64), Version: 7},
		{Name: "c", Value: tablekit.String(""), Version: 6},
		{Name: "c", Value: tablekit.Binary([]byte{0, 1}), Version: 5},
		{Name: "c", Value: tablekit.Boolean(true), Version: 4},
		{Name: "c", Value: tablekit.Boolean(false), Version: 0},
	}
	buf := []byte{cellFormat}
	var text []byte
	for _, c := range cols {
		buf = appendCell(buf, c)
		if c.Value.Type() != tablekit.TypeBinary {
			text = appendCellText(text, c)
		}
	}
	got, err := decodeCells(nil, "c", buf)
	if err != nil {
		t.Fatal(err)
	}
	gotText, err := decodeCellsText(nil, "c", string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range [][]tablekit.Column{got, gotText} {
		j := 0
		for _, c := range cols {
			if len(g) == len(cols)-1 && c.Value.Type() == tablekit.TypeBinary {
				continue
			}
			if j >= len(g) || g[j].Version != c.Version || !g[j].Value.Equal(c.Value) {
				t.Errorf("cells %+v, want %+v", g, cols)
				break
			}
			j++
		}
		if j != len(g) {
			t.Errorf("%d cells decoded, %d matched", len(g), j)
		}
	}
}

func TestItemTooLarge(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}, Options: tablekit.TableOptions{TTL: -1, MaxVersions: 1}}
	key := tablekit.Key("k", tablekit.String("x"))
	r := rowmodel.Row{Cells: []tablekit.Column{{Name: "v", Value: tablekit.Binary(make([]byte, maxItemSize-40)), Version: 1}}}
	enc, err := encodeItem(meta, key, 0, []byte("x\x00\x01"), &r)
	if err != nil {
		t.Fatalf("an item of about %d bytes: %v", enc.size, err)
	}
	r.Cells[0].Value = tablekit.Binary(make([]byte, maxItemSize))
	if _, err := encodeItem(meta, key, 0, []byte("x\x00\x01"), &r); err == nil {
		t.Errorf("an item over 400 KB was accepted")
	}
}

// FuzzDecodeCells: bytes read from DynamoDB never panic the decoder, and
// what decodes re-encodes to the same bytes.
func FuzzDecodeCells(f *testing.F) {
	f.Add([]byte{cellFormat})
	f.Add(appendCell([]byte{cellFormat}, tablekit.Column{Value: tablekit.String("héllo"), Version: 1}))
	f.Add(appendCell([]byte{cellFormat}, tablekit.Column{Value: tablekit.Integer(-1), Version: -1}))
	f.Add([]byte{cellFormat, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		cells, err := decodeCells(nil, "c", b)
		if err != nil {
			return
		}
		re := []byte{cellFormat}
		for _, c := range cells {
			re = appendCell(re, c)
		}
		if string(re) != string(b) {
			// Non-canonical uvarints decode but re-encode shorter; only
			// the values must agree.
			again, err := decodeCells(nil, "c", re)
			if err != nil || len(again) != len(cells) {
				t.Fatalf("re-encoding of % x does not decode: %v", b, err)
			}
			for i := range cells {
				if !again[i].Value.Equal(cells[i].Value) || again[i].Version != cells[i].Version {
					t.Fatalf("cell %d changed on re-encoding", i)
				}
			}
		}
	})
}

// FuzzDecodeCellsText: String attributes read from DynamoDB never panic the
// decoder, and what decodes re-encodes to the same string.
func FuzzDecodeCellsText(f *testing.F) {
	f.Add("1700000000000 I1:3;1699999999000 S6:héllo;")
	f.Add("1 D6:1e+300;2 D2:-0;3 Bt:;4 B1:f;")
	f.Add("5 S3:a;b;")
	f.Fuzz(func(t *testing.T, s string) {
		cells, err := decodeCellsText(nil, "c", s)
		if err != nil {
			return
		}
		var re []byte
		for _, c := range cells {
			re = appendCellText(re, c)
		}
		again, err := decodeCellsText(nil, "c", string(re))
		if err != nil || len(again) != len(cells) {
			t.Fatalf("re-encoding of %q does not decode: %v", s, err)
		}
		for i := range cells {
			if !again[i].Value.Equal(cells[i].Value) || again[i].Version != cells[i].Version {
				t.Fatalf("cell %d changed on re-encoding", i)
			}
		}
	})
}
