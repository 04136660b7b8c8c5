package tsemu

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// adminEnv starts a listening server with the admin endpoint on and a
// raw SDK client.
func adminEnv(t *testing.T) (*Server, *tablestore.TableStoreClient, func(method, path, body string) (int, string)) {
	t.Helper()
	srv, c := listenEnv(t, Options{AdminAddr: "127.0.0.1:0", AdminToken: "tok-123-long-enough"})
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.AdminEndpoint()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer tok-123-long-enough")
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
	for _, auth := range []string{"", "Bearer wrong", "tok-123-long-enough", "Bearer tok-123-long-enough4", "Bearer tok-123-long-enoug"} {
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

// TestAdminShortToken: a token shorter than MinAdminTokenLen is refused by
// NewServer, and AdminHandler with one refuses every request, the token
// itself included.
func TestAdminShortToken(t *testing.T) {
	for _, tok := range []string{"x", strings.Repeat("y", MinAdminTokenLen-1)} {
		if srv, err := NewServer(mem(Options{AdminAddr: "127.0.0.1:0", AdminToken: tok})); err == nil {
			srv.Close()
			t.Errorf("a %d-character admin token accepted", len(tok))
		} else if !strings.Contains(err.Error(), "at least 16") {
			t.Errorf("%d-character token: %v", len(tok), err)
		}
		srv, err := NewServer(mem(Options{NoListen: true}))
		if err != nil {
			t.Fatal(err)
		}
		h := srv.AdminHandler(tok)
		req := httptest.NewRequest("GET", "/admin/v1/clock", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		srv.Close()
		if rec.Code != 401 {
			t.Errorf("AdminHandler with a %d-character token answered its own token %d, want 401", len(tok), rec.Code)
		}
	}
	srv, err := NewServer(mem(Options{AdminAddr: "127.0.0.1:0", AdminToken: strings.Repeat("z", MinAdminTokenLen)}))
	if err != nil {
		t.Fatalf("a %d-character token refused: %v", MinAdminTokenLen, err)
	}
	srv.Close()
}

// TestAdminLoopbackOnly: the admin endpoint listens on loopback unless
// AdminAllowRemote says otherwise; a bare ":port" means 127.0.0.1.
func TestAdminLoopbackOnly(t *testing.T) {
	tok := "a-token-of-enough-length"
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		if srv, err := NewServer(mem(Options{AdminAddr: addr, AdminToken: tok})); err == nil {
			srv.Close()
			t.Errorf("AdminAddr %s accepted without AdminAllowRemote", addr)
		} else if !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("AdminAddr %s: %v", addr, err)
		}
	}
	srv, _ := listenEnv(t, Options{AdminAddr: ":0", AdminToken: tok})
	if !strings.HasPrefix(srv.AdminEndpoint(), "http://127.0.0.1:") {
		t.Errorf("AdminAddr :0 listens at %s, want 127.0.0.1", srv.AdminEndpoint())
	}
	srv, _ = listenEnv(t, Options{AdminAddr: "0.0.0.0:0", AdminToken: tok, AdminAllowRemote: true})
	if !strings.Contains(srv.AdminEndpoint(), "0.0.0.0:") && !strings.Contains(srv.AdminEndpoint(), "[::]:") {
		t.Errorf("AdminAddr 0.0.0.0:0 with AdminAllowRemote listens at %s", srv.AdminEndpoint())
	}
}

// TestAdminGuessesThrottled: wrong tokens sent as fast as 16 clients can
// are checked at most adminGuessBurst at once and adminGuessRate a second
// (the rest get 429 unchecked), and the right token works again once the
// guessing stops.
func TestAdminGuessesThrottled(t *testing.T) {
	srv, _, call := adminEnv(t)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer hc.CloseIdleConnections()
	const clients, each = 16, 60
	var checked, throttled, other atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for g := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				req, _ := http.NewRequest("GET", srv.AdminEndpoint()+"/admin/v1/clock", nil)
				req.Header.Set("Authorization", fmt.Sprintf("Bearer guess-%04d-%04d-padding", g, i))
				resp, err := hc.Do(req)
				if err != nil {
					other.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case 401:
					checked.Add(1)
				case 429:
					throttled.Add(1)
					if resp.Header.Get("Retry-After") == "" {
						other.Add(1)
					}
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	bound := adminGuessBurst + int64(elapsed.Seconds()*adminGuessRate) + 2
	t.Logf("%d wrong tokens in %v: %d checked (bound %d), %d throttled, %d other", clients*each, elapsed.Round(time.Millisecond), checked.Load(), bound, throttled.Load(), other.Load())
	if checked.Load() > bound {
		t.Errorf("%d wrong tokens checked in %v, bound %d (%d at once, %d/s)", checked.Load(), elapsed, bound, adminGuessBurst, adminGuessRate)
	}
	if other.Load() != 0 {
		t.Errorf("%d answers neither 401 nor 429 with Retry-After", other.Load())
	}
	// The right token works again once guessing stops.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := call("GET", "/admin/v1/clock", "")
		if code == 200 {
			break
		}
		if code != 429 || time.Now().After(deadline) {
			t.Fatalf("right token after the guesses: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAdminConnCap: connections to the admin endpoint that send nothing
// leave it holding at most adminMaxConns of them, and it still serves.
func TestAdminConnCap(t *testing.T) {
	srv, _, call := adminEnv(t)
	if code, _ := call("GET", "/admin/v1/clock", ""); code != 200 {
		t.Fatal("admin endpoint not serving")
	}
	fd0 := countFDs(t)
	const n = 300
	addr := strings.TrimPrefix(srv.AdminEndpoint(), "http://")
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// This process holds n client ends; the server's ends beyond the cap
	// are closed as it accepts new ones.
	// The deadline is well under the admin listener's 10 s header
	// timeout, which closes silent connections without any cap.
	bound := n + adminMaxConns + 16
	deadline := time.Now().Add(8 * time.Second)
	for {
		if code, body := call("GET", "/admin/v1/clock", ""); code != 200 {
			t.Fatalf("admin call with %d idle connections open: %d %s", n, code, body)
		}
		fds := countFDs(t) - fd0
		if fds <= bound {
			t.Logf("%d silent connections: process fds +%d (bound %d)", n, fds, bound)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d silent connections: process fds +%d, more than the %d client ends plus the cap %d", n, fds, n, adminMaxConns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAdminClockOverflow: the clock cannot wrap around. Advancing twice
// by nearly the largest duration, or setting a time beyond the clock's
// range (year 9999), is refused and leaves the clock where it was;
// AdvanceClock and SetClock clamp instead.
func TestAdminClockOverflow(t *testing.T) {
	srv, _, call := adminEnv(t)
	big := "2562047h" // about 292 years, just under the largest duration
	if code, body := call("POST", "/admin/v1/clock", `{"advance": "`+big+`"}`); code != 200 {
		t.Fatalf("first advance by %s: %d %s", big, code, body)
	}
	before := srv.Now()
	if before.Year() < 2300 {
		t.Fatalf("after advancing %s the clock reads %v", big, before)
	}
	for _, b := range []string{`{"advance": "` + big + `"}`, `{"advance": "2562047h47m16.854775807s"}`, `{"set": "9999-01-01T00:00:00Z"}`, `{"set": "0001-01-01T00:00:00Z"}`} {
		code, body := call("POST", "/admin/v1/clock", b)
		if code != 400 || !strings.Contains(body, "range") {
			t.Errorf("clock %s: %d %s, want 400 naming the range", b, code, body)
		}
		if now := srv.Now(); now.Before(before) {
			t.Fatalf("clock %s moved the clock back from %v to %v", b, before, now)
		}
	}
	if code, body := call("POST", "/admin/v1/clock", `{"advance": "-`+big+`"}`); code != 200 {
		t.Fatalf("advance back: %d %s", code, body)
	}
	// The Go API clamps.
	srv.AdvanceClock(math.MaxInt64)
	mid := srv.Now()
	srv.AdvanceClock(math.MaxInt64)
	if now := srv.Now(); now.Before(mid) || mid.Year() < 2300 {
		t.Fatalf("AdvanceClock(max) twice: %v then %v", mid, now)
	}
	srv.AdvanceClock(math.MinInt64)
	srv.AdvanceClock(math.MinInt64)
	if now := srv.Now(); now.After(time.Now()) {
		t.Fatalf("AdvanceClock(min) twice: %v", now)
	}
	srv.SetClock(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	if now := srv.Now(); now.Year() < 2300 {
		t.Fatalf("SetClock(9999) then %v", now)
	}
}
