package gcpbigtable_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// TestReadValuesStayPut checks the premise of decodeRow's zero-copy String
// and Binary values: the bytes the Bigtable client hands over are not
// reused. It keeps the rows of GetRow, BatchGetRow and GetRange reads, then
// makes the client and the emulator churn through many more reads and
// writes of other values (and GC), and checks that every kept value still
// reads as written.
func TestReadValuesStayPut(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "vals", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("vals")
	value := func(i, gen int) (string, []byte) {
		s := fmt.Sprintf("row %d generation %d ", i, gen)
		return strings.Repeat(s, 1+i%7), bytes.Repeat([]byte{byte(i), byte(gen), 0}, 1+i%5)
	}
	write := func(gen int) {
		var ws []tablekit.BatchWrite
		for i := range 50 {
			s, b := value(i, gen)
			ws = append(ws, tablekit.BatchPut("vals", key2("v", int64(i)), []tablekit.Column{
				{Name: "s", Value: tablekit.String(s)}, {Name: "x", Value: tablekit.Binary(b)}}))
		}
		if _, err := db.BatchWriteRow(ctx, ws); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	type kept struct {
		i   int
		row tablekit.Row
	}
	var keep []kept
	for i := range 10 {
		r, found, err := tbl.GetRow(ctx, key2("v", int64(i)))
		if err != nil || !found {
			t.Fatal(err, found)
		}
		keep = append(keep, kept{i, r})
	}
	var gets []tablekit.BatchGet
	for i := 10; i < 20; i++ {
		gets = append(gets, tablekit.BatchGet{Table: "vals", Key: key2("v", int64(i))})
	}
	gr, err := db.BatchGetRow(ctx, gets)
	if err != nil {
		t.Fatal(err)
	}
	for j, g := range gr {
		if g.Err != nil || !g.Found {
			t.Fatal(g.Err, g.Found)
		}
		keep = append(keep, kept{10 + j, g.Row})
	}
	res, err := tbl.GetRange(ctx, key2("v", 20), key2("v", 50))
	if err != nil || len(res.Rows) != 30 {
		t.Fatal(err, len(res.Rows))
	}
	for j, r := range res.Rows {
		keep = append(keep, kept{20 + j, r})
	}

	for gen := 1; gen <= 5; gen++ {
		write(gen)
		for range 5 {
			if _, err := tbl.GetRange(ctx, key2("v", 0), key2("v", 50)); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
	}

	for _, k := range keep {
		s, b := value(k.i, 0)
		gs, _ := k.row.Get("s")
		gb, _ := k.row.Get("x")
		if got, _ := gs.Str(); got != s {
			t.Errorf("row %d: kept String changed to %q, want %q", k.i, got, s)
		}
		if got, _ := gb.Bytes(); !bytes.Equal(got, b) {
			t.Errorf("row %d: kept Binary changed to %x, want %x", k.i, got, b)
		}
	}
}
