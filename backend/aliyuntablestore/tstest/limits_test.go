package tstest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// The probes of issue 11 at their full size: go test -run Probe
// -tstest.slowconns 9000 -tstest.bodies 256 (the default run keeps them
// smaller; the file limit of the test process bounds slowconns).
var (
	slowConns   = flag.Int("tstest.slowconns", 1500, "slow connections opened by TestProbeSlowConnections")
	largeBodies = flag.Int("tstest.bodies", 0, "concurrent 5 MiB bodies sent by TestProbeLargeBodies (default 256, 64 under the race detector)")
)

func nBodies() int {
	switch {
	case *largeBodies > 0:
		return *largeBodies
	case raceEnabled:
		return 64
	}
	return 256
}

// listenEnv starts a listening server with opts (its clock the system
// clock) and an SDK client for it.
func listenEnv(t *testing.T, opts Options) (*Server, *tablestore.TableStoreClient) {
	t.Helper()
	srv, err := NewServer(mem(opts))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, sdkClient(srv, srv.AccessKeySecret())
}

// rawHead returns the request line and headers of a signed request for op
// with body, as bytes to write to a socket.
func rawHead(t *testing.T, srv *Server, op string, body []byte, secret string) []byte {
	t.Helper()
	r := signedRequest(t, srv, op, body, secret)
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", op, r.URL.Host, len(body))
	for k, vs := range r.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, vs[0])
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

func dial(t *testing.T, srv *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.Endpoint(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestProbeSlowClientDropped: a client that sends its body one byte at a
// time is cut off once the read timeout passes, and so is one that
// trickles its headers.
func TestProbeSlowClientDropped(t *testing.T) {
	srv, _ := listenEnv(t, Options{ReadHeaderTimeout: 400 * time.Millisecond, ReadTimeout: time.Second})
	body := bytes.Repeat([]byte{1}, 100)
	for _, tc := range []struct {
		name  string
		first []byte // sent at once
		rest  []byte // sent one byte every 100 ms
		limit time.Duration
	}{
		{"Body", rawHead(t, srv, "DescribeTable", body, srv.AccessKeySecret()), body, time.Second},
		{"Headers", nil, rawHead(t, srv, "ListTable", nil, srv.AccessKeySecret()), 400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now() // the server's read deadline starts at its accept
			c := dial(t, srv)
			if _, err := c.Write(tc.first); err != nil {
				t.Fatal(err)
			}
			closed := make(chan time.Duration, 1)
			go func() {
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						closed <- time.Since(start)
						return
					}
				}
			}()
			for _, b := range tc.rest {
				select {
				case d := <-closed:
					t.Logf("dropped after %v", d.Round(time.Millisecond))
					if d < tc.limit*9/10 {
						t.Fatalf("dropped after %v, before the timeout %v", d, tc.limit)
					}
					return
				case <-time.After(100 * time.Millisecond):
				}
				if _, err := c.Write([]byte{b}); err != nil {
					d := time.Since(start)
					t.Logf("write failed after %v: %v", d.Round(time.Millisecond), err)
					if d > tc.limit+2*time.Second {
						t.Fatalf("dropped after %v, timeout %v", d, tc.limit)
					}
					return
				}
				if time.Since(start) > tc.limit+2*time.Second {
					t.Fatalf("a client sending a byte every 100 ms still connected after %v (timeout %v)", time.Since(start), tc.limit)
				}
			}
			t.Fatalf("the slow client sent its whole request over %v without being dropped", time.Since(start))
		})
	}
}

// countFDs returns the number of open file descriptors of this process.
func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// TestProbeSlowConnections: many connections that never finish a request
// leave the server with at most MaxConns open, and an honest client is
// served promptly meanwhile.
func TestProbeSlowConnections(t *testing.T) {
	const maxConns = 64
	srv, c := listenEnv(t, Options{MaxConns: maxConns})
	if _, err := c.ListTable(); err != nil {
		t.Fatal(err)
	}
	fd0 := countFDs(t)
	addr := strings.TrimPrefix(srv.Endpoint(), "http://")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened atomic.Int64
	wg.Add(1)
	go func() { // the attacker: opens slow connections as fast as it can
		defer wg.Done()
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range *slowConns {
			select {
			case <-stop:
				return
			default:
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				continue
			}
			c.Write([]byte("POST /ListTable HTTP/1.1\r\nHost: x\r\n")) // and nothing more
			conns = append(conns, c)
			opened.Add(1)
		}
		<-stop
	}()
	// The honest clients, meanwhile: one on a kept-alive connection, and
	// every 50 calls a new client on a new connection (with the SDK's
	// retries: a new connection competes with the attacker's).
	var worst, worstNew time.Duration
	newCalls := 0
	for i := 0; opened.Load() < int64(*slowConns) || i < 20; i++ {
		start := time.Now()
		if _, err := c.ListTable(); err != nil {
			t.Fatalf("honest ListTable %d during the attack: %v", i, err)
		}
		worst = max(worst, time.Since(start))
		if i%50 == 0 {
			start := time.Now()
			fresh := tablestore.NewClient(srv.Endpoint(), srv.InstanceName(), srv.AccessKeyID(), srv.AccessKeySecret())
			if _, err := fresh.ListTable(); err != nil {
				t.Fatalf("new client's ListTable during the attack: %v", err)
			}
			worstNew = max(worstNew, time.Since(start))
			newCalls++
		}
		if i > 100000 {
			break
		}
	}
	serverConns := srv.lim.open()
	fds := countFDs(t) - fd0
	close(stop)
	wg.Wait()
	t.Logf("%d slow connections: server holds %d (cap %d); process fds +%d (client side included); slowest honest call %v, slowest of %d on a new connection %v",
		opened.Load(), serverConns, maxConns, fds, worst.Round(time.Millisecond), newCalls, worstNew.Round(time.Millisecond))
	if serverConns > maxConns {
		t.Errorf("server holds %d connections, cap %d", serverConns, maxConns)
	}
	if lim := int(opened.Load()) + maxConns + 64; fds > lim {
		t.Errorf("process fds grew by %d, more than the client's %d plus the cap", fds, opened.Load())
	}
	if worst > 3*time.Second || worstNew > 5*time.Second {
		t.Errorf("an honest call took %v (on a new connection %v) during the attack", worst, worstNew)
	}
}

// zeros is a body of n zero bytes made as it is read.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n)
	clear(p[:k])
	z.n -= k
	return int(k), nil
}

// rssBytes returns the process's resident set size.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// memPeak is the peak RSS and Go heap in use seen by a sampler.
type memPeak struct{ rss, heap int64 }

func memNow(t *testing.T) memPeak {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memPeak{rssBytes(t), int64(ms.HeapInuse)}
}

// samplePeak samples the memory until stop is closed and returns the peaks.
func samplePeak(t *testing.T, stop <-chan struct{}) <-chan memPeak {
	out := make(chan memPeak, 1)
	go func() {
		peak := memNow(t)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				m := memNow(t)
				out <- memPeak{max(peak.rss, m.rss), max(peak.heap, m.heap)}
				return
			case <-tick.C:
				m := memNow(t)
				peak = memPeak{max(peak.rss, m.rss), max(peak.heap, m.heap)}
			}
		}
	}()
	return out
}

// TestProbeLargeBodies is the probe "256 concurrent 5 MiB bodies with a
// bad signature took the server from 13 MB to 1.49 GB RSS": such bodies
// are refused from their headers, unread; with a good signature they wait
// for their share of Options.BodyMemory. The server reads little of the
// refused bodies, and the heap and (without the race detector, whose
// shadow memory grows with every goroutine) the RSS stay bounded.
func TestProbeLargeBodies(t *testing.T) {
	const bodyMem = 16 << 20
	srv, _ := listenEnv(t, Options{BodyMemory: bodyMem})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}, Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	body := make([]byte, MaxBodySize)
	sum := md5.Sum(body)
	md5b64 := base64.StdEncoding.EncodeToString(sum[:])
	for _, tc := range []struct {
		name     string
		secret   string
		n        int
		status   int
		heap     int64 // bound on the heap's growth
		readEach int64 // bound on the bytes the server reads per request
	}{
		{"BadSignature", "wrong", nBodies(), 403, 32 << 20, 512 << 10},
		// Read in full, then refused by the handler (not a protobuf row).
		{"GoodSignature", srv.AccessKeySecret(), max(nBodies()/16, 4), 400, 2*bodyMem + 32<<20, MaxBodySize + 64<<10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			base := memNow(t)
			read0 := srv.lim.bytesRead.Load()
			stop := make(chan struct{})
			peak := samplePeak(t, stop)
			var wg sync.WaitGroup
			var mu sync.Mutex
			statuses := map[string]int{}
			start := time.Now()
			for range tc.n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := signedRequest(t, srv, "PutRow", nil, tc.secret)
					r.Header.Set("x-ots-contentmd5", md5b64)
					sign(t, r, tc.secret)
					r.Body = io.NopCloser(&zeros{MaxBodySize})
					r.ContentLength = MaxBodySize
					key := ""
					resp, err := hc.Do(r)
					if err != nil {
						key = "error" // the server answered and closed while the body was being sent
					} else {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						key = strconv.Itoa(resp.StatusCode)
						if tc.status == 403 && resp.Header.Get("authorization") != "" {
							key += " signed"
						}
					}
					mu.Lock()
					statuses[key]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			close(stop)
			p := <-peak
			read := srv.lim.bytesRead.Load() - read0
			t.Logf("%d concurrent 5 MiB bodies in %v: answers %v; server read %d MiB; RSS %d MiB -> peak +%d MiB; heap %d MiB -> peak +%d MiB (race detector: %v)",
				tc.n, time.Since(start).Round(time.Millisecond), statuses, read>>20,
				base.rss>>20, (p.rss-base.rss)>>20, base.heap>>20, (p.heap-base.heap)>>20, raceEnabled)
			if statuses[strconv.Itoa(tc.status)] == 0 {
				t.Errorf("no %d answer: %v", tc.status, statuses)
			}
			for k := range statuses {
				if k != strconv.Itoa(tc.status) && k != "error" {
					t.Errorf("unexpected answers %q: %v", k, statuses)
				}
			}
			if lim := int64(tc.n) * tc.readEach; read > lim {
				t.Errorf("the server read %d MiB, bound %d MiB", read>>20, lim>>20)
			}
			if grew := p.heap - base.heap; grew > tc.heap {
				t.Errorf("heap grew by %d MiB, bound %d MiB", grew>>20, tc.heap>>20)
			}
			if grew := p.rss - base.rss; !raceEnabled && grew > tc.heap+32<<20 {
				t.Errorf("RSS grew by %d MiB, bound %d MiB", grew>>20, (tc.heap+32<<20)>>20)
			}
		})
	}
}

// TestDateSkew: x-ots-date more than 15 minutes from the server's clock is
// refused with the service's message and no response signature.
func TestDateSkew(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		off time.Duration
		ok  bool
	}{{-16 * time.Minute, false}, {16 * time.Minute, false}, {-14 * time.Minute, true}, {14 * time.Minute, true}} {
		r := signedRequest(t, e.srv, "ListTable", nil, e.srv.AccessKeySecret())
		d := time.Now().Add(tc.off).UTC().Format("2006-01-02T15:04:05.000Z")
		r.Header.Set("x-ots-date", d)
		sign(t, r, e.srv.AccessKeySecret())
		got := do(t, e.srv, r)
		if tc.ok {
			if got.status != 200 {
				t.Errorf("skew %v: status %d %v", tc.off, got.status, got.err)
			}
			continue
		}
		got.want(t, 403, "OTSAuthFailed", "Mismatch between system time and x-ots-date: "+d+".")
		if a := got.header.Get("authorization"); a != "" {
			t.Errorf("skew %v: refused answer signed: %q", tc.off, a)
		}
	}
}

// captureTransport records the requests the SDK sends, bodies included.
type captureTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []*http.Request
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	cp := r.Clone(r.Context())
	cp.Body = io.NopCloser(bytes.NewReader(b))
	c.mu.Lock()
	c.reqs = append(c.reqs, cp)
	c.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(b))
	return c.next.RoundTrip(r)
}

// TestReplayRefused is the probe "a replayed PutRow overwrote a newer
// value": a captured signed request replays within 15 minutes (as on the
// service) but not later.
func TestReplayRefused(t *testing.T) {
	e := newEnv(t)
	e.createTable("t", 1, pkDef{"k", tablestore.PrimaryKeyType_STRING})
	ct := &captureTransport{next: e.srv.Transport()}
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.Transport = ct
	spy := tablestore.NewClientWithConfig(e.srv.Endpoint(), e.srv.InstanceName(), e.srv.AccessKeyID(), e.srv.AccessKeySecret(), "", cfg)
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", "a")}
	ch.AddColumn("v", "old")
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := spy.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatal(err)
	}
	captured := ct.reqs[len(ct.reqs)-1]
	body, _ := io.ReadAll(captured.Body)
	replay := func() rawResp {
		r := captured.Clone(context.Background())
		r.Body = io.NopCloser(bytes.NewReader(body))
		return do(t, e.srv, r)
	}
	e.clock.Advance(time.Second)
	e.put("t", pk("k", "a"), "v", "new")
	if got := replay(); got.status != 200 { // within the window: the service takes it too
		t.Fatalf("replay within 15 minutes: %d %v", got.status, got.err)
	}
	e.clock.Advance(time.Second)
	e.put("t", pk("k", "a"), "v", "new")
	e.srv.wallNow = func() time.Time { return time.Now().Add(16 * time.Minute) }
	got := replay()
	e.srv.wallNow = time.Now
	got.want(t, 403, "OTSAuthFailed", "Mismatch between system time and x-ots-date: "+captured.Header.Get("x-ots-date")+".")
	if v := colMap(e.get("t", pk("k", "a"), 1).Columns)["v"]; len(v) != 1 || v[0] != "new" {
		t.Fatalf("after the refused replay v = %v, want [new]", v)
	}
}

// TestNoCredentialsInAuthFailures: a request that fails authentication
// gets nothing about the server's credentials back.
func TestNoCredentialsInAuthFailures(t *testing.T) {
	srv, err := NewServer(mem(Options{NoListen: true, AccessKeyID: "AKID-distinctive-7731", AccessKeySecret: "SECRET-distinctive-9931"}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cases := map[string]func(r *http.Request){
		"WrongSecret": func(r *http.Request) { sign(t, r, "nope") },
		"WrongID": func(r *http.Request) {
			r.Header.Set("x-ots-accesskeyid", "someone")
			sign(t, r, srv.AccessKeySecret())
		},
		"WrongInstance": func(r *http.Request) {
			r.Header.Set("x-ots-instancename", "other")
			sign(t, r, srv.AccessKeySecret())
		},
		"MissingHeader": func(r *http.Request) { r.Header.Del("x-ots-apiversion") },
		"OldDate": func(r *http.Request) {
			r.Header.Set("x-ots-date", time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"))
			sign(t, r, srv.AccessKeySecret())
		},
	}
	for name, mutate := range cases {
		r := signedRequest(t, srv, "ListTable", nil, srv.AccessKeySecret())
		mutate(r)
		got := do(t, srv, r)
		if got.status/100 != 4 {
			t.Errorf("%s: status %d", name, got.status)
		}
		var all bytes.Buffer
		got.header.Write(&all)
		all.Write(got.body)
		for _, secret := range []string{"AKID-distinctive-7731", "SECRET-distinctive-9931"} {
			if bytes.Contains(all.Bytes(), []byte(secret)) {
				t.Errorf("%s: the answer contains %q:\n%s", name, secret, all.String())
			}
		}
		if a := got.header.Get("authorization"); a != "" {
			t.Errorf("%s: authorization header %q", name, a)
		}
	}
	// An authenticated answer is still signed for the SDKs that check.
	if got := do(t, srv, signedRequest(t, srv, "ListTable", nil, srv.AccessKeySecret())); !strings.HasPrefix(got.header.Get("authorization"), "OTS AKID-distinctive-7731:") {
		t.Errorf("authenticated answer: authorization %q", got.header.Get("authorization"))
	}
}

// TestGracefulClose: Close lets a request in flight finish.
func TestGracefulClose(t *testing.T) {
	srv, err := NewServer(mem(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("\x0a\x01t") // DescribeTable "t"
	c := dial(t, srv)
	head := rawHead(t, srv, "DescribeTable", body, srv.AccessKeySecret())
	if _, err := c.Write(append(head, body[:1]...)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the server is reading the body
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	time.Sleep(200 * time.Millisecond)
	select {
	case <-closed:
		t.Fatal("Close returned with a request in flight")
	default:
	}
	if _, err := c.Write(body[1:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the in-flight request got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("status %d, want 404 (no table t)", resp.StatusCode)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the request finished")
	}
}
