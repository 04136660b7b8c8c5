package tstest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// adminEnv starts a listening server with the admin endpoint on and a
// raw SDK client.
func adminEnv(t *testing.T) (*Server, *tablestore.TableStoreClient, func(method, path, body string) (int, string)) {
	t.Helper()
	srv, c := listenEnv(t, Options{AdminAddr: "127.0.0.1:0", AdminToken: "tok-123"})
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.AdminEndpoint()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok-123")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	return srv, c, call
}

func TestAdminOffByDefault(t *testing.T) {
	srv, _ := listenEnv(t, Options{})
	if srv.AdminEndpoint() != "" {
		t.Fatalf("admin endpoint %q without AdminAddr", srv.AdminEndpoint())
	}
	// The API listener does not answer admin paths.
	resp, err := http.Post(srv.Endpoint()+"/admin/v1/reset", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Fatal("the API listener served an admin path")
	}
	if _, err := NewServer(mem(Options{AdminAddr: "127.0.0.1:0"})); err == nil {
		t.Fatal("AdminAddr without AdminToken accepted")
	}
}

func TestAdminToken(t *testing.T) {
	srv, _, _ := adminEnv(t)
	for _, auth := range []string{"", "Bearer wrong", "tok-123", "Bearer tok-1234"} {
		req, _ := http.NewRequest("GET", srv.AdminEndpoint()+"/admin/v1/clock", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
}

// TestAdminClock drives TTL from outside: a row written now expires once
// the clock is advanced past the table's TTL, with no sleeping.
func TestAdminClock(t *testing.T) {
	srv, c, call := adminEnv(t)
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(86400, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", "a")}
	ch.AddColumn("v", "x")
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	rowCount := func() int {
		r, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Columns)
	}
	if rowCount() != 1 {
		t.Fatal("row not written")
	}
	code, body := call("POST", "/admin/v1/clock", `{"advance": "23h"}`)
	if code != 200 {
		t.Fatalf("advance: %d %s", code, body)
	}
	if rowCount() != 1 {
		t.Fatal("row expired after 23 h of a 24 h TTL")
	}
	code, body = call("POST", "/admin/v1/clock", `{"advance": "2h"}`)
	var got struct{ Now, Offset string }
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.Offset != "25h0m0s" {
		t.Fatalf("advance: %d %s (%v)", code, body, err)
	}
	if rowCount() != 0 {
		t.Fatal("row still visible 25 h into a 24 h TTL")
	}
	// Set the clock to a fixed time; GET reads it back.
	code, body = call("POST", "/admin/v1/clock", `{"set": "2031-05-06T07:08:09Z"}`)
	if code != 200 || !strings.Contains(body, `"now":"2031-05-06T07:08:09`) {
		t.Fatalf("set: %d %s", code, body)
	}
	if d := srv.Now().Sub(time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)); d < 0 || d > time.Minute {
		t.Fatalf("server clock %v after set", srv.Now())
	}
	// A write now carries the set time as its version.
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	r, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("k", "a"), MaxVersion: 1}})
	if err != nil || len(r.Columns) != 1 || time.UnixMilli(r.Columns[0].Timestamp).Year() != 2031 {
		t.Fatalf("GetRow after set = %+v, %v", r, err)
	}
	// Bad requests.
	for _, b := range []string{`{}`, `{"advance": "soon"}`, `{"advance": "1h", "reset": true}`, `{"bogus": 1}`, `not json`} {
		if code, body := call("POST", "/admin/v1/clock", b); code != 400 || !strings.Contains(body, "error") {
			t.Errorf("clock %s: %d %s", b, code, body)
		}
	}
	if code, body := call("POST", "/admin/v1/clock", `{"reset": true}`); code != 200 || !strings.Contains(body, `"offset":"0s"`) {
		t.Fatalf("reset: %d %s", code, body)
	}
}

func TestAdminReset(t *testing.T) {
	_, c, call := adminEnv(t)
	for _, name := range []string{"a", "b"} {
		meta := &tablestore.TableMeta{TableName: name}
		meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
		if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := call("POST", "/admin/v1/reset", ""); code != 200 || strings.TrimSpace(body) != `{"tables_deleted":2}` {
		t.Fatalf("reset: %d %s", code, body)
	}
	lt, err := c.ListTable()
	if err != nil || len(lt.TableNames) != 0 {
		t.Fatalf("ListTable after reset = %v, %v", lt, err)
	}
}

// TestAdminFaults injects each fault code over HTTP and checks what the
// SDK sees, the rate and the seed's determinism.
func TestAdminFaults(t *testing.T) {
	srv, c, call := adminEnv(t)
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.RetryTimes = 0 // see every injected error
	nc := tablestore.NewClientWithConfig(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret(), "", cfg)
	put := func() error {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", "a")}
		ch.AddColumn("v", "x")
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		_, err := nc.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		return err
	}
	for _, tc := range []struct {
		code   string
		status int
		msg    string
	}{
		{"OTSServerBusy", 503, "Server is busy."},
		{"OTSQuotaExhausted", 403, "Too frequent table operations."},
		{"OTSTimeout", 503, "Operation timeout."},
		{"OTSServerUnavailable", 503, "Server is not available."},
	} {
		if code, body := call("POST", "/admin/v1/faults", `{"operation":"PutRow","code":"`+tc.code+`","rate":1}`); code != 200 || !strings.Contains(body, tc.code) {
			t.Fatalf("set fault %s: %d %s", tc.code, code, body)
		}
		wantOTS(t, put(), tc.status, tc.code, tc.msg)
		// Other operations run.
		if _, err := nc.ListTable(); err != nil {
			t.Fatalf("ListTable with a PutRow fault: %v", err)
		}
	}
	// A rate of 0.3 with a seed: about 30% fail, the same ones each time.
	pattern := func() string {
		if code, body := call("POST", "/admin/v1/faults", `{"operation":"*","code":"OTSServerBusy","rate":0.3,"seed":42}`); code != 200 {
			t.Fatalf("set fault: %d %s", code, body)
		}
		if code, body := call("POST", "/admin/v1/faults", `{"operation":"PutRow","code":"OTSServerBusy","rate":0}`); code != 200 {
			t.Fatalf("remove fault: %d %s", code, body)
		}
		var b strings.Builder
		for range 200 {
			if put() != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	p1, p2 := pattern(), pattern()
	if p1 != p2 {
		t.Errorf("same seed, different failures:\n%s\n%s", p1, p2)
	}
	if n := strings.Count(p1, "x"); n < 35 || n > 85 {
		t.Errorf("%d of 200 calls failed at rate 0.3", n)
	}
	if code, body := call("GET", "/admin/v1/faults", ""); code != 200 || !strings.Contains(body, `"operation":"*"`) {
		t.Fatalf("list faults: %d %s", code, body)
	}
	if code, body := call("DELETE", "/admin/v1/faults", ""); code != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("clear faults: %d %s", code, body)
	}
	for range 20 {
		if err := put(); err != nil {
			t.Fatalf("PutRow after clearing faults: %v", err)
		}
	}
	for _, b := range []string{`{"operation":"PutRow","code":"OTSNope","rate":1}`, `{"operation":"Nope","code":"OTSServerBusy","rate":1}`, `{"operation":"PutRow","code":"OTSServerBusy","rate":2}`} {
		if code, body := call("POST", "/admin/v1/faults", b); code != 400 {
			t.Errorf("fault %s: %d %s", b, code, body)
		}
	}
}
