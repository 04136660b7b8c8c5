package localengine_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/rangebench"
	"github.com/tablekit/tablekit/localengine"
)

// BenchmarkFilteredRange is the figure of issue 13 on the local engine: a
// range of 12,000 rows read whole, and read with Limit(1) and a filter
// only the last row passes, side by side (see package rangebench). Run
// with:
//
//	go test -run '^$' -bench FilteredRange -count 6 ./localengine/
func BenchmarkFilteredRange(b *testing.B) {
	db := tablekit.NewClient(localengine.New())
	b.Cleanup(func() { db.Close() })
	t, err := rangebench.Table(context.Background(), db, "filtered", rangebench.Rows)
	if err != nil {
		b.Fatal(err)
	}
	rangebench.Run(b, t, rangebench.Rows, rangebench.Counters{})
}
