package awsdynamodb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/urltest"
)

// TestStreamsParameter: a dynamodb:// URL declares a change feed unless
// streams=false (dynalite), whose feed calls are then refused before any
// request.
func TestStreamsParameter(t *testing.T) {
	urltest.AWSEnv(t)
	ctx := context.Background()
	for _, tc := range []struct {
		url  string
		feed bool
	}{
		{"dynamodb://?region=us-east-1&endpoint=http://127.0.0.1:1", true},
		{"dynamodb://?region=us-east-1&endpoint=http://127.0.0.1:1&streams=false", false},
	} {
		db, err := tablekit.Open(ctx, tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Capabilities().ChangeFeed; got != tc.feed {
			t.Errorf("%s: Capabilities().ChangeFeed = %v, want %v", tc.url, got, tc.feed)
		}
		if !tc.feed {
			_, err := db.Table("t").EnableChangeFeed(ctx, 0)
			if !errors.Is(err, tablekit.ErrUnimplemented) {
				t.Errorf("%s: EnableChangeFeed = %v, want ErrUnimplemented", tc.url, err)
			}
		}
		db.Close()
	}
}

// TestFeedRetentionFixed: DynamoDB Streams keep records 24 hours; another
// retention is refused, naming the table and the limit, and the feed stays
// as it was.
func TestFeedRetentionFixed(t *testing.T) {
	ep := needMoto(t)
	ctx := context.Background()
	cfg := awsConfig(nil)
	b, err := awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: ep, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(b)
	defer db.Close()
	name := uniqueName("feedret")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table(name)
	_, err = tb.EnableChangeFeed(ctx, 48*time.Hour)
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "fixed 24h") {
		t.Fatalf("EnableChangeFeed 48h = %v, want ErrInvalidArgument naming the table and the fixed 24h", err)
	}
	if st, err := tb.ChangeFeed(ctx); err != nil || st.Enabled || len(st.Shards) != 0 {
		t.Fatalf("after the refusal: %+v, %v; want no feed", st, err)
	}
	st, err := tb.EnableChangeFeed(ctx, 0)
	if err != nil || !st.Enabled || st.Retention != 24*time.Hour || len(st.Shards) != 1 {
		t.Fatalf("EnableChangeFeed default = %+v, %v; want enabled, 24h, one shard", st, err)
	}
}
