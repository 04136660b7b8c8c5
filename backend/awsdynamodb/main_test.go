package awsdynamodb_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/internal/testkit/mototest"
)

// endpoint is the dynalite every test and benchmark of the package shares.
var endpoint string

func TestMain(m *testing.M) {
	ep, stop, err := dynalitetest.Launch()
	if err != nil && !errors.Is(err, dynalitetest.ErrNotInstalled) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	endpoint = ep
	if ep == "" && os.Getenv("CI") != "true" {
		skipExamples()
	}
	code := m.Run()
	if stop != nil {
		stop()
	}
	if moto.stop != nil {
		moto.stop()
	}
	os.Exit(code)
}

// skipExamples skips the package's Examples, which need dynalite and
// cannot call t.Skip, saying so on stderr. Under CI=true they run, and
// fail, as the tests do.
func skipExamples() {
	flag.Parse()
	skip := "^Example"
	if prev := flag.Lookup("test.skip").Value.String(); prev != "" {
		skip = prev + "|" + skip
	}
	if err := flag.Set("test.skip", skip); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "awsdynamodb: SKIP the Examples and the tests that need dynalite: it is not installed (run `%s` at the repository root; under CI=true this fails)\n", dynalitetest.InstallCommand)
}

// needDynalite returns the shared endpoint, or skips (fails under CI=true)
// when dynalite is not installed.
func needDynalite(tb testing.TB) string {
	tb.Helper()
	if endpoint == "" {
		dynalitetest.Missing(tb)
	}
	return endpoint
}

// awsConfig is an SDK configuration for dynalite, using hc as the HTTP
// client when it is not nil.
func awsConfig(hc aws.HTTPClient) aws.Config {
	cfg := aws.Config{
		Region:      dynalitetest.Region,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return cfg
}

// newClient returns a raw SDK client for dynalite.
func newClient(tb testing.TB, hc aws.HTTPClient, fns ...func(*dynamodb.Options)) *dynamodb.Client {
	ep := needDynalite(tb)
	fns = append([]func(*dynamodb.Options){func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) }}, fns...)
	return dynamodb.NewFromConfig(awsConfig(hc), fns...)
}

// newBackend opens the adapter on dynalite with opts (nil for the
// defaults); their AWS and Endpoint are set here, and NoTransactions
// (dynalite has no TransactWriteItems).
func newBackend(tb testing.TB, opts ...*awsdynamodb.Options) *awsdynamodb.Backend {
	tb.Helper()
	ep := needDynalite(tb)
	var o awsdynamodb.Options
	if len(opts) > 0 && opts[0] != nil {
		o = *opts[0]
	}
	cfg := awsConfig(nil)
	o.AWS, o.Endpoint, o.NoTransactions = &cfg, ep, true
	b, err := awsdynamodb.Open(context.Background(), &o)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// moto is the moto server the tests of atomic writes share, started by
// the first of them (dynalite has no TransactWriteItems).
var moto struct {
	once     sync.Once
	endpoint string
	err      error
	stop     func()
}

// needMoto returns the shared moto endpoint, starting moto on first use;
// it skips (fails under CI=true) when moto is not installed.
func needMoto(tb testing.TB) string {
	tb.Helper()
	moto.once.Do(func() { moto.endpoint, moto.stop, moto.err = mototest.Launch() })
	switch {
	case errors.Is(moto.err, mototest.ErrNotInstalled), errors.Is(moto.err, mototest.ErrUnsupported):
		mototest.Missing(tb)
	case moto.err != nil:
		tb.Fatal(moto.err)
	}
	return moto.endpoint
}

// newMotoBackend opens the adapter on moto with opts (nil for the
// defaults); their AWS and Endpoint are set here.
func newMotoBackend(tb testing.TB, opts ...*awsdynamodb.Options) *awsdynamodb.Backend {
	tb.Helper()
	ep := needMoto(tb)
	var o awsdynamodb.Options
	if len(opts) > 0 && opts[0] != nil {
		o = *opts[0]
	}
	cfg := awsConfig(nil)
	o.AWS, o.Endpoint = &cfg, ep
	b, err := awsdynamodb.Open(context.Background(), &o)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

var tableSeq atomic.Int64

// uniqueName returns a table name no other test uses.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano()%1e9, tableSeq.Add(1))
}

// newTable creates a table with key (pk String, sk Integer) on a client
// over b and returns the client and the table.
func newTable(tb testing.TB, b *awsdynamodb.Backend, clock tablekit.Clock, opts tablekit.TableOptions, key ...tablekit.KeyColumn) (*tablekit.Client, *tablekit.Table) {
	tb.Helper()
	if clock == nil {
		clock = tablekit.SystemClock{}
	}
	db := tablekit.NewClient(b, tablekit.WithClock(clock))
	if len(key) == 0 {
		key = []tablekit.KeyColumn{{Name: "pk", Type: tablekit.TypeString}, {Name: "sk", Type: tablekit.TypeInteger}}
	}
	name := uniqueName(strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, tb.Name()))
	if len(name) > 200 {
		name = name[len(name)-200:]
		name = "t" + name
	}
	if err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: name, Key: key, Options: opts}); err != nil {
		tb.Fatal(err)
	}
	return db, db.Table(name)
}

// countingTransport counts requests per DynamoDB operation.
type countingTransport struct {
	base http.RoundTripper
	n    map[string]*atomic.Int64
}

func newCountingTransport() *countingTransport {
	c := &countingTransport{base: http.DefaultTransport, n: map[string]*atomic.Int64{}}
	for _, op := range []string{"GetItem", "PutItem", "DeleteItem", "Query", "BatchWriteItem", "BatchGetItem", "UpdateItem", "Scan", "TransactWriteItems"} {
		c.n[op] = new(atomic.Int64)
	}
	return c
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	if n := c.n[op]; n != nil {
		n.Add(1)
	}
	return c.base.RoundTrip(r)
}

func (c *countingTransport) get(op string) int64 { return c.n[op].Load() }

func (c *countingTransport) reset() {
	for _, n := range c.n {
		n.Store(0)
	}
}

// nativeOf returns the DynamoDB table that holds table's rows.
func nativeOf(tb testing.TB, b *awsdynamodb.Backend, table string) string {
	tb.Helper()
	native, err := b.NativeTableName(context.Background(), table)
	if err != nil {
		tb.Fatal(err)
	}
	return native
}
