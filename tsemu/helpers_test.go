package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/common"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// epoch is the ManualClock's start: a whole second, far from 1970.
var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

type env struct {
	t     testing.TB
	srv   *Server
	clock *tablekit.ManualClock
	c     *tablestore.TableStoreClient
}

// newEnv starts a server with a ManualClock and a raw SDK client for it.
func newEnv(t testing.TB) *env {
	t.Helper()
	clock := tablekit.NewManualClock(epoch)
	srv, err := NewServer(mem(Options{Clock: clock}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, clock: clock, c: sdkClient(srv, srv.AccessKeySecret())}
}

// sdkClient returns a raw SDK client with few retries, so a retryable
// error fails fast.
func sdkClient(srv *Server, secret string) *tablestore.TableStoreClient {
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 1
	cfg.MaxRetryTime = time.Second
	return tablestore.NewClientWithConfig(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), secret, "", cfg)
}

func (e *env) now() int64 { return e.clock.Now().UnixMilli() }

type pkDef struct {
	name string
	typ  tablestore.PrimaryKeyType
}

// createTable creates a table with TTL -1 and the given max versions.
func (e *env) createTable(name string, maxVersions int, pks ...pkDef) {
	e.t.Helper()
	if err := e.create(name, tablestore.NewTableOption(-1, maxVersions), pks...); err != nil {
		e.t.Fatalf("CreateTable %s: %v", name, err)
	}
}

func (e *env) create(name string, opt *tablestore.TableOption, pks ...pkDef) error {
	meta := &tablestore.TableMeta{TableName: name}
	for _, p := range pks {
		meta.AddPrimaryKeyColumn(p.name, p.typ)
	}
	_, err := e.c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta: meta, TableOption: opt, ReservedThroughput: &tablestore.ReservedThroughput{},
	})
	return err
}

func pk(kv ...any) *tablestore.PrimaryKey {
	k := new(tablestore.PrimaryKey)
	for i := 0; i < len(kv); i += 2 {
		k.AddPrimaryKeyColumn(kv[i].(string), kv[i+1])
	}
	return k
}

func (e *env) put(table string, key *tablestore.PrimaryKey, cols ...any) {
	e.t.Helper()
	ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: key}
	for i := 0; i < len(cols); i += 2 {
		ch.AddColumn(cols[i].(string), cols[i+1])
	}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		e.t.Fatalf("PutRow: %v", err)
	}
}

func (e *env) get(table string, key *tablestore.PrimaryKey, maxVersions int32) *tablestore.GetRowResponse {
	e.t.Helper()
	r, err := e.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: table, PrimaryKey: key, MaxVersion: maxVersions,
	}})
	if err != nil {
		e.t.Fatalf("GetRow: %v", err)
	}
	return r
}

// wantOTS checks that err is the Tablestore error (status, code, message).
func wantOTS(t testing.TB, err error, status int, code, msg string) {
	t.Helper()
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) {
		t.Fatalf("got error %v (%T), want %d %s %q", err, err, status, code, msg)
	}
	if oe.HttpStatusCode != status || oe.Code != code || oe.Message != msg {
		t.Fatalf("got %d %s %q, want %d %s %q", oe.HttpStatusCode, oe.Code, oe.Message, status, code, msg)
	}
	if oe.RequestId == "" {
		t.Errorf("error response has no x-ots-requestid")
	}
}

// colMap returns a row's columns as name -> values, newest first.
func colMap(cols []*tablestore.AttributeColumn) map[string][]any {
	m := map[string][]any{}
	for _, c := range cols {
		m[c.ColumnName] = append(m[c.ColumnName], c.Value)
	}
	return m
}

// signedRequest builds a request as the SDK does: x-ots headers, body MD5,
// V2 signature with secret.
func signedRequest(t testing.TB, srv *Server, op string, body []byte, secret string) *http.Request {
	t.Helper()
	return signedRequestTo(t, srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), op, body, secret)
}

// signedRequestTo is signedRequest for a server given by its endpoint,
// instance and access key ID (an emulator in another process).
func signedRequestTo(t testing.TB, endpoint, instance, accessKeyID, op string, body []byte, secret string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, endpoint+"/"+op, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(body)
	r.Header.Set("x-ots-date", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	r.Header.Set("x-ots-apiversion", "2015-12-31")
	r.Header.Set("x-ots-accesskeyid", accessKeyID)
	r.Header.Set("x-ots-instancename", instance)
	r.Header.Set("x-ots-contentmd5", base64.StdEncoding.EncodeToString(sum[:]))
	sign(t, r, secret)
	return r
}

func sign(t testing.TB, r *http.Request, secret string) {
	t.Helper()
	h := r.Header.Clone()
	h.Del("x-ots-signature")
	s, err := tablestore.GetSignature(r.URL.Path, http.MethodPost, &common.DefaultCredentials{
		AccessKeyID: r.Header.Get("x-ots-accesskeyid"), AccessKeySecret: secret,
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("x-ots-signature", s)
}

type rawResp struct {
	status int
	header http.Header
	body   []byte
	err    *otsprotocol.Error // for non-2xx
}

// do serves r with the in-process handler.
func do(t testing.TB, srv *Server, r *http.Request) rawResp {
	t.Helper()
	return doWith(t, srv.Transport(), r)
}

// doWith sends r with rt and decodes the answer.
func doWith(t testing.TB, rt http.RoundTripper, r *http.Request) rawResp {
	t.Helper()
	resp, err := rt.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := rawResp{status: resp.StatusCode, header: resp.Header, body: b}
	if resp.StatusCode/100 != 2 {
		out.err = new(otsprotocol.Error)
		if err := proto.Unmarshal(b, out.err); err != nil {
			t.Fatalf("error body of status %d is not an otsprotocol.Error: %v", resp.StatusCode, err)
		}
	}
	return out
}

// call sends a signed raw request for op with msg as the body.
func (e *env) call(op string, msg proto.Message) rawResp {
	e.t.Helper()
	var body []byte
	if msg != nil {
		var err error
		if body, err = proto.Marshal(msg); err != nil {
			e.t.Fatal(err)
		}
	}
	return do(e.t, e.srv, signedRequest(e.t, e.srv, op, body, e.srv.AccessKeySecret()))
}

func (r rawResp) want(t testing.TB, status int, code, msg string) {
	t.Helper()
	if r.status != status || r.err == nil || r.err.GetCode() != code || r.err.GetMessage() != msg {
		t.Fatalf("got %d %s %q, want %d %s %q", r.status, r.err.GetCode(), r.err.GetMessage(), status, code, msg)
	}
}

// mem returns o with a new in-memory Backend when it has none: the
// server's tests run on the local engine unless they say otherwise.
func mem(o Options) Options {
	if o.Backend == nil {
		o.Backend = localengine.New()
	}
	return o
}
