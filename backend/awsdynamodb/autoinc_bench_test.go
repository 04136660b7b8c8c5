package awsdynamodb_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// BenchmarkAutoIncrementPut compares a PutRow whose key holds
// tablekit.AutoIncrement (an UpdateItem on the partition's counter item,
// then a conditional PutItem) with a plain PutRow of an explicit key (one
// PutItem), the same 1 KB row (10 String columns of 100 bytes) into one
// table, interleaved (see interleaved): "ratio" is auto over plain.
// Sub-benchmarks per server:
//
//	go test -run '^$' -bench BenchmarkAutoIncrementPut -benchtime 400x ./backend/awsdynamodb/
func BenchmarkAutoIncrementPut(b *testing.B) {
	ctx := context.Background()
	servers := []struct {
		name string
		open func(testing.TB) *awsdynamodb.Backend
	}{
		{"dynalite", func(tb testing.TB) *awsdynamodb.Backend { return newBackend(tb) }},
		{"moto", func(tb testing.TB) *awsdynamodb.Backend { return newMotoBackend(tb) }},
	}
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			_, tbl := newTable(b, srv.open(b), nil, tablekit.TableOptions{}, autoKey...)
			auto := func(i int) {
				if err := tbl.PutRow(ctx, autoPK("auto"), benchCols(i)); err != nil {
					b.Fatal(err)
				}
			}
			plain := func(i int) {
				k := tablekit.Key("pk", tablekit.String("plain")).Add("seq", tablekit.Integer(int64(i)))
				if err := tbl.PutRow(ctx, k, benchCols(i)); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 20 { // warm both call shapes up
				auto(i)
				plain(i)
			}
			interleaved(b, "auto", "plain", auto, plain)
		})
	}
}
