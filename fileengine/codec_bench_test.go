package fileengine

import (
	"math"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/rowmodel"
)

// BenchmarkDecodeRow decodes a stored row of ten cells of every type, the
// work every read does per row after pebble returns its bytes.
func BenchmarkDecodeRow(b *testing.B) {
	src := rowmodel.Row{Generation: 3}
	for i, v := range []tablekit.Value{tablekit.String("alice"), tablekit.Integer(42), tablekit.Double(math.Pi), tablekit.Boolean(true), tablekit.Binary(make([]byte, 100))} {
		for j := range 2 {
			src.Cells = append(src.Cells, tablekit.Column{Name: string(rune('a'+i)) + string(rune('0'+j)), Value: v, Version: 1700000000000 - int64(j)})
		}
	}
	s := string(appendRow(nil, &src))
	var r rowmodel.Row
	for b.Loop() {
		if err := decodeRow(&r, s); err != nil || len(r.Cells) != 10 {
			b.Fatal(err)
		}
	}
}
