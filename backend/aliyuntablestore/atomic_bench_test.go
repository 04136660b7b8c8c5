package aliyuntablestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// BenchmarkAtomicWrite writes the same 10 rows of one partition key (1 KB
// each: 10 Binary columns of 100 bytes) through the adapter to an
// in-process tsemu server, side by side in one run: as one atomic write
// (one BatchWriteRow with is_atomic), as one plain batch (one
// BatchWriteRow) and as 10 single-row writes (10 PutRow):
//
//	go test -run '^$' -bench AtomicWrite -benchtime 300x -count 3 ./backend/aliyuntablestore/
func BenchmarkAtomicWrite(b *testing.B) {
	srv := newServer(b)
	db := tablekit.NewClient(openAt(b, srv, srv.Endpoint(), nil))
	ctx := context.Background()
	meta := tablekit.TableMeta{Name: "atomic", Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "r", Type: tablekit.TypeInteger}}}
	if err := db.CreateTable(ctx, meta); err != nil {
		b.Fatal(err)
	}
	tbl := db.Table("atomic")
	var cols []tablekit.Column
	for i := range 10 {
		cols = append(cols, tablekit.Column{Name: fmt.Sprintf("f%d", i), Value: tablekit.Binary([]byte(strings.Repeat("x", 100)))})
	}
	writes := make([]tablekit.BatchWrite, 10)
	for i := range writes {
		writes[i] = tablekit.BatchPut("atomic", tablekit.Key("p", tablekit.String("order-1")).Add("r", tablekit.Integer(int64(i))), cols)
	}
	b.Run("atomic10", func(b *testing.B) {
		for b.Loop() {
			if _, err := tbl.AtomicWrite(ctx, writes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batch10", func(b *testing.B) {
		for b.Loop() {
			res, err := db.BatchWriteRow(ctx, writes)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
	})
	b.Run("single10", func(b *testing.B) {
		for b.Loop() {
			for _, w := range writes {
				if err := tbl.PutRow(ctx, w.Key, w.Columns); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
