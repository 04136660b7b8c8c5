package tsemu

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit"
)

// adjClock is the server's clock: the configured clock plus an offset the
// admin endpoint sets, so TTL and the version window follow it.
type adjClock struct {
	base   tablekit.Clock
	offset atomic.Int64 // nanoseconds
}

func (c *adjClock) Now() time.Time { return c.base.Now().Add(time.Duration(c.offset.Load())) }

// Now returns the server's current time: Options.Clock plus whatever the
// admin endpoint set or advanced.
func (s *Server) Now() time.Time { return s.clock.Now() }

// SetClock makes the server's clock read t now and run on from there.
// Versions written without one, TTL and the version window follow it; the
// x-ots-date skew rule keeps using the wall clock. The clock runs at most
// about 292 years (the largest time.Duration) from Options.Clock: a t
// beyond that is clamped to it.
func (s *Server) SetClock(t time.Time) {
	s.adj.offset.Store(int64(t.Sub(s.adj.base.Now())))
}

// AdvanceClock moves the server's clock by d (negative moves it back). An
// advance past the range of SetClock stops at its end: the clock never
// wraps around.
func (s *Server) AdvanceClock(d time.Duration) {
	for {
		old := s.adj.offset.Load()
		next, _ := addOffset(old, int64(d))
		if s.adj.offset.CompareAndSwap(old, next) {
			return
		}
	}
}

// addOffset adds two clock offsets, clamped to the int64 range; ok is
// false when it clamped.
func addOffset(a, b int64) (sum int64, ok bool) {
	sum = a + b
	switch {
	case b > 0 && sum < a:
		return math.MaxInt64, false
	case b < 0 && sum > a:
		return math.MinInt64, false
	}
	return sum, true
}

// setOffset is SetClock for the admin endpoint: a t outside the clock's
// range is refused instead of clamped.
func (s *Server) setOffset(t time.Time) error {
	d := t.Sub(s.adj.base.Now())
	if d == math.MaxInt64 || d == math.MinInt64 {
		return fmt.Errorf("set: %s is more than %v from the base clock, beyond the server clock's range", t.Format(time.RFC3339), time.Duration(math.MaxInt64))
	}
	s.adj.offset.Store(int64(d))
	return nil
}

// advanceOffset is AdvanceClock for the admin endpoint: an advance past
// the clock's range is refused instead of clamped.
func (s *Server) advanceOffset(d time.Duration) error {
	for {
		old := s.adj.offset.Load()
		next, ok := addOffset(old, int64(d))
		if !ok || next == math.MaxInt64 || next == math.MinInt64 {
			return fmt.Errorf("advance: %v from offset %v is beyond the server clock's range (%v either way from the base clock)", d, time.Duration(old), time.Duration(math.MaxInt64))
		}
		if s.adj.offset.CompareAndSwap(old, next) {
			return nil
		}
	}
}

// Reset deletes every table and its rows. It returns the number of
// tables deleted.
func (s *Server) Reset(ctx context.Context) (int, error) {
	names, err := s.client.ListTables(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if err := s.client.DeleteTable(ctx, name); err != nil && !errors.Is(err, tablekit.ErrTableNotFound) {
			return n, err
		}
		n++
		s.endTableTxns(name)
		s.mu.Lock()
		delete(s.extras, name)
		s.mu.Unlock()
	}
	return n, s.saveMeta()
}

// Fault makes a share of the calls of one operation fail with a
// retryable service error instead of running, as the service does under
// load. The request is not executed.
type Fault struct {
	// Operation is the API call ("PutRow", "GetRange", ...) or "*" for
	// every call.
	Operation string `json:"operation"`
	// Code is one of OTSServerBusy, OTSQuotaExhausted, OTSTimeout,
	// OTSServerUnavailable.
	Code string `json:"code"`
	// Rate is the probability, in [0, 1], that a call fails.
	Rate float64 `json:"rate"`
	// Seed seeds the fault's random choices: the same seed and calls give
	// the same failures.
	Seed uint64 `json:"seed"`
}

// faultErrors are the injectable errors, with the service's status and
// message.
var faultErrors = map[string]*otsError{
	"OTSServerBusy":        {status: 503, code: "OTSServerBusy", msg: "Server is busy."},
	"OTSQuotaExhausted":    {status: 403, code: "OTSQuotaExhausted", msg: "Too frequent table operations."},
	"OTSTimeout":           {status: 503, code: "OTSTimeout", msg: "Operation timeout."},
	"OTSServerUnavailable": {status: 503, code: "OTSServerUnavailable", msg: "Server is not available."},
}

type fault struct {
	Fault
	err *otsError
	mu  sync.Mutex
	rnd *rand.Rand
}

// faultSet holds the faults by operation.
type faultSet struct {
	mu sync.Mutex
	m  map[string]*fault
}

// SetFault installs f, replacing any fault of the same operation; a Rate
// of 0 removes it.
func (s *Server) SetFault(f Fault) error {
	e, ok := faultErrors[f.Code]
	if !ok {
		codes := make([]string, 0, len(faultErrors))
		for c := range faultErrors {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "tsemu: fault code %q is not one of %s", f.Code, strings.Join(codes, ", "))
	}
	if _, ok := operations[f.Operation]; !ok && f.Operation != "*" {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "tsemu: fault operation %q is not an operation of the emulator (or \"*\")", f.Operation)
	}
	if !(f.Rate >= 0 && f.Rate <= 1) {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "tsemu: fault rate %v is not in [0, 1]", f.Rate)
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if s.faults.m == nil {
		s.faults.m = map[string]*fault{}
	}
	if f.Rate == 0 {
		delete(s.faults.m, f.Operation)
		return nil
	}
	s.faults.m[f.Operation] = &fault{Fault: f, err: e, rnd: rand.New(rand.NewPCG(f.Seed, 0x7473746573742e66))}
	return nil
}

// Faults returns the installed faults, by operation.
func (s *Server) Faults() []Fault {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	out := make([]Fault, 0, len(s.faults.m))
	for _, f := range s.faults.m {
		out = append(out, f.Fault)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Operation < out[j].Operation })
	return out
}

// ClearFaults removes every fault.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	s.faults.m = nil
	s.faults.mu.Unlock()
}

// inject returns the error to answer op with, or nil to run it.
func (fs *faultSet) inject(op string) *otsError {
	fs.mu.Lock()
	f := fs.m[op]
	if f == nil {
		f = fs.m["*"]
	}
	fs.mu.Unlock()
	if f == nil {
		return nil
	}
	f.mu.Lock()
	hit := f.rnd.Float64() < f.Rate
	f.mu.Unlock()
	if hit {
		return f.err
	}
	return nil
}

// MinAdminTokenLen is the shortest admin token accepted: NewServer
// refuses a shorter Options.AdminToken, and AdminHandler with a shorter
// token refuses every request.
const MinAdminTokenLen = 16

// Admin endpoint limits: token checks, at most adminGuessBurst at once and
// adminGuessRate per second after that (a request with a wrong token uses
// one up, a right one gives it back), and the connections its listener
// keeps open (see connLimiter).
const (
	adminGuessRate  = 10
	adminGuessBurst = 10
	adminMaxConns   = 32
)

// AdminHandler returns the test-control API, which requires the header
// "Authorization: Bearer <token>" (token at least MinAdminTokenLen
// characters). Token checks are throttled: past a burst of wrong tokens,
// requests get 429 (with Retry-After) without their token being checked,
// about 10 a second being checked again. All bodies are JSON; see the
// README's emulator section for curl examples.
//
//	GET    /admin/v1/clock   {"now": RFC 3339 time, "offset": Go duration}
//	POST   /admin/v1/clock   {"set": RFC 3339 time} or {"advance": Go duration} or {"reset": true}
//	POST   /admin/v1/reset   deletes every table: {"tables_deleted": n}
//	GET    /admin/v1/faults  [Fault, ...]
//	POST   /admin/v1/faults  Fault (rate 0 removes the operation's fault)
//	DELETE /admin/v1/faults  removes every fault
//
// Errors are {"error": message} with status 400, 401, 429 or 500.
func (s *Server) AdminHandler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/v1/clock", s.adminClock)
	mux.HandleFunc("POST /admin/v1/clock", s.adminClock)
	mux.HandleFunc("POST /admin/v1/reset", func(w http.ResponseWriter, r *http.Request) {
		n, err := s.Reset(r.Context())
		if err != nil {
			adminJSON(w, 500, map[string]string{"error": err.Error()})
			return
		}
		adminJSON(w, 200, map[string]int{"tables_deleted": n})
	})
	mux.HandleFunc("GET /admin/v1/faults", func(w http.ResponseWriter, r *http.Request) {
		adminJSON(w, 200, s.Faults())
	})
	mux.HandleFunc("POST /admin/v1/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		if !adminDecode(w, r, &f) {
			return
		}
		if err := s.SetFault(f); err != nil {
			adminJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
		adminJSON(w, 200, s.Faults())
	})
	mux.HandleFunc("DELETE /admin/v1/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		adminJSON(w, 200, s.Faults())
	})
	want := []byte("Bearer " + token)
	guesses := &tokenBucket{rate: adminGuessRate, burst: adminGuessBurst}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(token) < MinAdminTokenLen {
			adminJSON(w, 401, map[string]string{"error": fmt.Sprintf("the admin token is shorter than %d characters: the admin endpoint refuses every request", MinAdminTokenLen)})
			return
		}
		// Take a check before checking, so that concurrent guesses are
		// throttled too; a right token gives it back.
		if !guesses.take() {
			w.Header().Set("Retry-After", "1")
			adminJSON(w, 429, map[string]string{"error": "too many wrong admin tokens: retry later"})
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			adminJSON(w, 401, map[string]string{"error": "missing or wrong admin token"})
			return
		}
		guesses.giveBack()
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) adminClock(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var req struct {
			Set     *time.Time `json:"set"`
			Advance string     `json:"advance"`
			Reset   bool       `json:"reset"`
		}
		if !adminDecode(w, r, &req) {
			return
		}
		n := 0
		for _, b := range []bool{req.Set != nil, req.Advance != "", req.Reset} {
			if b {
				n++
			}
		}
		if n != 1 {
			adminJSON(w, 400, map[string]string{"error": `give exactly one of "set", "advance", "reset"`})
			return
		}
		var err error
		switch {
		case req.Set != nil:
			err = s.setOffset(*req.Set)
		case req.Reset:
			s.adj.offset.Store(0)
		default:
			var d time.Duration
			if d, err = time.ParseDuration(req.Advance); err != nil {
				err = fmt.Errorf("advance: %v", err)
			} else {
				err = s.advanceOffset(d)
			}
		}
		if err != nil {
			adminJSON(w, 400, map[string]string{"error": err.Error()})
			return
		}
	}
	adminJSON(w, 200, map[string]string{
		"now":    s.Now().UTC().Format(time.RFC3339Nano),
		"offset": time.Duration(s.adj.offset.Load()).String(),
	})
}

func adminDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		adminJSON(w, 400, map[string]string{"error": "bad JSON body: " + err.Error()})
		return false
	}
	return true
}

func adminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// tokenBucket allows burst events at once and rate per second after that.
type tokenBucket struct {
	rate, burst float64
	mu          sync.Mutex
	tokens      float64
	last        time.Time
}

func (b *tokenBucket) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.last.IsZero() {
		b.tokens = b.burst
	} else {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *tokenBucket) giveBack() {
	b.mu.Lock()
	b.tokens = min(b.burst, b.tokens+1)
	b.mu.Unlock()
}

// adminServer is the admin endpoint's own listener and HTTP server.
type adminServer struct {
	ln   net.Listener
	lim  *connLimiter
	hs   *http.Server
	done chan struct{}
}

// adminListenAddr checks the admin address: its host must be a loopback
// address or "localhost" unless allowRemote; an empty host means
// 127.0.0.1.
func adminListenAddr(addr string, allowRemote bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("tsemu: AdminAddr %q: %w", addr, err)
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port), nil
	}
	if ip := net.ParseIP(host); !allowRemote && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("tsemu: AdminAddr %s is not a loopback address: the admin endpoint controls the server's clock and data, so it listens on loopback unless AdminAllowRemote is set", addr)
	}
	return addr, nil
}

// checkAdminOptions checks the admin endpoint's options and resolves its
// address.
func checkAdminOptions(opts *Options) error {
	switch {
	case opts.AdminToken == "":
		return fmt.Errorf("tsemu: AdminAddr %s needs an AdminToken", opts.AdminAddr)
	case len(opts.AdminToken) < MinAdminTokenLen:
		return fmt.Errorf("tsemu: the AdminToken has %d characters; the admin endpoint needs at least %d", len(opts.AdminToken), MinAdminTokenLen)
	}
	addr, err := adminListenAddr(opts.AdminAddr, opts.AdminAllowRemote)
	opts.AdminAddr = addr
	return err
}

func startAdmin(s *Server, addr, token string) (*adminServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tsemu: admin listen on %s: %w", addr, err)
	}
	lim := newConnLimiter(ln, adminMaxConns)
	h := s.AdminHandler(token)
	a := &adminServer{ln: ln, lim: lim, done: make(chan struct{}), hs: &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer markServing(r)()
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ConnState:         lim.connState,
		ConnContext:       connContext,
		ErrorLog:          log.New(io.Discard, "", 0),
	}}
	go func() { a.hs.Serve(lim); close(a.done) }()
	return a, nil
}

func (a *adminServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if a.hs.Shutdown(ctx) != nil {
		a.hs.Close()
	}
	<-a.done
}

// AdminEndpoint returns the admin endpoint's URL ("http://host:port"), or
// "" when Options.AdminAddr was empty.
func (s *Server) AdminEndpoint() string {
	if s.admin == nil {
		return ""
	}
	return "http://" + s.admin.ln.Addr().String()
}
