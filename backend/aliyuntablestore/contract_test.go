package aliyuntablestore_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/backend/driver"
)

// countingTransport counts the HTTP requests the SDK sends.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// db.As reaches the SDK client, and nothing else.
func TestAs(t *testing.T) {
	srv := newServer(t)
	b := openAt(t, srv, srv.Endpoint(), nil)
	db := tablekit.NewClient(b)
	var c *tablestore.TableStoreClient
	if !db.As(&c) || c == nil || c != b.Client() {
		t.Fatalf("db.As(**tablestore.TableStoreClient) = %v, want the backend's client", c)
	}
	var other *http.Client
	if db.As(&other) {
		t.Error("db.As(**http.Client) = true")
	}
	var nilTarget **tablestore.TableStoreClient
	if b.As(nilTarget) {
		t.Error("As(nil pointer) = true")
	}
}

// A wrong access key secret is ErrPermissionDenied through the Client, the
// native error reachable, after exactly one request per call: it is
// neither retried by the adapter nor by the Client.
func TestWrongSecretIsPermissionDenied(t *testing.T) {
	srv := newServer(t)
	meta := createUsers(t, srv)
	ct := &countingTransport{base: http.DefaultTransport}
	cfg := aliyuntablestore.DefaultConfig()
	cfg.Transport = ct
	bad, err := aliyuntablestore.Open(context.Background(), &aliyuntablestore.Options{Endpoint: srv.Endpoint(), Instance: srv.InstanceName(), AccessKeyID: srv.AccessKeyID(), AccessKeySecret: "not-the-secret", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(bad)
	defer db.Close()
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, tablekit.ErrPermissionDenied) {
			t.Errorf("%s: err = %v, want ErrPermissionDenied", what, err)
		}
		var oe *tablestore.OtsError
		if !errors.As(err, &oe) || oe.Code != "OTSAuthFailed" || oe.HttpStatusCode != http.StatusForbidden {
			t.Errorf("%s: errors.As(*tablestore.OtsError) gives %+v, want 403 OTSAuthFailed", what, oe)
		}
		if driver.Retryable(err) || errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("%s: %v is retryable or ErrInvalidArgument", what, err)
		}
		if err != nil && strings.Contains(err.Error(), "not-the-secret") {
			t.Errorf("%s: the message quotes the secret: %v", what, err)
		}
		if n := ct.n.Swap(0); n != 1 {
			t.Errorf("%s: %d HTTP requests, want 1", what, n)
		}
	}
	_, _, err = db.Table("users").GetRow(ctx, userKey("a")) // DescribeTable fails first
	check("GetRow", err)
	_, err = db.ListTables(ctx)
	check("ListTables", err)
	// The backend's row calls, given the table's meta.
	now := time.Now().UnixMilli()
	_, err = bad.Write(ctx, &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Key: userKey("a"), Now: now,
		Changes: []tablekit.Change{{Kind: tablekit.ChangeIncrement, Column: "n", Delta: 1}}})
	check("Write", err)
	_, err = bad.GetRange(ctx, &tablekit.GetRangeRequest{Meta: meta, Start: tablekit.Key("id", tablekit.InfMin),
		End: tablekit.Key("id", tablekit.InfMax), Limit: 10, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now})
	check("GetRange", err)
	res, err := bad.BatchWriteRow(ctx, []*tablekit.WriteRequest{
		{Meta: meta, Kind: tablekit.WritePut, Key: userKey("a"), Now: now},
		{Meta: meta, Kind: tablekit.WritePut, Key: userKey("b"), Now: now},
	})
	if err == nil {
		// A refusal of the whole call: not split into rows.
		if len(res) != 2 || res[0].Err == nil || res[1].Err == nil {
			t.Fatalf("BatchWriteRow: %+v, want both rows refused", res)
		}
		err = res[0].Err
	}
	check("BatchWriteRow", err)
}

// A table deleted and created again with another key schema: the first
// Client's cached schema is stale, the server answers OTSInvalidPK, and
// the Client reads the table again and judges the call against the new
// schema, so that the next call with the new key works at once.
func TestStaleKeySchema(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	old := createUsers(t, srv) // id String
	a := tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil))
	other := tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil))
	users := a.Table("users")
	if err := users.PutRow(ctx, userKey("x"), nil); err != nil { // a caches the String schema
		t.Fatal(err)
	}
	if err := other.DeleteTable(ctx, "users"); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx, tablekit.TableMeta{Name: "users", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	intKey := func(i int64) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.Integer(i)) }

	// The backend's own answer: ErrInvalidPrimaryKey that is also stale.
	b := openAt(t, srv, srv.Endpoint(), nil)
	now := time.Now().UnixMilli()
	_, err := b.Write(ctx, &tablekit.WriteRequest{Meta: old, Kind: tablekit.WritePut, Key: userKey("y"), Now: now})
	var oe *tablestore.OtsError
	if !errors.Is(err, driver.ErrStaleMeta) || !errors.Is(err, tablekit.ErrInvalidPrimaryKey) || !errors.As(err, &oe) || oe.Code != "OTSInvalidPK" {
		t.Fatalf("Write with the old schema: %v, want ErrStaleMeta and ErrInvalidPrimaryKey wrapping OTSInvalidPK", err)
	}
	var te *tablekit.Error
	if !errors.As(err, &te) || te.Code != tablekit.ErrInvalidPrimaryKey {
		t.Errorf("Write with the old schema: Code %v, want ErrInvalidPrimaryKey", te)
	}
	_, err = b.GetRow(ctx, &tablekit.GetRowRequest{Meta: old, Key: userKey("y"), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now})
	if !errors.Is(err, driver.ErrStaleMeta) || !errors.Is(err, tablekit.ErrInvalidPrimaryKey) {
		t.Errorf("GetRow with the old schema: %v, want stale ErrInvalidPrimaryKey", err)
	}
	gets, err := b.BatchGetRow(ctx, []*tablekit.GetRowRequest{{Meta: old, Key: userKey("y"), Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now}})
	if err != nil || len(gets) != 1 || !errors.Is(gets[0].Err, driver.ErrStaleMeta) || !errors.As(gets[0].Err, &oe) {
		t.Errorf("BatchGetRow with the old schema: %+v, %v, want a stale row error wrapping the OtsError", gets, err)
	}
	writes, err := b.BatchWriteRow(ctx, []*tablekit.WriteRequest{{Meta: old, Kind: tablekit.WritePut, Key: userKey("y"), Now: now}})
	if err != nil || len(writes) != 1 || !errors.Is(writes[0].Err, driver.ErrStaleMeta) || !errors.Is(writes[0].Err, tablekit.ErrInvalidPrimaryKey) {
		t.Errorf("BatchWriteRow with the old schema: %+v, %v, want a stale ErrInvalidPrimaryKey", writes, err)
	}

	// Through the Client: the old key is refused against the new schema,
	// and the cache now holds the new one.
	err = users.PutRow(ctx, userKey("y"), nil)
	if !errors.Is(err, tablekit.ErrInvalidPrimaryKey) {
		t.Fatalf("PutRow with the old key: %v, want ErrInvalidPrimaryKey", err)
	}
	if err := users.PutRow(ctx, intKey(1), []tablekit.Column{{Name: "n", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatalf("PutRow with the new key after the refresh: %v", err)
	}
	if _, found, err := users.GetRow(ctx, intKey(1)); err != nil || !found {
		t.Fatalf("GetRow with the new key: found %v, %v", found, err)
	}
	// A batch write refreshes its row alone in the same way.
	if err := other.DeleteTable(ctx, "users"); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx, usersMeta); err != nil { // String again
		t.Fatal(err)
	}
	res, err := a.BatchWriteRow(ctx, []tablekit.BatchWrite{{Table: "users", Kind: tablekit.WritePut, Key: intKey(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, tablekit.ErrInvalidPrimaryKey) {
		t.Fatalf("BatchWriteRow with the old key: %v, want ErrInvalidPrimaryKey", res[0].Err)
	}
	if err := users.PutRow(ctx, userKey("z"), nil); err != nil {
		t.Fatalf("PutRow with the new key after the batch's refresh: %v", err)
	}
}

// UpdateTable applies only to the options the request read; its answer has
// the new options and, like DescribeTable's, no Incarnation or Generation.
func TestUpdateTableIsConditional(t *testing.T) {
	srv := newServer(t)
	meta := createUsers(t, srv)
	b := openAt(t, srv, srv.Endpoint(), nil)
	ctx := context.Background()
	if meta.Incarnation != "" || meta.Generation != 0 {
		t.Errorf("DescribeTable: Incarnation %q, Generation %d; want none", meta.Incarnation, meta.Generation)
	}
	next := meta.Options
	next.MaxVersions = 5
	m, err := b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: meta, Options: next})
	if err != nil {
		t.Fatal(err)
	}
	if m.Options != next || m.Incarnation != "" || m.Generation != 0 || len(m.Key) != 1 {
		t.Errorf("UpdateTable returned %+v, want the options %+v and the key", m, next)
	}
	stale := next
	stale.MaxVersionOffset = 7200 * time.Second
	_, err = b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: meta, Options: stale}) // meta has MaxVersions 1
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("UpdateTable from stale options: %v, want ErrConditionFailed", err)
	}
	got, err := b.DescribeTable(ctx, meta.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Options != next {
		t.Errorf("options %+v after the refused update, want %+v", got.Options, next)
	}
}
