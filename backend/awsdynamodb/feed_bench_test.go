package awsdynamodb_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// BenchmarkFeedWriteCost, on moto (dynalite has no streams): what the
// change feed costs a write, the same write on a table whose feed is on
// and on one whose feed is off, interleaved ("ratio" is on over off):
//
//	go test -run '^$' -bench FeedWriteCost -benchtime 200x ./backend/awsdynamodb/
//
// Put: an unconditional PutRow of 3 columns (one PutItem either way; on
// carries .w). Update: an UpdateRow with an increment (GetItem and a
// conditional PutItem either way). Delete: a DeleteRow of the row just
// put (off: one DeleteItem; on: GetItem, the stamp's UpdateItem and the
// conditional DeleteItem, see the package doc).
func BenchmarkFeedWriteCost(b *testing.B) {
	ctx := context.Background()
	ep := needMoto(b)
	c := dynamodb.NewFromConfig(awsConfig(&http.Client{}), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) })
	be, err := awsdynamodb.New(c, nil)
	if err != nil {
		b.Fatal(err)
	}
	opts := tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry}
	_, off := newTable(b, be, nil, opts)
	_, on := newTable(b, be, nil, opts)
	if _, err := on.EnableChangeFeed(ctx, 0); err != nil {
		b.Fatal(err)
	}
	key := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("pk", tablekit.String(fmt.Sprint("p", i%16))).Add("sk", tablekit.Integer(int64(i)))
	}
	cols := []tablekit.Column{{Name: "a", Value: tablekit.String("alpha")}, {Name: "b", Value: tablekit.Integer(7)}, {Name: "c", Value: tablekit.Double(0.5)}}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Put", func(b *testing.B) {
		interleaved(b, "on", "off",
			func(i int) { must(on.PutRow(ctx, key(i), cols)) },
			func(i int) { must(off.PutRow(ctx, key(i), cols)) })
	})
	b.Run("Update", func(b *testing.B) {
		interleaved(b, "on", "off",
			func(i int) {
				_, err := on.UpdateRow(ctx, key(i), []tablekit.Change{tablekit.Increment("n", 1)})
				must(err)
			},
			func(i int) {
				_, err := off.UpdateRow(ctx, key(i), []tablekit.Change{tablekit.Increment("n", 1)})
				must(err)
			})
	})
	b.Run("Delete", func(b *testing.B) {
		interleaved(b, "on", "off",
			func(i int) { must(on.PutRow(ctx, key(i), cols)); must(on.DeleteRow(ctx, key(i))) },
			func(i int) { must(off.PutRow(ctx, key(i), cols)); must(off.DeleteRow(ctx, key(i))) })
	})
}
