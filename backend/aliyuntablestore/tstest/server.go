package tstest

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"

	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/common"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// Default credentials and instance, used when Options leaves them empty.
const (
	DefaultInstanceName    = "tstest"
	DefaultAccessKeyID     = "tstest-access-key-id"
	DefaultAccessKeySecret = "tstest-access-key-secret"
)

// MaxBodySize is the largest request body the server accepts (Tablestore's
// documented HTTP limit); larger bodies get 413 OTSRequestBodyTooLarge.
const MaxBodySize = 5 << 20

// Options configure a Server. The zero Options is a working server on a
// free loopback port with the default credentials and a fresh local engine.
type Options struct {
	// Addr is the TCP address to listen on; default "127.0.0.1:0" (a free
	// loopback port).
	Addr string
	// NoListen makes NewServer open no socket: use Handler or Transport
	// in process. Endpoint then returns a placeholder URL.
	NoListen bool
	// Clock is the server's clock: versions written without one, the
	// version window and TTL follow it. Default: the system clock.
	Clock tablekit.Clock
	// InstanceName is the instance requests must name in
	// x-ots-instancename; default DefaultInstanceName.
	InstanceName string
	// AccessKeyID and AccessKeySecret are the only credentials the server
	// accepts: requests must carry the ID and be signed with the secret.
	// Defaults: DefaultAccessKeyID, DefaultAccessKeySecret.
	AccessKeyID     string
	AccessKeySecret string
	// Backend stores the tables; default a new localengine.Engine, which
	// the server closes on Close. A Backend given here is not closed.
	Backend tablekit.Backend
}

// Server is a Tablestore-wire-compatible test server. It is safe for
// concurrent use.
type Server struct {
	opts     Options
	ownsB    bool
	backend  tablekit.Backend
	client   *tablekit.Client
	clock    tablekit.Clock
	ln       net.Listener
	hs       *http.Server
	serveErr chan error
	endpoint string

	reqSeq atomic.Uint64
	reqPfx string

	mu     sync.Mutex
	extras map[string]*tableExtra // per-table state the Backend does not keep

	closeOnce sync.Once
}

// tableExtra holds what Tablestore reports about a table that tablekit does
// not model: reserved throughput, defined columns, creation time.
type tableExtra struct {
	readCU, writeCU int32
	lastIncrease    int64 // seconds
	definedColumns  []definedColumn
	created         int64 // microseconds
}

type definedColumn struct {
	name string
	typ  int32
}

// NewServer starts a server. Unless opts.NoListen is set it listens on
// opts.Addr (default a free loopback port) and serves until Close.
func NewServer(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Clock == nil {
		opts.Clock = tablekit.SystemClock{}
	}
	if opts.InstanceName == "" {
		opts.InstanceName = DefaultInstanceName
	}
	if opts.AccessKeyID == "" {
		opts.AccessKeyID = DefaultAccessKeyID
	}
	if opts.AccessKeySecret == "" {
		opts.AccessKeySecret = DefaultAccessKeySecret
	}
	s := &Server{opts: opts, clock: opts.Clock, extras: map[string]*tableExtra{}}
	if opts.Backend == nil {
		s.backend = localengine.New()
		s.ownsB = true
	} else {
		s.backend = opts.Backend
	}
	// Every request re-reads the table's meta through this client, so its
	// cache is refreshed at each use and a shared Backend is honoured.
	s.client = tablekit.NewClient(s.backend, tablekit.WithClock(opts.Clock))
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	s.reqPfx = fmt.Sprintf("%x-%x-%x", rnd[:4], rnd[4:6], time.Now().Unix()&0xffff)
	if opts.NoListen {
		s.endpoint = "http://tstest.invalid"
		return s, nil
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		s.closeBackend()
		return nil, fmt.Errorf("tstest: listen on %s: %w", opts.Addr, err)
	}
	s.ln = ln
	s.endpoint = "http://" + ln.Addr().String()
	s.hs = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second}
	s.serveErr = make(chan error, 1)
	go func() { s.serveErr <- s.hs.Serve(ln) }()
	return s, nil
}

// Endpoint returns the URL to give the SDK, e.g. "http://127.0.0.1:41234".
func (s *Server) Endpoint() string { return s.endpoint }

// InstanceName returns the instance name requests must carry.
func (s *Server) InstanceName() string { return s.opts.InstanceName }

// AccessKeyID returns the access key ID requests must carry.
func (s *Server) AccessKeyID() string { return s.opts.AccessKeyID }

// AccessKeySecret returns the secret requests must be signed with.
func (s *Server) AccessKeySecret() string { return s.opts.AccessKeySecret }

// Handler returns the server's http.Handler, for use in process.
func (s *Server) Handler() http.Handler { return s }

// Transport returns an http.RoundTripper that serves every request with
// Handler, without a socket; give it to the SDK as TableStoreConfig.Transport.
func (s *Server) Transport() http.RoundTripper { return handlerTransport{s} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	// Read the body before the handler runs, as a real transport would.
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	in := r.Clone(r.Context())
	in.Body = io.NopCloser(bytes.NewReader(body))
	in.ContentLength = int64(len(body))
	in.RequestURI = r.URL.RequestURI()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// Close stops the server and waits for its goroutine. It closes the
// Backend only when the server created it. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if s.hs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := s.hs.Shutdown(ctx); err != nil {
				s.hs.Close()
			}
			cancel()
			<-s.serveErr
		}
		s.closeBackend()
	})
}

func (s *Server) closeBackend() {
	if s.ownsB {
		s.backend.Close()
	}
}

// operation is one handler of a Tablestore API call: it decodes body and
// returns the response message (nil for an empty body) or an error.
type operation func(s *Server, ctx context.Context, body []byte) (proto.Message, error)

var operations map[string]operation

func init() {
	operations = map[string]operation{
		"CreateTable":   (*Server).createTable,
		"ListTable":     (*Server).listTable,
		"DescribeTable": (*Server).describeTable,
		"UpdateTable":   (*Server).updateTable,
		"DeleteTable":   (*Server).deleteTable,
		"PutRow":        (*Server).putRow,
		"GetRow":        (*Server).getRow,
		"UpdateRow":     (*Server).updateRow,
		"DeleteRow":     (*Server).deleteRow,
		"BatchGetRow":   (*Server).batchGetRow,
		"BatchWriteRow": (*Server).batchWriteRow,
		"GetRange":      (*Server).getRange,
	}
}

// ServeHTTP serves one Tablestore API call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, oerr := s.admit(r)
	if oerr != nil {
		s.writeError(w, r, oerr)
		return
	}
	op := strings.TrimPrefix(r.URL.Path, "/")
	resp, err := s.dispatch(r.Context(), op, body)
	if err != nil {
		s.writeError(w, r, toOTS(err))
		return
	}
	var out []byte
	if resp != nil {
		out, err = proto.Marshal(resp)
		if err != nil {
			s.writeError(w, r, internalError("marshal response: %v", err))
			return
		}
	}
	s.write(w, r, http.StatusOK, out)
}

// dispatch runs op; a panic in a handler becomes a 500 instead of killing
// the server (the fuzz test makes sure there are none).
func (s *Server) dispatch(ctx context.Context, op string, body []byte) (resp proto.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, internalError("panic serving %s: %v", op, p)
		}
	}()
	return operations[op](s, ctx, body)
}

var headersRequired = []string{
	"x-ots-date", "x-ots-apiversion", "x-ots-accesskeyid", "x-ots-instancename", "x-ots-contentmd5",
}

// admit applies Tablestore's transport checks in its order: method,
// operation, headers, date format, credentials, body MD5, signature. It
// returns the body.
func (s *Server) admit(r *http.Request) ([]byte, *otsError) {
	if r.Method != http.MethodPost {
		return nil, &otsError{status: 405, code: "OTSMethodNotAllowed", msg: "Only POST method for requests is supported."}
	}
	op := strings.TrimPrefix(r.URL.Path, "/")
	if _, ok := operations[op]; !ok {
		return nil, &otsError{status: 400, code: "OTSUnsupportOperation", msg: fmt.Sprintf("Unsupported operation: '%s'.", op)}
	}
	h := r.Header
	for _, name := range headersRequired {
		if h.Get(name) == "" {
			return nil, paramErr("Missing header: %s.", name)
		}
	}
	v4 := h.Get("x-ots-signaturev4") != ""
	if v4 {
		for _, name := range []string{"x-ots-signregion", "x-ots-signdate"} {
			if h.Get(name) == "" {
				return nil, paramErr("Missing header: %s.", name)
			}
		}
	} else if h.Get("x-ots-signature") == "" {
		return nil, paramErr("Missing header: %s.", "x-ots-signature")
	}
	if d := h.Get("x-ots-date"); !validDate(d) {
		return nil, paramErr("Invalid date format: %s.", d)
	}
	if h.Get("x-ots-accesskeyid") != s.opts.AccessKeyID {
		return nil, authErr("The AccessKeyID does not exist.")
	}
	if h.Get("x-ots-instancename") != s.opts.InstanceName {
		return nil, authErr("The instance is not found.")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodySize+1))
	if err != nil {
		return nil, &otsError{status: 400, code: "OTSParameterInvalid", msg: "Failed to read the request body."}
	}
	if len(body) > MaxBodySize {
		return nil, &otsError{status: 413, code: "OTSRequestBodyTooLarge", msg: "The size of POST data is too large."}
	}
	sum := md5.Sum(body)
	if h.Get("x-ots-contentmd5") != base64.StdEncoding.EncodeToString(sum[:]) {
		return nil, authErr("Mismatch between MD5 value of request body and x-ots-contentmd5 in header.")
	}
	if !s.signatureOK(r.URL.Path, h, v4) {
		return nil, authErr("Signature mismatch.")
	}
	return body, nil
}

// The Go SDK formats x-ots-date with the layout "2006-01-02T15:04:05.123Z",
// which Go reads as month/day/hour after the dot, so the "fraction" has a
// varying number of digits. Other SDKs send ISO 8601 with a real fraction,
// old ones RFC 1123. The server checks the shape, not the skew.
var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$`)

func validDate(d string) bool {
	if isoDate.MatchString(d) {
		return true
	}
	_, err := http.ParseTime(d)
	return err == nil
}

// signatureOK recomputes the request signature with the SDK's own
// tablestore.GetSignature (V2: HMAC-SHA1 with the secret; V4: HMAC-SHA256
// with the key derived from the secret, sign date and region).
func (s *Server) signatureOK(uri string, h http.Header, v4 bool) bool {
	hdr := h.Clone()
	hdr.Del("x-ots-signature")
	hdr.Del("x-ots-signaturev4")
	var creds common.Credentials
	got := h.Get("x-ots-signature")
	if v4 {
		got = h.Get("x-ots-signaturev4")
		date, region := h.Get("x-ots-signdate"), h.Get("x-ots-signregion")
		creds = &common.V4CredentialsSnapshot{
			AccessKeyID:        s.opts.AccessKeyID,
			Region:             region,
			SigningDate:        date,
			V4SigningAccessKey: common.FinalSigningKeyString(s.opts.AccessKeySecret, date, region, "ots", "HmacSHA256"),
		}
	} else {
		creds = &common.DefaultCredentials{AccessKeyID: s.opts.AccessKeyID, AccessKeySecret: s.opts.AccessKeySecret}
	}
	want, err := tablestore.GetSignature(uri, http.MethodPost, creds, hdr)
	if err != nil {
		return false
	}
	return hmac.Equal([]byte(want), []byte(got))
}

func (s *Server) requestID() string {
	return fmt.Sprintf("%s-%012x", s.reqPfx, s.reqSeq.Add(1))
}

// write sends a response with the headers real Tablestore sends: request
// id, body MD5, date, content type, and a response signature
// ("authorization: OTS id:sig") that the Python and Java SDKs verify.
func (s *Server) write(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	sum := md5.Sum(body)
	h := w.Header()
	xots := map[string]string{
		"x-ots-requestid":   s.requestID(),
		"x-ots-contentmd5":  base64.StdEncoding.EncodeToString(sum[:]),
		"x-ots-date":        time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		"x-ots-contenttype": "protocol buffer",
	}
	names := make([]string, 0, len(xots))
	for k, v := range xots {
		h.Set(k, v)
		names = append(names, k+":"+strings.TrimSpace(v))
	}
	sort.Strings(names)
	mac := hmac.New(sha1.New, []byte(s.opts.AccessKeySecret))
	io.WriteString(mac, strings.Join(names, "\n")+"\n"+r.URL.Path)
	h.Set("authorization", "OTS "+s.opts.AccessKeyID+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	h.Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(status)
	w.Write(body)
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, e *otsError) {
	b, err := proto.Marshal(e.proto())
	if err != nil {
		b = nil
	}
	s.write(w, r, e.status, b)
}

// errNoTable is returned when an operation names a missing table.
var errNoTable = &otsError{status: 404, code: "OTSObjectNotExist", msg: "Requested table does not exist."}

var errParse = &otsError{status: 400, code: "OTSParameterInvalid", msg: "Failed to parse the ProtoBuf message."}

// unmarshal decodes a request; any failure (including a missing required
// field) is Tablestore's parse error.
func unmarshal(body []byte, m proto.Message) error {
	if err := proto.Unmarshal(body, m); err != nil {
		return errParse
	}
	return nil
}
