package fileengine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// TestVarint checks varint (one load for up to 8 bytes) against
// encoding/binary on values of every length, with and without bytes after
// them, and on input that holds no varint.
func TestVarint(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	vals := []int64{0, 1, -1, 63, -64, 64, 1 << 20, 1700000000000, -1700000000000,
		math.MaxInt64, math.MinInt64, 1<<55 - 1, 1 << 55, -(1 << 55)}
	for range 20000 {
		vals = append(vals, int64(r.Uint64())>>r.IntN(64))
	}
	for _, v := range vals {
		enc := binary.AppendVarint(nil, v)
		for pad := range 10 {
			b := append(enc[:len(enc):len(enc)], make([]byte, pad)...)
			if x, k := varint(string(b)); x != v || k != len(enc) {
				t.Fatalf("%d followed by %d bytes: got %d (%d bytes), want %d (%d bytes)", v, pad, x, k, v, len(enc))
			}
		}
	}
	for _, bad := range []string{"", "\x80", "\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff",
		"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02"} {
		if _, k := varint(bad); k > 0 {
			t.Errorf("varint(%q) read %d bytes, want none", bad, k)
		}
	}
}

// decodeRows are stored rows of every shape the decoder reads by its fast
// paths (short names, short String and Binary values, versions of up to 8
// bytes) and by its general ones (long names and values, every type,
// versions of 9 and 10 bytes, several versions of a column, a marker with
// no cells).
func decodeRows() []rowmodel.Row {
	long := strings.Repeat("x", 300)
	return []rowmodel.Row{
		{Generation: 1, Cells: []tablekit.Column{
			{Name: "a", Value: tablekit.String("alice"), Version: 1700000000000},
			{Name: "b", Value: tablekit.Binary([]byte{0, 1, 2}), Version: 1},
			{Name: "c", Value: tablekit.Integer(-5), Version: 0},
			{Name: "d", Value: tablekit.Double(math.Pi), Version: -1},
			{Name: "e", Value: tablekit.Boolean(true), Version: math.MaxInt64},
			{Name: "f", Value: tablekit.String(""), Version: math.MinInt64},
			{Name: "f", Value: tablekit.String(long), Version: 1 << 56},
			{Name: long, Value: tablekit.Binary([]byte(long)), Version: 1<<55 - 1},
		}},
		{Marker: true, Generation: 1 << 40},
		{Generation: 2, Cells: []tablekit.Column{
			{Name: "a", Value: tablekit.Binary(make([]byte, 127)), Version: 7},
			{Name: "b", Value: tablekit.Binary(make([]byte, 128)), Version: 8},
		}},
	}
}

// TestAppendCells checks that decodeRow, and appendCells as range reads
// use it (names interned, one row after another into one block), return
// the cells that were encoded.
func TestAppendCells(t *testing.T) {
	nm := names{m: map[string]string{}}
	var block []tablekit.Column
	for round := range 2 {
		for i, src := range decodeRows() {
			s := string(appendRow(nil, &src))
			var r rowmodel.Row
			if err := decodeRow(&r, s); err != nil || r.Marker != src.Marker || r.Generation != src.Generation || !slices.Equal(r.Cells, src.Cells) {
				t.Fatalf("row %d: decodeRow: %+v, %v; want %+v", i, r, err, src)
			}
			marker, gen, n, d, err := rowHeader(s)
			if err != nil || marker != src.Marker || gen != src.Generation || n != len(src.Cells) {
				t.Fatalf("row %d: rowHeader: %v %d %d %v", i, marker, gen, n, err)
			}
			c0 := len(block)
			if block, err = appendCells(block, &d, n, &nm); err != nil || !slices.Equal(block[c0:], src.Cells) {
				t.Fatalf("round %d, row %d: appendCells: %+v, %v; want %+v", round, i, block[c0:], err, src.Cells)
			}
		}
	}
}

// TestDecodeRowCorrupt checks that every truncation of a stored row, a
// row with bytes after it, and every change of one of its bytes either
// decodes or fails with ErrCorrupt, by decodeRow and by appendCells alike,
// and never panics.
func TestDecodeRowCorrupt(t *testing.T) {
	for _, src := range decodeRows() {
		enc := appendRow(nil, &src)
		check := func(what string, b []byte, mustFail bool) {
			t.Helper()
			var r rowmodel.Row
			err := decodeRow(&r, string(b))
			if err != nil && !errors.Is(err, ErrCorrupt) || mustFail && err == nil {
				t.Fatalf("%s: decodeRow: %v", what, err)
			}
			_, _, n, d, err := rowHeader(string(b))
			if err == nil {
				nm := names{m: map[string]string{}}
				_, err = appendCells(nil, &d, n, &nm)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) || mustFail && err == nil {
				t.Fatalf("%s: appendCells: %v", what, err)
			}
		}
		for i := range enc {
			check(fmt.Sprintf("first %d of %d bytes", i, len(enc)), enc[:i], true)
		}
		check("a byte after the row", append(slices.Clone(enc), 0), true)
		for i := range enc {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				b := slices.Clone(enc)
				b[i] ^= x
				check(fmt.Sprintf("byte %d ^ %#x", i, x), b, false)
			}
		}
	}
}
