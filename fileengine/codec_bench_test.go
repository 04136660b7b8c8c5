package fileengine

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
	"github.com/tablekit/tablekit/rowmodel"
)

// BenchmarkDecodeRow decodes a stored row of ten cells of every type, the
// work every read does per row after pebble returns its bytes.
func BenchmarkDecodeRow(b *testing.B) {
	s := benchRow()
	var r rowmodel.Row
	for b.Loop() {
		if err := decodeRow(&r, s); err != nil || len(r.Cells) != 10 {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRowVsBefore runs decodeRow (values decoded by
// codec.DecodeValue) and decodeRowBefore (the decoder as it was before
// the shared one, kept here as the reference) interleaved, in blocks of
// 200 rows in alternating order, and reports each side's median block
// time per row and their ratio (shared/before).
func BenchmarkDecodeRowVsBefore(b *testing.B) {
	s := benchRow()
	var r rowmodel.Row
	const block = 200
	run := func(f func(*rowmodel.Row, string) error) time.Duration {
		t0 := time.Now()
		for range block {
			if err := f(&r, s); err != nil || len(r.Cells) != 10 {
				panic(fmt.Sprint(err))
			}
		}
		return time.Since(t0)
	}
	var now, before []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			now = append(now, run(decodeRow))
			before = append(before, run(decodeRowBefore))
		} else {
			before = append(before, run(decodeRowBefore))
			now = append(now, run(decodeRow))
		}
		i++
	}
	mn, mb := benchstat.Median(now), benchstat.Median(before)
	b.ReportMetric(float64(mn.Nanoseconds())/block, "shared-ns/row")
	b.ReportMetric(float64(mb.Nanoseconds())/block, "before-ns/row")
	b.ReportMetric(float64(mn)/float64(mb), "shared/before")
}

func benchRow() string {
	src := rowmodel.Row{Generation: 3}
	for i, v := range []tablekit.Value{tablekit.String("alice"), tablekit.Integer(42), tablekit.Double(math.Pi), tablekit.Boolean(true), tablekit.Binary(make([]byte, 100))} {
		for j := range 2 {
			src.Cells = append(src.Cells, tablekit.Column{Name: string(rune('a'+i)) + string(rune('0'+j)), Value: v, Version: 1700000000000 - int64(j)})
		}
	}
	return string(appendRow(nil, &src))
}

// decodeRowBefore is decodeRow as it was before values were decoded by
// codec.DecodeValue (commit ca6e05e), the reference of
// BenchmarkDecodeRowVsBefore.
func decodeRowBefore(r *rowmodel.Row, s string) error {
	if len(s) < 2 {
		return fmt.Errorf("%w: %v", ErrCorrupt, errShort)
	}
	if s[0] != rowFormat {
		return fmt.Errorf("%w: row of unknown format %d", ErrCorrupt, s[0])
	}
	if s[1]&^1 != 0 {
		return fmt.Errorf("%w: row flags %#x", ErrCorrupt, s[1])
	}
	r.Marker = s[1]&1 != 0
	d := decoder{s: s[2:]}
	gen := d.uvarint()
	n := d.uvarint()
	if d.err != nil || gen > math.MaxInt64 || n > uint64(len(d.s)) {
		return fmt.Errorf("%w: row header", ErrCorrupt)
	}
	r.Generation = int64(gen)
	cells := r.Cells[:0]
	if cap(cells) < int(n) {
		cells = make([]tablekit.Column, 0, n)
	}
	for range n {
		var c tablekit.Column
		c.Name = d.str()
		t := tablekit.Type(d.byteBefore())
		switch t {
		case tablekit.TypeString:
			c.Value = tablekit.String(d.str())
		case tablekit.TypeBinary:
			c.Value = tablekit.BinaryString(d.str())
		case tablekit.TypeInteger:
			c.Value = tablekit.Integer(int64(d.uint64Before()))
		case tablekit.TypeDouble:
			c.Value = tablekit.Double(math.Float64frombits(d.uint64Before()))
		case tablekit.TypeBoolean:
			switch d.byteBefore() {
			case 0:
				c.Value = tablekit.Boolean(false)
			case 1:
				c.Value = tablekit.Boolean(true)
			default:
				d.fail()
			}
		default:
			d.fail()
		}
		c.Version = d.varint()
		if d.err != nil {
			clear(cells)
			r.Cells = cells[:0]
			return fmt.Errorf("%w: cell %d: %v", ErrCorrupt, len(cells), d.err)
		}
		cells = append(cells, c)
	}
	if len(d.s) != 0 {
		clear(cells)
		r.Cells = cells[:0]
		return fmt.Errorf("%w: %d trailing bytes after a row", ErrCorrupt, len(d.s))
	}
	r.Cells = cells
	return nil
}

func (d *decoder) byteBefore() byte {
	if len(d.s) < 1 {
		d.fail()
		return 0
	}
	b := d.s[0]
	d.s = d.s[1:]
	return b
}

func (d *decoder) uint64Before() uint64 {
	if len(d.s) < 8 {
		d.fail()
		return 0
	}
	u := binary.BigEndian.Uint64([]byte(d.s[:8]))
	d.s = d.s[8:]
	return u
}

// BenchmarkAppendCells decodes a YCSB-shaped stored row (10 Binary cells
// of 100 bytes, names field0..field9, versions in milliseconds) as a range
// read of whole rows does (appendCells, names interned), into a block of
// cells reused every 100 rows.
func BenchmarkAppendCells(b *testing.B) {
	src := rowmodel.Row{Generation: 3}
	for f := range 10 {
		src.Cells = append(src.Cells, tablekit.Column{Name: fmt.Sprintf("field%d", f), Value: tablekit.Binary(make([]byte, 100)), Version: time.Now().UnixMilli()})
	}
	s := string(appendRow(nil, &src))
	nm := names{m: map[string]string{}}
	block := make([]tablekit.Column, 0, 1000)
	for b.Loop() {
		if len(block) == cap(block) {
			block = block[:0]
		}
		_, _, n, d, err := rowHeader(s)
		if err != nil {
			b.Fatal(err)
		}
		if block, err = appendCells(block, &d, n, &nm); err != nil || n != 10 {
			b.Fatal(err)
		}
	}
}
