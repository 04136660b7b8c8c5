package aliyuntablestore

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

// Backend is a tablekit.Backend over one Tablestore instance. It is safe
// for concurrent use (the SDK client is).
type Backend struct {
	c *tablestore.TableStoreClient
	// transport is the adapter's own transport, closed by Close; nil when
	// the client came from FromClient.
	transport *ctxTransport
	// retry is the retry policy the adapter runs in place of the SDK's for
	// the clients it builds; nil for FromClient, whose client retries.
	retry *retryPolicy
	// closed makes calls after Close fail with ErrUnavailable, as every
	// tablekit backend does.
	closed atomic.Bool
}

// do runs one logical SDK call: fn makes one attempt of action (the
// SDK's URI, "/GetRow") and returns the SDK's error. do retries as the
// SDK would, and maps the final error.
func (b *Backend) do(ctx context.Context, action string, req traced, noReplay bool, fn func() error) error {
	var bud budget
	return mapError(b.attempts(ctx, &bud, action, req, noReplay, fn))
}

// attempts is do without the mapping, its attempts counted in bud.
func (b *Backend) attempts(ctx context.Context, bud *budget, action string, req traced, noReplay bool, fn func() error) error {
	if b.closed.Load() {
		return tablekit.Errorf(tablekit.ErrUnavailable, "the Tablestore backend is closed")
	}
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
		if !sleep(ctx, d) {
			return ctx.Err()
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

var _ tablekit.Backend = (*Backend)(nil)

// Default retry settings of [DefaultConfig]. The SDK's own defaults are 10
// retries within 5 s. These bound every retry a call makes (the adapter
// runs them in place of the SDK, see the package doc), and the caller's
// context bounds them further.
const (
	DefaultRetryTimes   = 3
	DefaultMaxRetryTime = 2 * time.Second
)

// DefaultConfig returns the SDK configuration [New] uses: the SDK's
// defaults with RetryTimes = DefaultRetryTimes and MaxRetryTime =
// DefaultMaxRetryTime.
func DefaultConfig() *tablestore.TableStoreConfig {
	c := tablestore.NewDefaultTableStoreConfig()
	c.RetryTimes = DefaultRetryTimes
	c.MaxRetryTime = DefaultMaxRetryTime
	return c
}

// New opens a backend on a Tablestore instance, as tablestore.NewClient
// does: endpoint is the instance's URL (https://<instance>.<region>.ots.aliyuncs.com).
func New(endpoint, instanceName, accessKeyID, accessKeySecret string) (*Backend, error) {
	return NewWithConfig(endpoint, instanceName, accessKeyID, accessKeySecret, "", nil)
}

// NewWithConfig opens a backend as tablestore.NewClientWithConfig does.
// securityToken is an STS token or "". config tunes the SDK (nil means
// [DefaultConfig]); it is copied, and its Transport (or, when nil, a
// transport built from its pool and timeout settings as the SDK builds
// one) is wrapped in [ContextTransport] so that contexts reach the wire.
// Its RetryTimes, MaxRetryTime, DefaultRetryInterval and MaxRetryInterval
// govern the retries, which the adapter runs instead of the SDK.
func NewWithConfig(endpoint, instanceName, accessKeyID, accessKeySecret, securityToken string, config *tablestore.TableStoreConfig) (*Backend, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "endpoint %q must be an http:// or https:// URL", endpoint)
	}
	if instanceName == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "the instance name is empty")
	}
	var cfg tablestore.TableStoreConfig
	if config != nil {
		cfg = *config
	} else {
		cfg = *DefaultConfig()
	}
	base := cfg.Transport
	if base == nil {
		base = newBaseTransport(&cfg)
	}
	t := &ctxTransport{base: base}
	cfg.Transport = t
	// The adapter runs the retries itself (see retryPolicy).
	retry := newRetryPolicy(&cfg)
	cfg.RetryTimes = 0
	c := tablestore.NewClientWithConfig(endpoint, instanceName, accessKeyID, accessKeySecret, securityToken, &cfg)
	return &Backend{c: c, transport: t, retry: retry}, nil
}

// FromClient returns a backend over an existing SDK client, which stays
// the caller's: Close does not close it, and the client keeps its own
// retries. Contexts are honoured (a call returns ctx.Err() as soon as its
// context ends, from a goroutine of its own), but the HTTP request in
// flight is aborted only if the client was built with [ContextTransport]
// as its TableStoreConfig.Transport.
func FromClient(c *tablestore.TableStoreClient) *Backend {
	return &Backend{c: c}
}

// Client returns the native SDK client, for what tablekit does not cover.
// For a backend from [New] or [NewWithConfig] its RetryTimes is 0 (the
// adapter runs the retries), so calls made on it directly are not retried.
func (b *Backend) Client() *tablestore.TableStoreClient { return b.c }

// Close releases idle connections of the adapter's own transport. It
// leaves nothing running; calls still in flight finish on their own.
func (b *Backend) Close() error {
	b.closed.Store(true)
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

// CreateTable implements tablekit.Backend.
func (b *Backend) CreateTable(ctx context.Context, meta *tablekit.TableMeta) error {
	opt, err := tableOption(meta.Options)
	if err != nil {
		return err
	}
	req := &tablestore.CreateTableRequest{
		TableMeta:          &tablestore.TableMeta{TableName: meta.Name},
		TableOption:        opt,
		ReservedThroughput: &tablestore.ReservedThroughput{},
	}
	for _, kc := range meta.Key {
		t, err := keyType(kc.Type)
		if err != nil {
			return err
		}
		req.TableMeta.AddPrimaryKeyColumn(kc.Name, t)
	}
	return b.do(ctx, "/CreateTable", req, false, func() error {
		_, err := b.c.CreateTable(req)
		return err
	})
}

// tableOption maps tablekit options; Tablestore keeps TTL and MaxVersions
// in 32 bits.
func tableOption(o tablekit.TableOptions) (*tablestore.TableOption, error) {
	if o.TTL > math.MaxInt32 || o.TTL < math.MinInt32 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "TTL %d s exceeds Tablestore's limit of %d s", o.TTL, math.MaxInt32)
	}
	if o.MaxVersions > math.MaxInt32 {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "MaxVersions %d exceeds Tablestore's limit of %d", o.MaxVersions, math.MaxInt32)
	}
	return &tablestore.TableOption{
		TimeToAlive:               int(o.TTL),
		MaxVersion:                o.MaxVersions,
		DeviationCellVersionInSec: o.MaxVersionOffset,
	}, nil
}

func keyType(t tablekit.Type) (tablestore.PrimaryKeyType, error) {
	switch t {
	case tablekit.TypeString:
		return tablestore.PrimaryKeyType_STRING, nil
	case tablekit.TypeInteger:
		return tablestore.PrimaryKeyType_INTEGER, nil
	case tablekit.TypeBinary:
		return tablestore.PrimaryKeyType_BINARY, nil
	}
	return 0, tablekit.Errorf(tablekit.ErrInvalidArgument, "type %v cannot be a primary-key type", t)
}

// DescribeTable implements tablekit.Backend.
func (b *Backend) DescribeTable(ctx context.Context, table string) (*tablekit.TableMeta, error) {
	req := &tablestore.DescribeTableRequest{TableName: table}
	var resp *tablestore.DescribeTableResponse
	err := b.do(ctx, "/DescribeTable", req, false, func() error {
		var err error
		resp, err = b.c.DescribeTable(req)
		return err
	})
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
		var t tablekit.Type
		switch *s.Type {
		case tablestore.PrimaryKeyType_STRING:
			t = tablekit.TypeString
		case tablestore.PrimaryKeyType_INTEGER:
			t = tablekit.TypeInteger
		case tablestore.PrimaryKeyType_BINARY:
			t = tablekit.TypeBinary
		default:
			return nil, tablekit.Errorf(tablekit.ErrUnimplemented, "table %q: primary-key column %q has type %d, which tablekit does not know", table, *s.Name, *s.Type)
		}
		if s.Option != nil && *s.Option == tablestore.AUTO_INCREMENT {
			return nil, tablekit.Errorf(tablekit.ErrUnimplemented, "table %q: primary-key column %q is auto-increment, which tablekit does not support", table, *s.Name)
		}
		m.Key = append(m.Key, tablekit.KeyColumn{Name: *s.Name, Type: t})
	}
	m.Options = tablekit.TableOptions{
		TTL:              int64(resp.TableOption.TimeToAlive),
		MaxVersions:      resp.TableOption.MaxVersion,
		MaxVersionOffset: resp.TableOption.DeviationCellVersionInSec,
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

// UpdateTable implements tablekit.Backend.
func (b *Backend) UpdateTable(ctx context.Context, table string, opts tablekit.TableOptions) error {
	opt, err := tableOption(opts)
	if err != nil {
		return err
	}
	req := &tablestore.UpdateTableRequest{TableName: table, TableOption: opt}
	return b.do(ctx, "/UpdateTable", req, false, func() error {
		_, err := b.c.UpdateTable(req)
		return err
	})
}

// DeleteTable implements tablekit.Backend.
func (b *Backend) DeleteTable(ctx context.Context, table string) error {
	req := &tablestore.DeleteTableRequest{TableName: table}
	return b.do(ctx, "/DeleteTable", req, false, func() error {
		_, err := b.c.DeleteTable(req)
		return err
	})
}
