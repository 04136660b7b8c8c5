package tsemu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// Benchmarks of the raw SDK against the server over loopback HTTP, with
// 1 KB rows (10 columns of 100 bytes), the figures the tablekit adapter is
// compared against:
//
//	go test -run XXX -bench . -benchtime 3s ./tsemu/

func benchRow(ch *tablestore.PutRowChange) {
	v := strings.Repeat("v", 100)
	for c := 0; c < 10; c++ {
		ch.AddColumn(fmt.Sprintf("f%d", c), v)
	}
}

func BenchmarkSDKPutRow(b *testing.B) {
	e := newEnv(b)
	e.createTable("t", 1, pkDef{"k", tString})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", fmt.Sprintf("user%08d", i))}
		benchRow(ch)
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchFill(b *testing.B, e *env, n int) {
	for i := 0; i < n; i += 100 {
		req := &tablestore.BatchWriteRowRequest{}
		for j := i; j < i+100 && j < n; j++ {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", fmt.Sprintf("user%08d", j))}
			benchRow(ch)
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			req.AddRowChange(ch)
		}
		if _, err := e.c.BatchWriteRow(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSDKGetRow(b *testing.B) {
	e := newEnv(b)
	e.createTable("t", 1, pkDef{"k", tString})
	const n = 10000
	benchFill(b, e, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
			TableName: "t", PrimaryKey: pk("k", fmt.Sprintf("user%08d", (i*7919)%n)), MaxVersion: 1,
		}})
		if err != nil || len(r.Columns) != 10 {
			b.Fatal(err, len(r.Columns))
		}
	}
}

func BenchmarkSDKGetRange100(b *testing.B) {
	e := newEnv(b)
	e.createTable("t", 1, pkDef{"k", tString})
	const n = 10000
	benchFill(b, e, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := (i * 7919) % (n - 100)
		r, err := e.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: "t", StartPrimaryKey: pk("k", fmt.Sprintf("user%08d", start)), EndPrimaryKey: allInf(false, "k"),
			MaxVersion: 1, Limit: 100,
		}})
		if err != nil || len(r.Rows) != 100 {
			b.Fatal(err, len(r.Rows))
		}
	}
}
