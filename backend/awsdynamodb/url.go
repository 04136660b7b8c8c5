package awsdynamodb

import (
	"context"
	"net/url"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Scheme is the URL scheme this package registers with
// driver.RegisterScheme when it is imported:
//
//	dynamodb://?region=eu-west-1
//	dynamodb://?region=us-east-1&endpoint=http://127.0.0.1:8000&shards=4
//
// opens [Open] with the default AWS configuration and credential chain
// (environment, shared files, SSO, web identity, container and instance
// roles). Parameters, all optional: region (else AWS_REGION or the shared
// config; one of them must give it), endpoint ([Options.Endpoint], for
// dynalite, DynamoDB Local or LocalStack), shards ([Options.Shards],
// 1..MaxShards), table_prefix ([Options.TablePrefix]), meta_table
// ([Options.MetaTable]), concurrency ([Options.Concurrency]) and
// transactions (true by default; false sets [Options.NoTransactions], for
// dynalite, which has no TransactWriteItems), streams (true by default;
// false sets [Options.NoStreams], for dynalite, which has no DynamoDB
// Streams). The URL
// has no host or path; anything else, user information, and a parameter
// that looks like a credential are ErrInvalidArgument errors.
const Scheme = "dynamodb"

func init() { driver.RegisterScheme(Scheme, driver.URLOpenerFunc(openURL)) }

func openURL(ctx context.Context, u *url.URL) (tablekit.Backend, error) {
	p := driver.NewURLParams(u)
	opts := &Options{
		Region:      p.String("region", ""),
		Endpoint:    p.String("endpoint", ""),
		Shards:      p.Int("shards", 0, 1, MaxShards),
		TablePrefix: p.String("table_prefix", ""),
		MetaTable:   p.String("meta_table", ""),
		Concurrency: p.Int("concurrency", 0, 1, 1024),
		// transactions=false: a store without TransactWriteItems.
		NoTransactions: !p.Bool("transactions", true),
		// streams=false: a store without DynamoDB Streams.
		NoStreams: !p.Bool("streams", true),
	}
	if err := p.Done(); err != nil {
		return nil, err
	}
	if u.Host != "" || (u.Path != "" && u.Path != "/") {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"dynamodb URL %s: want dynamodb://?region=R[&endpoint=URL][&shards=N] (no host or path)", driver.ShowURL(u))
	}
	return Open(ctx, opts)
}
