package awsdynamodb_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/internal/testkit/urltest"
)

// TestURL opens dynamodb:// on dynalite with the default credential chain
// and makes a round trip.
func TestURL(t *testing.T) {
	ep := needDynalite(t)
	urltest.AWSEnv(t)
	ctx := context.Background()
	db, err := tablekit.Open(ctx, "dynamodb://?region="+dynalitetest.Region+"&endpoint="+ep+"&shards=2&table_prefix=urltest_")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := uniqueName("url")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	defer db.DeleteTable(ctx, name)
	k := tablekit.Key("pk", tablekit.String("a"))
	if err := db.Table(name).PutRow(ctx, k, []tablekit.Column{{Name: "c", Value: tablekit.Integer(7)}}); err != nil {
		t.Fatal(err)
	}
	row, ok, err := db.Table(name).GetRow(ctx, k)
	if err != nil || !ok {
		t.Fatalf("GetRow = %v, %v", ok, err)
	}
	if v, _ := row.Get("c"); !v.Equal(tablekit.Integer(7)) {
		t.Errorf("c = %v, want 7", v)
	}
	// The URL's prefix and shard count reached the backend.
	var c *dynamodb.Client
	if !db.As(&c) {
		t.Fatal("no native client")
	}
	out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, n := range out.TableNames {
		if strings.HasPrefix(n, "urltest_") {
			found++
		}
	}
	if found < 2 { // the metadata table and the data table
		t.Errorf("%d tables with the URL's prefix in %q, want at least 2", found, out.TableNames)
	}
}

func TestURLRefused(t *testing.T) {
	urltest.AWSEnv(t)
	urltest.Refused(t, "s3cr3t",
		"dynamodb://host",
		"dynamodb://?region=us-east-1&shards=0",
		"dynamodb://?region=us-east-1&shards=999",
		"dynamodb://?region=us-east-1&shards=many",
		"dynamodb://?region=us-east-1&colour=blue",
		"dynamodb://?region=us-east-1&aws_secret_access_key=s3cr3t",
		"dynamodb://?region=us-east-1&SessionToken=s3cr3t",
		"dynamodb://AKID:s3cr3t@/?region=us-east-1",
		"dynamodb:///path?region=us-east-1",
		"dynamodb://?region=us-east-1&endpoint=ftp://x",
		"dynamodb://?region=us-east-1&endpoint=http://u:s3cr3t@127.0.0.1:1",
		"dynamodb://?region=us-east-1&table_prefix=a/b",
		"dynamodb://?endpoint=http://127.0.0.1:1", // no region anywhere
		"dynamodb://?region=us-east-1#frag",
	)
}

// TestNewRefusesOpenOnlyOptions: an endpoint (or any other setting of the
// client Open builds) given to New is refused, never ignored, so a test
// meant for an emulator cannot reach real AWS.
func TestNewRefusesOpenOnlyOptions(t *testing.T) {
	c := dynamodb.NewFromConfig(awsConfig(nil))
	cfg := awsConfig(nil)
	for name, o := range map[string]*awsdynamodb.Options{
		"Endpoint":      {Endpoint: "http://127.0.0.1:8000"},
		"Region":        {Region: "eu-west-1"},
		"AWS":           {AWS: &cfg},
		"ClientOptions": {ClientOptions: []func(*dynamodb.Options){func(o *dynamodb.Options) { o.BaseEndpoint = aws.String("http://x") }}},
	} {
		_, err := awsdynamodb.New(c, o)
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "Options."+name) {
			t.Errorf("New with %s: err = %v, want ErrInvalidArgument naming it", name, err)
		}
	}
	if _, err := awsdynamodb.New(c, &awsdynamodb.Options{Shards: 4, TablePrefix: "p_"}); err != nil {
		t.Errorf("New with the adapter's own options: %v", err)
	}
	if _, err := awsdynamodb.New(nil, nil); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("New(nil): err = %v", err)
	}
}
