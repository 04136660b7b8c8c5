package aliyuntablestore_test

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

func newServer(t testing.TB) *tsemu.Server {
	t.Helper()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// openAt opens the adapter on endpoint with srv's credentials.
func openAt(t testing.TB, srv *tsemu.Server, endpoint string, cfg *tablestore.TableStoreConfig) *aliyuntablestore.Backend {
	t.Helper()
	b, err := aliyuntablestore.Open(context.Background(), &aliyuntablestore.Options{Endpoint: endpoint, Instance: srv.InstanceName(), AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

var usersMeta = tablekit.TableMeta{
	Name: "users",
	Key:  tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
}

func userKey(id string) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.String(id)) }

// createUsers creates the users table through a direct connection to srv.
func createUsers(t testing.TB, srv *tsemu.Server) *tablekit.TableMeta {
	t.Helper()
	b := openAt(t, srv, srv.Endpoint(), nil)
	db := tablekit.NewClient(b)
	if err := db.CreateTable(context.Background(), usersMeta); err != nil {
		t.Fatal(err)
	}
	m, err := db.DescribeTable(context.Background(), usersMeta.Name)
	if err != nil {
		t.Fatal(err)
	}
	return &m
}

// proxy is an HTTP server in front of a tsemu server whose behaviour a
// test chooses per request; it counts the requests it sees per operation.
type proxy struct {
	*httptest.Server
	srv     *tsemu.Server
	hook    atomic.Pointer[func(w http.ResponseWriter, r *http.Request) bool]
	seen    atomic.Int64
	aborted atomic.Int64
}

func newProxy(t testing.TB, srv *tsemu.Server) *proxy {
	p := &proxy{srv: srv}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := p.hook.Load(); h != nil && (*h)(w, r) {
			return
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// on installs a hook for one operation (e.g. "/GetRow"): fn handles the
// request (returning true) or lets the server answer (false).
func (p *proxy) on(op string, fn func(w http.ResponseWriter, r *http.Request) bool) {
	h := func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != op {
			return false
		}
		p.seen.Add(1)
		return fn(w, r)
	}
	p.hook.Store(&h)
}

// stall holds the request until the client goes away (counted in
// aborted) or d passes.
func (p *proxy) stall(d time.Duration) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		// The server notices a client going away only once the body is read.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case <-r.Context().Done():
			p.aborted.Add(1)
			return true
		case <-time.After(d):
			return false
		}
	}
}

// fail answers with a Tablestore error.
func fail(status int, code, msg string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		b, _ := proto.Marshal(&otsprotocol.Error{Code: proto.String(code), Message: proto.String(msg)})
		w.Header().Set("x-ots-requestid", "proxy-request")
		w.WriteHeader(status)
		w.Write(b)
		return true
	}
}

// eventually waits up to d for cond.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
