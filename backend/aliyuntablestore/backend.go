package aliyuntablestore

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/internal/base"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// Backend is a tablekit.Backend over one Tablestore instance. It is safe
// for concurrent use (the SDK client is).
type Backend struct {
	c *tablestore.TableStoreClient
	// transport is the adapter's own transport, closed by Close; nil when
	// the client came from New.
	transport *ctxTransport
	// retry is the retry policy the adapter runs in place of the SDK's for
	// the clients it builds; nil for New, whose client retries.
	retry *retryPolicy
}

// do runs one logical SDK call: fn makes one attempt of action (the
// SDK's URI, "/GetRow") and returns the SDK's error. do retries as the
// SDK would, and maps the final error.
func (b *Backend) do(ctx context.Context, action string, req traced, noReplay bool, fn func() error) error {
	var bud budget
	return mapError(b.attempts(ctx, &bud, action, req, noReplay, fn))
}

// doCall is do for fn, an SDK method that takes req and answers a
// response: it returns fn's answer to its last attempt.
func doCall[Req traced, Resp any](ctx context.Context, b *Backend, action string, req Req, noReplay bool, fn func(Req) (Resp, error)) (Resp, error) {
	var bud budget
	resp, err := attemptsCall(ctx, b, &bud, action, req, noReplay, fn)
	return resp, mapError(err)
}

// attemptsCall is doCall without the mapping, its attempts counted in
// bud (as attempts is do's).
func attemptsCall[Req traced, Resp any](ctx context.Context, b *Backend, bud *budget, action string, req Req, noReplay bool, fn func(Req) (Resp, error)) (Resp, error) {
	var resp Resp
	err := b.attempts(ctx, bud, action, req, noReplay, func() error {
		var err error
		resp, err = fn(req)
		return err
	})
	if err != nil {
		// An attempt abandoned at its context's end may still be running
		// fn (call returns without waiting for it): resp is its to write.
		var zero Resp
		return zero, err
	}
	return resp, nil
}

// attempts is do without the mapping, its attempts counted in bud.
func (b *Backend) attempts(ctx context.Context, bud *budget, action string, req traced, noReplay bool, fn func() error) error {
	if b.retry != nil && bud.end.IsZero() {
		bud.end = time.Now().Add(b.retry.maxTime) // MaxRetryTime runs from the first attempt
	}
	for {
		var err error
		if b.retry != nil && req != nil {
			err = callSync(ctx, req, noReplay, fn)
		} else {
			err = call(ctx, req, noReplay, fn)
		}
		if err == nil || b.retry == nil || ctx.Err() != nil {
			return err
		}
		retry, now := retryable(err, action)
		if !retry {
			return err
		}
		d, ok := b.retry.pause(bud)
		if !ok {
			return err
		}
		if now {
			d = time.Millisecond // the server closed the connection: no back-off
		}
		b.notify(err, action, d)
		if err := driver.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// notify calls the client's RetryNotify, as the SDK does before a retry.
func (b *Backend) notify(err error, action string, d time.Duration) {
	rn := b.c.GetRetryNotify()
	if rn == nil {
		return
	}
	requestID := ""
	var oe *tablestore.OtsError
	if errors.As(err, &oe) {
		requestID = oe.RequestId
	}
	rn("", requestID, err, action, d)
}

// Default retry settings of [DefaultConfig]. The SDK's own defaults are 10
// retries within 5 s. These bound every retry a call makes (the adapter
// runs them in place of the SDK, see the package doc), and the caller's
// context bounds them further.
const (
	DefaultRetryTimes   = 3
	DefaultMaxRetryTime = 2 * time.Second
)

// DefaultConfig returns the SDK configuration [Open] uses: the SDK's
// defaults with RetryTimes = DefaultRetryTimes and MaxRetryTime =
// DefaultMaxRetryTime.
func DefaultConfig() *tablestore.TableStoreConfig {
	c := tablestore.NewDefaultTableStoreConfig()
	c.RetryTimes = DefaultRetryTimes
	c.MaxRetryTime = DefaultMaxRetryTime
	return c
}

// Environment variables [Open] reads the credentials from when
// Options.AccessKeyID and Options.AccessKeySecret are both empty.
const (
	EnvAccessKeyID     = "TABLESTORE_ACCESS_KEY_ID"
	EnvAccessKeySecret = "TABLESTORE_ACCESS_KEY_SECRET"
	EnvSecurityToken   = "TABLESTORE_SECURITY_TOKEN" // optional: an STS token
)

// Options configures a Backend. Every field configures the SDK client
// [Open] builds, so [New], whose client is already configured, refuses
// each one with ErrInvalidArgument naming it rather than ignore it.
type Options struct {
	// Endpoint is the instance's URL,
	// https://<instance>.<region>.ots.aliyuncs.com (required).
	Endpoint string
	// Instance is the instance name (required).
	Instance string
	// AccessKeyID, AccessKeySecret and SecurityToken (an STS token, or
	// empty) are the credentials. When AccessKeyID and AccessKeySecret are
	// both empty, Open reads all three from the environment variables
	// EnvAccessKeyID, EnvAccessKeySecret and EnvSecurityToken.
	AccessKeyID, AccessKeySecret, SecurityToken string
	// Config tunes the SDK (nil means [DefaultConfig]); it is copied, and
	// its Transport (or, when nil, a transport built from its pool and
	// timeout settings as the SDK builds one) is wrapped in
	// [ContextTransport] so that contexts reach the wire. Its
	// HTTPTimeout.RequestTimeout bounds each request as in the SDK, applied
	// by that transport rather than the SDK's http.Client (which would
	// spend a goroutine and a timer per request on a transport it does not
	// know). Its RetryTimes, MaxRetryTime, DefaultRetryInterval and
	// MaxRetryInterval govern the retries, which the adapter runs instead
	// of the SDK.
	Config *tablestore.TableStoreConfig
}

// Open opens a backend on a Tablestore instance, as
// tablestore.NewClientWithConfig opens a client. No error it returns
// contains a credential.
func Open(ctx context.Context, opts *Options) (*Backend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "aliyuntablestore: Options.Endpoint is not a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "aliyuntablestore: Options.Endpoint %s must be an http:// or https:// URL with a host and no user information", driver.ShowURL(u))
	}
	if o.Instance == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "aliyuntablestore: Options.Instance is empty")
	}
	if o.AccessKeyID == "" && o.AccessKeySecret == "" {
		o.AccessKeyID = os.Getenv(EnvAccessKeyID)
		o.AccessKeySecret = os.Getenv(EnvAccessKeySecret)
		o.SecurityToken = os.Getenv(EnvSecurityToken)
		if o.AccessKeyID == "" || o.AccessKeySecret == "" {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
				"aliyuntablestore: no credentials: set Options.AccessKeyID and Options.AccessKeySecret, or the environment variables %s and %s", EnvAccessKeyID, EnvAccessKeySecret)
		}
	} else if o.AccessKeyID == "" || o.AccessKeySecret == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "aliyuntablestore: Options.AccessKeyID and Options.AccessKeySecret must be given together")
	}
	var cfg tablestore.TableStoreConfig
	if o.Config != nil {
		cfg = *o.Config
	} else {
		cfg = *DefaultConfig()
	}
	base := cfg.Transport
	if base == nil {
		base = newBaseTransport(&cfg)
	}
	// The transport applies the request timeout (see ctxTransport.timeout).
	t := &ctxTransport{base: base, timeout: cfg.HTTPTimeout.RequestTimeout}
	cfg.Transport = t
	cfg.HTTPTimeout.RequestTimeout = 0
	// The adapter runs the retries itself (see retryPolicy).
	retry := newRetryPolicy(&cfg)
	cfg.RetryTimes = 0
	c := tablestore.NewClientWithConfig(o.Endpoint, o.Instance, o.AccessKeyID, o.AccessKeySecret, o.SecurityToken, &cfg)
	return &Backend{c: c, transport: t, retry: retry}, nil
}

// New returns a backend over an existing SDK client, which stays the
// caller's: Close does not close it, and the client keeps its own retries.
// Contexts are honoured (a call returns ctx.Err() as soon as its context
// ends, from a goroutine of its own), but the HTTP request in flight is
// aborted only if the client was built with [ContextTransport] as its
// TableStoreConfig.Transport. opts must be nil or empty: each of its
// fields configures a client Open builds.
func New(c *tablestore.TableStoreClient, opts *Options) (*Backend, error) {
	if c == nil {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "aliyuntablestore.New: nil *tablestore.TableStoreClient")
	}
	if opts != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"Endpoint", opts.Endpoint != ""},
			{"Instance", opts.Instance != ""},
			{"AccessKeyID", opts.AccessKeyID != ""},
			{"AccessKeySecret", opts.AccessKeySecret != ""},
			{"SecurityToken", opts.SecurityToken != ""},
			{"Config", opts.Config != nil},
		} {
			if f.set {
				return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
					"aliyuntablestore.New: Options.%s configures the client Open builds and cannot apply to an existing client", f.name)
			}
		}
	}
	return &Backend{c: c}, nil
}

// Client returns the native SDK client, for what tablekit does not cover.
// For a backend from [Open] its RetryTimes is 0 (the
// adapter runs the retries), so calls made on it directly are not retried.
func (b *Backend) Client() *tablestore.TableStoreClient { return b.c }

// Close releases idle connections of the adapter's own transport. It
// leaves nothing running; calls still in flight finish on their own, and
// a call made after Close still works (it opens a new connection); the
// tablekit.Client makes none.
func (b *Backend) Close() error {
	if b.transport != nil {
		b.transport.CloseIdleConnections()
	}
	return nil
}

// newBaseTransport builds the transport the SDK would build from cfg
// (api.go resolveTableStoreTransport).
func newBaseTransport(cfg *tablestore.TableStoreConfig) *http.Transport {
	if cfg == nil {
		cfg = tablestore.NewDefaultTableStoreConfig()
	}
	t := &http.Transport{
		MaxIdleConnsPerHost: cfg.MaxIdleConnections,
		IdleConnTimeout:     cfg.IdleConnTimeout,
		DialContext:         (&net.Dialer{Timeout: cfg.HTTPTimeout.ConnectionTimeout}).DialContext,
	}
	if cfg.ProxyFromEnvironment {
		t.Proxy = http.ProxyFromEnvironment
	}
	if cfg.ProxyHost != "" {
		if u, err := url.Parse(cfg.ProxyHost); err == nil {
			t.Proxy = http.ProxyURL(u)
		}
	}
	return t
}

// CreateTable implements tablekit.Backend. Tablestore keeps the table's
// schema and options; meta's Incarnation and Generation are not stored.
func (b *Backend) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	return b.createTable(ctx, meta, nil)
}

// CreateTableWithFeed implements tablekit.FeedCreator: CreateTable with
// its StreamSpecification, so the stream is on from the table's creation.
func (b *Backend) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	return b.createTable(ctx, meta, &tablestore.StreamSpecification{EnableStream: true, ExpirationTime: int32(feed.Retention / time.Hour)})
}

func (b *Backend) createTable(ctx context.Context, meta *tablekit.TableMeta, stream *tablestore.StreamSpecification) error {
	opt, err := tableOption(meta.Options)
	if err != nil {
		return err
	}
	req := &tablestore.CreateTableRequest{
		TableMeta:          &tablestore.TableMeta{TableName: meta.Name},
		TableOption:        opt,
		ReservedThroughput: &tablestore.ReservedThroughput{},
		StreamSpec:         stream,
	}
	for _, kc := range meta.Key {
		t, err := keyType(kc.Type)
		if err != nil {
			return err
		}
		if kc.AutoIncrement {
			req.TableMeta.AddPrimaryKeyColumnOption(kc.Name, t, tablestore.AUTO_INCREMENT)
			continue
		}
		req.TableMeta.AddPrimaryKeyColumn(kc.Name, t)
	}
	_, err = doCall(ctx, b, "/CreateTable", req, false, b.c.CreateTable)
	return err
}

// tableOption maps tablekit options; Tablestore keeps TTL and MaxVersions
// in 32 bits.
func tableOption(o tablekit.TableOptions) (*tablestore.TableOption, error) {
	if ttl := o.TTLSeconds(); ttl > math.MaxInt32 || ttl < math.MinInt32 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "TTL %d s exceeds Tablestore's limit of %d s", ttl, math.MaxInt32)
	}
	if o.MaxVersions > math.MaxInt32 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "MaxVersions %d exceeds Tablestore's limit of %d", o.MaxVersions, math.MaxInt32)
	}
	return &tablestore.TableOption{
		TimeToAlive:               int(o.TTLSeconds()),
		MaxVersion:                o.MaxVersions,
		DeviationCellVersionInSec: o.MaxVersionOffsetSeconds(),
	}, nil
}

func keyType(t tablekit.Type) (tablestore.PrimaryKeyType, error) {
	if kt, ok := tsproto.KeyTypes.SDK(t); ok {
		return kt, nil
	}
	return 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "type %v cannot be a primary-key type", t)
}

// DescribeTable implements tablekit.Backend. The meta it returns has an
// empty Incarnation and Generation 0: Tablestore keeps neither, and it
// applies the options itself, so no request can be stale about them.
func (b *Backend) DescribeTable(ctx context.Context, table string) (*tablekit.TableMeta, error) {
	req := &tablestore.DescribeTableRequest{TableName: table}
	resp, err := doCall(ctx, b, "/DescribeTable", req, false, b.c.DescribeTable)
	if err != nil {
		return nil, err
	}
	if resp.TableMeta == nil || resp.TableOption == nil {
		return nil, tablekit.Errorf(tablekit.ErrUnavailable, "DescribeTable of %q answered without a table meta or options", table)
	}
	m := &tablekit.TableMeta{Name: resp.TableMeta.TableName}
	if m.Name == "" {
		m.Name = table
	}
	for _, s := range resp.TableMeta.SchemaEntry {
		if s == nil || s.Name == nil || s.Type == nil {
			return nil, tablekit.Errorf(tablekit.ErrUnavailable, "DescribeTable of %q answered with an incomplete primary-key schema", table)
		}
		t, ok := tsproto.KeyTypes.FromSDK(*s.Type)
		if !ok {
			return nil, tablekit.Errorf(tablekit.ErrUnimplemented, "table %q: primary-key column %q has type %d, which tablekit does not know", table, *s.Name, *s.Type)
		}
		auto := s.Option != nil && *s.Option == tablestore.AUTO_INCREMENT
		m.Key = append(m.Key, tablekit.KeyColumn{Name: *s.Name, Type: t, AutoIncrement: auto})
	}
	m.Options = tablekit.TableOptions{
		TTL:              time.Duration(resp.TableOption.TimeToAlive) * time.Second,
		MaxVersions:      resp.TableOption.MaxVersion,
		MaxVersionOffset: time.Duration(resp.TableOption.DeviationCellVersionInSec) * time.Second,
	}
	return m, nil
}

// ListTables implements tablekit.Backend. The SDK's ListTable takes no
// per-call settings, so an ended context returns at once but the HTTP
// request finishes on its own.
func (b *Backend) ListTables(ctx context.Context) ([]string, error) {
	var resp *tablestore.ListTableResponse
	err := b.do(ctx, "/ListTable", nil, false, func() error {
		var err error
		resp, err = b.c.ListTable()
		return err
	})
	if err != nil {
		return nil, err
	}
	names := slices.Clone(resp.TableNames)
	slices.Sort(names)
	return names, nil
}

// UpdateTable implements tablekit.Backend. Tablestore keeps the options
// itself and has no conditional UpdateTable, and the SDK sends every
// option, so the adapter makes the change conditional as far as it can:
// it reads the table's options first and answers ErrConditionFailed when
// they are no longer req.Meta's (the tablekit.Client then reads them again
// and retries), and it runs that read and the update under a lock per
// table name shared by every Backend of this process. Among the clients
// of one process the change is therefore atomic; across processes a
// narrow race remains (another process's update landing between the read
// and the update is overwritten). Incarnation and Generation are not
// kept: the returned meta, like DescribeTable's, has "" and 0.
func (b *Backend) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	opt, err := tableOption(req.Options)
	if err != nil {
		return nil, err
	}
	name := req.Meta.Name
	lock := updateLock(name)
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-lock }()
	cur, err := b.DescribeTable(ctx, name)
	if err != nil {
		return nil, err
	}
	if cur.Options != req.Meta.Options {
		return nil, tablekit.Errorf(tablekit.ErrConditionFailed, "the table's options changed since they were read")
	}
	sreq := &tablestore.UpdateTableRequest{TableName: name, TableOption: opt}
	_, err = doCall(ctx, b, "/UpdateTable", sreq, false, b.c.UpdateTable)
	if err != nil {
		return nil, err
	}
	cur.Options = req.Options
	return cur, nil
}

// updateLocks serialize UpdateTable per table name (striped by a hash of
// the name) among the Backends of this process; each is a semaphore of
// one, so that waiting for it ends with the caller's context.
var updateLocks = func() (l [64]chan struct{}) {
	for i := range l {
		l[i] = make(chan struct{}, 1)
	}
	return l
}()

func updateLock(table string) chan struct{} {
	return updateLocks[base.Spread([]byte(table), len(updateLocks))]
}

// DeleteTable implements tablekit.Backend.
func (b *Backend) DeleteTable(ctx context.Context, table string) error {
	req := &tablestore.DeleteTableRequest{TableName: table}
	_, err := doCall(ctx, b, "/DeleteTable", req, false, b.c.DeleteTable)
	return err
}
