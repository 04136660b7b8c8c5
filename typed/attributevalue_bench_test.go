package typed_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/typed"
)

// BenchmarkVsAttributeValue maps the same 10-field struct with typed and
// with the AWS SDK's attributevalue package, the two sides alternating in
// blocks within one run so that both see the same machine. It reports each
// side's ns per struct and the ratio typed/attributevalue (below 1: typed
// is cheaper). The AWS package is a test-only dependency: nothing a user
// of typed compiles imports it.
//
//	go test -run '^$' -bench VsAttributeValue -count 6 ./typed/
func BenchmarkVsAttributeValue(b *testing.B) {
	const block = 256
	b.Run("marshal", func(b *testing.B) {
		v := benchValue
		interleave(b, block,
			func() {
				if _, _, err := typed.Marshal(&v); err != nil {
					b.Fatal(err)
				}
			},
			func() {
				if _, err := attributevalue.MarshalMap(&v); err != nil {
					b.Fatal(err)
				}
			})
	})
	b.Run("unmarshal", func(b *testing.B) {
		key, cols, err := typed.Marshal(&benchValue)
		if err != nil {
			b.Fatal(err)
		}
		row := tablekit.Row{Key: key, Columns: cols}
		item, err := attributevalue.MarshalMap(&benchValue)
		if err != nil {
			b.Fatal(err)
		}
		interleave(b, block,
			func() {
				var v bench10
				if err := typed.Unmarshal(row, &v); err != nil {
					b.Fatal(err)
				}
			},
			func() {
				var v bench10
				if err := attributevalue.UnmarshalMap(item, &v); err != nil {
					b.Fatal(err)
				}
			})
	})
}

// interleave runs ours and theirs in alternating blocks of n calls until
// b.N calls of each have run, and reports both sides and their ratio.
func interleave(b *testing.B, n int, ours, theirs func()) {
	var tOurs, tTheirs time.Duration
	b.ReportAllocs()
	for done := 0; done < b.N; done += n {
		k := min(n, b.N-done)
		start := time.Now()
		for range k {
			ours()
		}
		mid := time.Now()
		for range k {
			theirs()
		}
		tOurs += mid.Sub(start)
		tTheirs += time.Since(mid)
	}
	b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "typed-ns/op")
	b.ReportMetric(float64(tTheirs.Nanoseconds())/float64(b.N), "attributevalue-ns/op")
	b.ReportMetric(float64(tOurs)/float64(tTheirs), "typed/attributevalue")
}
