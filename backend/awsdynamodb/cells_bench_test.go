package awsdynamodb

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
)

// BenchmarkDecodeBinaryVsBefore decodes a .b attribute of five columns of
// two cells each with decodeBinary (values decoded by codec.DecodeValue,
// names and values substrings of one copy of the attribute) and with
// decodeBinaryBefore (the decoder before the shared one, kept here as the
// reference), interleaved in blocks of 200 in alternating order, and
// reports each side's median time and allocations per attribute and the
// time ratio (shared/before).
func BenchmarkDecodeBinaryVsBefore(b *testing.B) {
	attr := []byte{binaryFormat}
	for i, v := range []tablekit.Value{tablekit.String("alice"), tablekit.Integer(42), tablekit.Double(math.Pi), tablekit.Boolean(true), tablekit.Binary(make([]byte, 100))} {
		name := fmt.Sprintf("col%d", i)
		attr = appendBinaryColumn(attr, []tablekit.Column{{Name: name, Value: v, Version: 1700000000001}, {Name: name, Value: v, Version: 1700000000000}})
	}
	dst := make([]tablekit.Column, 0, 10)
	const block = 200
	run := func(f func([]tablekit.Column, []byte) ([]tablekit.Column, error)) time.Duration {
		t0 := time.Now()
		for range block {
			if cells, err := f(dst[:0], attr); err != nil || len(cells) != 10 {
				panic(fmt.Sprint(err))
			}
		}
		return time.Since(t0)
	}
	allocs := func(f func([]tablekit.Column, []byte) ([]tablekit.Column, error)) float64 {
		return testing.AllocsPerRun(100, func() { _, _ = f(dst[:0], attr) })
	}
	var now, before []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			now = append(now, run(decodeBinary))
			before = append(before, run(decodeBinaryBefore))
		} else {
			before = append(before, run(decodeBinaryBefore))
			now = append(now, run(decodeBinary))
		}
		i++
	}
	mn, mb := benchstat.Median(now), benchstat.Median(before)
	b.ReportMetric(float64(mn.Nanoseconds())/block, "shared-ns/attr")
	b.ReportMetric(float64(mb.Nanoseconds())/block, "before-ns/attr")
	b.ReportMetric(float64(mn)/float64(mb), "shared/before")
	b.ReportMetric(allocs(decodeBinary), "shared-allocs/attr")
	b.ReportMetric(allocs(decodeBinaryBefore), "before-allocs/attr")
}

// decodeBinaryBefore and decodeCellBefore are decodeBinary and decodeCell
// as they were before values were decoded by codec.DecodeValue (commit
// ca6e05e), the reference of BenchmarkDecodeBinaryVsBefore.
func decodeBinaryBefore(dst []tablekit.Column, b []byte) ([]tablekit.Column, error) {
	if len(b) < 2 || b[0] != binaryFormat {
		return dst, errCorrupt
	}
	b = b[1:]
	prev := ""
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > uint64(len(b)-k) {
			return dst, errCorrupt
		}
		name := string(b[k : k+int(n)])
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
			var c tablekit.Column
			var err error
			c, b, err = decodeCellBefore(b)
			if err != nil {
				return dst, err
			}
			if i > 0 && c.Version >= dst[len(dst)-1].Version {
				return dst, errCorrupt
			}
			c.Name = name
			dst = append(dst, c)
		}
	}
	return dst, nil
}

func decodeCellBefore(b []byte) (tablekit.Column, []byte, error) {
	if len(b) < 9 {
		return tablekit.Column{}, b, errCorrupt
	}
	c := tablekit.Column{Version: int64(binary.BigEndian.Uint64(b))}
	typ := tablekit.Type(b[8])
	b = b[9:]
	switch typ {
	case tablekit.TypeInteger, tablekit.TypeDouble:
		if len(b) < 8 {
			return c, b, errCorrupt
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
			return c, b, errCorrupt
		}
		c.Value = tablekit.Boolean(b[0] == 1)
		b = b[1:]
	case tablekit.TypeString, tablekit.TypeBinary:
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return c, b, errCorrupt
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		if typ == tablekit.TypeString {
			c.Value = tablekit.String(s)
		} else {
			c.Value = tablekit.BinaryString(s)
		}
	default:
		return c, b, errCorrupt
	}
	return c, b, nil
}
