package awsdynamodb

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Defaults of the adapter's options.
const (
	DefaultShards      = 8
	MaxShards          = 256
	DefaultConcurrency = 8
	defaultMetaTable   = "tablekit.meta"
)

// Options configures a Backend; a nil *Options means the defaults. The
// fields marked "Open only" configure the client Open builds; [New], whose
// client is already configured, refuses them with ErrInvalidArgument
// naming the field rather than ignore them (an endpoint meant for an
// emulator must never be dropped on the way to real AWS).
type Options struct {
	// AWS is the SDK configuration Open builds the client from (Open
	// only). nil means the default AWS configuration and credential chain
	// (config.LoadDefaultConfig: environment, shared config and
	// credentials files, SSO, web identity, container and EC2 roles).
	AWS *aws.Config
	// Region overrides the configuration's region (Open only).
	Region string
	// Endpoint points the client at a DynamoDB-compatible server
	// (dynalite, DynamoDB Local, LocalStack), e.g. "http://127.0.0.1:8000"
	// (Open only).
	Endpoint string
	// ClientOptions are passed to dynamodb.NewFromConfig (Open only).
	ClientOptions []func(*dynamodb.Options)

	// Shards is the number of shard keys (N) of tables this backend
	// creates (default DefaultShards, 1..MaxShards). N is recorded in the
	// table's metadata at CreateTable and never changes. More shards
	// spread a table's writes over more DynamoDB partition keys (each
	// partition key is capped near 1000 WCU / 3000 RCU); fewer make a
	// range across partition keys cheaper, since it is a merge of N
	// Queries.
	Shards int
	// ShardsFunc, when not nil, chooses N per table at CreateTable (a
	// result of 0 means Shards).
	ShardsFunc func(table string) int
	// TablePrefix prefixes every DynamoDB table name the backend uses, the
	// metadata table included, so that several applications can share an
	// account. It must use only [a-zA-Z0-9_.-] and be at most 200 bytes.
	TablePrefix string
	// MetaTable is the name of the DynamoDB table that holds every table's
	// schema and options (default: TablePrefix followed by
	// "tablekit.meta").
	MetaTable string
	// Concurrency bounds how many DynamoDB calls one batch operation runs
	// at once (default DefaultConcurrency).
	Concurrency int
	// NoTransactions is for DynamoDB-compatible stores without
	// TransactWriteItems (dynalite): the backend then declares no atomic
	// writes (Capabilities.AtomicWrite false), so the Client refuses them
	// with ErrUnimplemented before any call (SPEC §13). On DynamoDB and
	// moto leave it false.
	NoTransactions bool
	// NoStreams is for DynamoDB-compatible stores without DynamoDB
	// Streams (dynalite): the backend then declares no change feed
	// (Capabilities.ChangeFeed false), so the Client refuses one with
	// ErrUnimplemented (SPEC §15). On DynamoDB and moto leave it false.
	NoStreams bool
}

// options is the checked form of Options the backend keeps.
type options struct {
	shards      int
	shardsFor   func(table string) int
	prefix      string
	metaTable   string
	concurrency int
	// noTransactions: Options.NoTransactions.
	noTransactions bool
	// noStreams: Options.NoStreams.
	noStreams bool
}

// Backend is a tablekit.Backend on Amazon DynamoDB. It is safe for
// concurrent use.
type Backend struct {
	client *dynamodb.Client
	opts   options
	meta   string // native name of the metadata table
	// idle closes the connections of the HTTP transport Open built (nil
	// when the caller supplied the client or its HTTP client).
	idle func()

	mu     sync.Mutex
	tables map[string]*tableInfo // by portable name: the incarnation last seen

	// The change feed (feed.go): the DynamoDB Streams client, built from
	// client's options, and the tables' ARNs by native name (under mu).
	streamsC  *dynamodbstreams.Client
	tableArns map[string]string

	floors driver.CounterFloors // auto-increment counters known to be at least a value

	// polls: each shard's kept iterator and GetRecords slot (feediter.go).
	polls shardPolls
	// Whether the store serves TransactWriteItems and DynamoDB Streams
	// (probe.go).
	txProbe, streamsProbe probe
}

// tableInfo is what the adapter knows about one incarnation of a table
// beyond its TableMeta.
type tableInfo struct {
	incarnation string
	native      string
	shards      int
	placement   placement // how rows map to shards (item.go)
	nativeTTL   bool
	feed        bool // the change feed is on: writers stamp items (feed.go)
}

// New returns a Backend that uses client, which the caller configures
// (region, credentials, endpoint, retries, HTTP client) and keeps owning:
// Close does not touch it. opts may not set the fields marked "Open only".
func New(client *dynamodb.Client, opts *Options) (*Backend, error) {
	if client == nil {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb.New: nil *dynamodb.Client")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"AWS", o.AWS != nil},
		{"Region", o.Region != ""},
		{"Endpoint", o.Endpoint != ""},
		{"ClientOptions", len(o.ClientOptions) > 0},
	} {
		if f.set {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
				"awsdynamodb.New: Options.%s configures the client Open builds and cannot apply to an existing client; configure the *dynamodb.Client instead", f.name)
		}
	}
	return newBackend(client, &o)
}

// newBackend checks the adapter's own options and builds the Backend.
func newBackend(client *dynamodb.Client, opts *Options) (*Backend, error) {
	o := options{shards: opts.Shards, shardsFor: opts.ShardsFunc, prefix: opts.TablePrefix, metaTable: opts.MetaTable, concurrency: opts.Concurrency, noTransactions: opts.NoTransactions, noStreams: opts.NoStreams}
	if o.shards == 0 {
		o.shards = DefaultShards
	}
	if o.concurrency == 0 {
		o.concurrency = DefaultConcurrency
	}
	if o.shards < 1 || o.shards > MaxShards {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb: Options.Shards %d: shards must be 1-%d", o.shards, MaxShards)
	}
	if o.concurrency < 1 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb: Options.Concurrency %d must be at least 1", o.concurrency)
	}
	if len(o.prefix) > 200 || !validNative(o.prefix) {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb: Options.TablePrefix %q must be at most 200 bytes of [a-zA-Z0-9_.-]", o.prefix)
	}
	meta := o.metaTable
	if meta == "" {
		meta = o.prefix + defaultMetaTable
	}
	if len(meta) < minNativeName || len(meta) > maxNativeName || !validNative(meta) {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb: metadata table name %q must be 3-255 bytes of [a-zA-Z0-9_.-]", meta)
	}
	return &Backend{client: client, streamsC: streamsClient(client), opts: o, meta: meta, tables: map[string]*tableInfo{}, tableArns: map[string]string{}}, nil
}

// Open returns a Backend with a client it builds from opts.AWS (nil: the
// default configuration and credential chain), opts.Region,
// opts.Endpoint and opts.ClientOptions. When the configuration has no
// HTTPClient, Open gives the client an HTTP transport of its own (the
// SDK's default settings), whose connections Close closes, as it closes
// those of the HTTP client the default configuration builds (opts.AWS nil
// and AWS_CA_BUNDLE set); an HTTPClient in opts.AWS stays the caller's.
func Open(ctx context.Context, opts *Options) (*Backend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	var cfg aws.Config
	if o.AWS != nil {
		cfg = o.AWS.Copy()
	} else {
		var err error
		cfg, err = config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, tablekit.WrapError(tablekit.ErrInvalidArgument, err, "awsdynamodb.Open: loading the default AWS configuration")
		}
	}
	if o.Region != "" {
		cfg.Region = o.Region
	}
	if cfg.Region == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb.Open: no AWS region: set Options.Region (?region= in a dynamodb:// URL), AWS_REGION, or a region in the shared config")
	}
	fns := slices.Clone(o.ClientOptions)
	if o.Endpoint != "" {
		if err := checkEndpoint(o.Endpoint); err != nil {
			return nil, err
		}
		ep := o.Endpoint
		fns = append(fns, func(do *dynamodb.Options) { do.BaseEndpoint = aws.String(ep) })
	}
	var tracked *conns // the connections of an HTTP client Open owns
	switch bc, buildable := cfg.HTTPClient.(*awshttp.BuildableClient); {
	case cfg.HTTPClient == nil:
		// The SDK's default client hides its transport; this one is the
		// same transport, reachable, so that Close can release it.
		tracked = &conns{}
		tr := awshttp.NewBuildableClient().GetTransport()
		tr.DialContext = tracked.dialer(tr.DialContext)
		cfg.HTTPClient = &http.Client{
			Transport: tr,
			// Like the SDK's client: a redirect is returned, not followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	case o.AWS == nil && buildable:
		// The default configuration built this client (it does when
		// AWS_CA_BUNDLE is set): Open's own, as a new one would be.
		tracked = &conns{}
		cfg.HTTPClient = bc.WithTransportOptions(func(tr *http.Transport) { tr.DialContext = tracked.dialer(tr.DialContext) })
	}
	b, err := newBackend(dynamodb.NewFromConfig(cfg, fns...), &o)
	if err != nil {
		return nil, err
	}
	if tracked != nil {
		b.idle = tracked.closeAll
	}
	return b, nil
}

// checkEndpoint refuses an endpoint that is not an http(s) URL with a
// host, and one carrying user information, without quoting a password.
func checkEndpoint(ep string) error {
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		shown := "(unparsable)"
		if err == nil {
			shown = driver.ShowURL(u)
		}
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "awsdynamodb: Options.Endpoint %s must be an http:// or https:// URL with a host and no user information", shown)
	}
	return nil
}

func validNative(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// Client returns the native DynamoDB client: the escape hatch to everything
// the portable API does not cover.
func (b *Backend) Client() *dynamodb.Client { return b.client }

// NativeTableName returns the DynamoDB table that holds the rows of table
// now: it reads the table's metadata, because the name carries the
// table's incarnation (see the package doc).
func (b *Backend) NativeTableName(ctx context.Context, table string) (string, error) {
	_, ti, err := b.describe(ctx, table)
	if err != nil {
		return "", err
	}
	return ti.native, nil
}

// MetaTableName returns the DynamoDB table that holds the tables' metadata.
func (b *Backend) MetaTableName() string { return b.meta }

// TableLayout reports how a table is laid out: its shard count and whether
// native TTL reclaims its expired rows (false where the server does not
// support UpdateTimeToLive, e.g. dynalite).
func (b *Backend) TableLayout(ctx context.Context, table string) (shards int, nativeTTL bool, err error) {
	_, ti, err := b.describe(ctx, table)
	if err != nil {
		return 0, false, err
	}
	return ti.shards, ti.nativeTTL, nil
}

// Close releases the backend: it closes the connections of the HTTP
// transport Open built, idle or not. A client passed to New, or an HTTP client in the
// aws.Config given to Open, is the caller's and stays usable. Calls made
// after Close still work (the Client makes none) and open new connections.
func (b *Backend) Close() error {
	if b.idle != nil {
		b.idle()
	}
	return nil
}
