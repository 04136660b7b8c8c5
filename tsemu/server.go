package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"

	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/common"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/golang/protobuf/proto"
	"golang.org/x/sync/semaphore"

	"github.com/tablekit/tablekit"
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

// Options configure a Server. Backend is required; with only Backend set,
// Options are a working server on a free loopback port with the default
// credentials.
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
	// Backend stores the tables; it is required (any tablekit Backend:
	// localengine.New() for memory, fileengine for a durable store, an
	// adapter for a cloud store). The server never closes it: close it
	// after Close.
	Backend tablekit.Backend

	// Network limits; zero means the Default* constant of the same name.
	// ReadTimeout bounds reading a whole request (a client trickling its
	// body is cut off), WriteTimeout the time from the end of the headers
	// to the end of the response, IdleTimeout a keep-alive connection's
	// idle time.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// StallTimeout bounds the time to receive each 64 KiB of a request
	// body (a request past it gets 408) and to send each 256 KiB of a
	// response (a client that does not read is cut off); default
	// DefaultStallTimeout.
	StallTimeout time.Duration
	// MaxConns caps the open connections (default DefaultMaxConns). At the
	// cap a new connection evicts the one that has waited longest for its
	// request to arrive, or else the longest idle; connections being
	// served are never evicted.
	MaxConns int
	// BodyMemory caps the bytes of request bodies held at once (default
	// DefaultBodyMemory, at least MaxBodySize), past the first 64 KiB of
	// each (bounded by MaxConns): room for the rest of a body is reserved
	// once those 64 KiB have arrived, waiting for it within ReadTimeout,
	// and held at most StallTimeout plus the rest at 1 MiB/s.
	BodyMemory int64
	// ResponseMemory caps the bytes of responses held at once (default
	// DefaultResponseMemory), past the first 256 KiB of each (bounded by
	// MaxConns): a read reserves room for its answer before encoding it,
	// waiting for it at most WriteTimeout (then OTSServerBusy), and holds
	// it until the answer is written; one larger than ResponseMemory
	// waits for all of it.
	ResponseMemory int64
	// MaxDateSkew is how far x-ots-date may be from the wall clock;
	// default MaxDateSkew (15 minutes, as the service); negative turns
	// the check off (to replay recorded requests).
	MaxDateSkew time.Duration
	// ShutdownTimeout is how long Close waits for requests in flight
	// before cutting them off; default 30 s.
	ShutdownTimeout time.Duration

	// AdminAddr, when not empty, starts the test-control endpoint (see
	// AdminHandler) on its own listener at this address, which must be a
	// loopback address (an empty host means 127.0.0.1) unless
	// AdminAllowRemote is set. AdminToken is the bearer token it
	// requires, at least MinAdminTokenLen characters; it must be set with
	// AdminAddr. The endpoint keeps at most 32 connections open.
	AdminAddr        string
	AdminToken       string
	AdminAllowRemote bool

	// TransactionTimeout is how long a local transaction may stay idle
	// before the server aborts it, on the server's clock (default
	// DefaultTransactionTimeout, the service's 60 s). MaxTransactions caps
	// the open local transactions (default DefaultMaxTransactions). See
	// transaction.go.
	TransactionTimeout time.Duration
	MaxTransactions    int

	// MetaFile, when set, keeps the per-table state the Backend does not
	// (reserved throughput, defined columns, creation time, secondary
	// indexes, a stream's times and columns_to_get): NewServer loads it, and every table-level call saves it
	// durably before it is answered. Give it with a durable Backend.
	MetaFile string

	// StreamWait is how long a GetStreamRecord of a caught-up shard waits
	// for a record when the Backend is a tablekit.FeedWaiter (see
	// streamwait.go); default DefaultStreamWait, negative: it answers at
	// once, as the service does.
	StreamWait time.Duration
}

// Server is a Tablestore-wire-compatible test server. It is safe for
// concurrent use.
type Server struct {
	opts     Options
	backend  tablekit.Backend
	client   *tablekit.Client
	clock    tablekit.Clock // the adjustable clock: opts.Clock plus the admin offset
	adj      *adjClock
	wallNow  func() time.Time // for the date-skew rule; tests replace it
	bodyMem  *semaphore.Weighted
	respMem  *semaphore.Weighted
	lim      *connLimiter
	faults   faultSet
	ln       net.Listener
	hs       *http.Server
	serveErr chan error
	endpoint string

	mu     sync.Mutex
	extras map[string]*tableExtra // per-table state the Backend does not keep

	admin *adminServer
	saver metaSaver

	txns txnRegistry // open local transactions (transaction.go)

	closeOnce sync.Once
	closing   chan struct{} // closed when Close starts (streamwait.go)
}

// tableExtra holds what Tablestore reports about a table that tablekit does
// not model: reserved throughput, defined columns, creation time.
type tableExtra struct {
	readCU, writeCU int32
	lastIncrease    int64 // seconds
	definedColumns  []definedColumn
	created         int64        // microseconds
	idx             tableIndexes // secondary indexes (index.go)
	stream          streamExtra  // Tablestore Stream (stream.go)
	// noUpdate is allow_update=false: UpdateRow is refused. fullRow is
	// update_full_row, taken at creation and reported (it serves search
	// index TTL and global tables, which the emulator has not: UpdateRow
	// changes the columns it names either way).
	noUpdate, fullRow bool
}

type definedColumn struct {
	name string
	typ  int32
}

// NewServer starts a server. Unless opts.NoListen is set it listens on
// opts.Addr (default a free loopback port) and serves until Close.
func NewServer(opts Options) (*Server, error) {
	opts.setDefaults()
	if opts.Backend == nil {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "tsemu: Options.Backend is nil: give the Backend to serve (localengine.New() for one in memory)")
	}
	if opts.AdminAddr != "" {
		if err := checkAdminOptions(&opts); err != nil {
			return nil, err
		}
	}
	adj := &adjClock{base: opts.Clock}
	s := &Server{opts: opts, backend: opts.Backend, clock: adj, adj: adj, wallNow: time.Now, extras: map[string]*tableExtra{}, closing: make(chan struct{}),
		bodyMem: semaphore.NewWeighted(opts.BodyMemory), respMem: semaphore.NewWeighted(opts.ResponseMemory)}
	if err := s.loadMeta(); err != nil {
		return nil, err
	}
	// Every request re-reads the table's meta through this client, so its
	// cache is refreshed at each use and a shared Backend is honoured.
	s.client = tablekit.NewClient(s.backend, tablekit.WithClock(s.clock))
	if opts.NoListen {
		s.endpoint = "http://tsemu.invalid"
		return s, nil
	}
	if err := s.listen(); err != nil {
		return nil, err
	}
	if opts.AdminAddr != "" {
		a, err := startAdmin(s, opts.AdminAddr, opts.AdminToken)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.admin = a
	}
	return s, nil
}

// setDefaults fills the options left zero with their defaults.
func (o *Options) setDefaults() {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Clock == nil {
		o.Clock = tablekit.SystemClock{}
	}
	if o.InstanceName == "" {
		o.InstanceName = DefaultInstanceName
	}
	if o.AccessKeyID == "" {
		o.AccessKeyID = DefaultAccessKeyID
	}
	if o.AccessKeySecret == "" {
		o.AccessKeySecret = DefaultAccessKeySecret
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.ResponseMemory <= 0 {
		o.ResponseMemory = DefaultResponseMemory
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.BodyMemory <= 0 {
		o.BodyMemory = DefaultBodyMemory
	}
	o.BodyMemory = max(o.BodyMemory, MaxBodySize)
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 30 * time.Second
	}
}

// listen starts serving on s.opts.Addr.
func (s *Server) listen() error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("tsemu: listen on %s: %w", s.opts.Addr, err)
	}
	s.lim = newConnLimiter(ln, s.opts.MaxConns)
	s.ln = s.lim
	s.endpoint = "http://" + ln.Addr().String()
	s.hs = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         s.lim.connState,
		ConnContext:       connContext,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	s.serveErr = make(chan error, 1)
	go func() { s.serveErr <- s.hs.Serve(s.ln) }()
	return nil
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

// Close stops the server: it stops accepting connections, lets the
// requests in flight finish (for up to Options.ShutdownTimeout) and waits
// for its goroutines. It does not close the Backend. Close is idempotent.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		if s.admin != nil {
			s.admin.close()
		}
		if s.hs != nil {
			ctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
			if err := s.hs.Shutdown(ctx); err != nil {
				s.hs.Close()
			}
			cancel()
			<-s.serveErr
		}
	})
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
		"CreateIndex":   (*Server).createIndex,
		"DropIndex":     (*Server).dropIndexOp,

		"AddDefinedColumn":         (*Server).addDefinedColumn,
		"DeleteDefinedColumn":      (*Server).deleteDefinedColumn,
		"ComputeSplitPointsBySize": (*Server).computeSplitPointsBySize,

		"StartLocalTransaction": (*Server).startLocalTransaction,
		"CommitTransaction":     (*Server).commitTransaction,
		"AbortTransaction":      (*Server).abortTransaction,
		"ListStream":            (*Server).listStream,
		"DescribeStream":        (*Server).describeStream,
		"GetShardIterator":      (*Server).getShardIterator,
		"GetStreamRecord":       (*Server).getStreamRecord,
	}
}

// ServeHTTP serves one Tablestore API call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hold := &respHold{start: time.Now()}
	defer s.releaseResponse(hold)
	r = r.WithContext(context.WithValue(r.Context(), respHoldKey{}, hold))
	body, authed, oerr := s.admit(w, r)
	if oerr != nil {
		if !authed {
			// Nothing about the credentials to a caller that failed
			// authentication: no response signature.
			s.writeUnsigned(w, oerr)
			return
		}
		s.writeError(w, r, oerr)
		return
	}
	defer markServing(r)()
	op := strings.TrimPrefix(r.URL.Path, "/")
	if oe := s.faults.inject(op); oe != nil {
		s.writeError(w, r, oe)
		return
	}
	resp, err := s.dispatch(r.Context(), op, body)
	if err == nil && tableOps[op] {
		if serr := s.saveMeta(); serr != nil {
			err = internalError("saving the table state: %v", serr)
		}
	}
	if err != nil {
		s.writeError(w, r, toOTS(err))
		return
	}
	var out []bodyPart
	if resp != nil {
		out, err = marshalResponse(hold, resp)
		if err != nil {
			s.writeError(w, r, internalError("marshal response: %v", err))
			return
		}
	}
	s.writeParts(w, r, http.StatusOK, out)
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

// admit applies Tablestore's transport checks: method, operation,
// headers, date format and skew, credentials and the signature, all from
// the headers alone; only then the body, bounded by its declared length
// and MaxBodySize, and its MD5 (which the signature covers through
// x-ots-contentmd5). authed reports whether the request passed the
// signature check. It returns the body.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (body []byte, authed bool, _ *otsError) {
	if r.Method != http.MethodPost {
		return nil, false, &otsError{status: 405, code: "OTSMethodNotAllowed", msg: "Only POST method for requests is supported."}
	}
	op := strings.TrimPrefix(r.URL.Path, "/")
	if _, ok := operations[op]; !ok {
		return nil, false, &otsError{status: 400, code: "OTSUnsupportOperation", msg: fmt.Sprintf("Unsupported operation: '%s'.", op)}
	}
	h := r.Header
	for _, name := range headersRequired {
		if h.Get(name) == "" {
			return nil, false, paramErr("Missing header: %s.", name)
		}
	}
	v4 := h.Get("x-ots-signaturev4") != ""
	if v4 {
		for _, name := range []string{"x-ots-signregion", "x-ots-signdate"} {
			if h.Get(name) == "" {
				return nil, false, paramErr("Missing header: %s.", name)
			}
		}
	} else if h.Get("x-ots-signature") == "" {
		return nil, false, paramErr("Missing header: %s.", "x-ots-signature")
	}
	d := h.Get("x-ots-date")
	if !validDate(d) {
		return nil, false, paramErr("Invalid date format: %s.", d)
	}
	// A wrong access key ID, instance or signature gets one answer, after
	// the same work: an unauthenticated caller cannot confirm either
	// name alone (the service's answer to a bad signature).
	idOK := subtle.ConstantTimeCompare([]byte(h.Get("x-ots-accesskeyid")), []byte(s.opts.AccessKeyID)) == 1
	instOK := subtle.ConstantTimeCompare([]byte(h.Get("x-ots-instancename")), []byte(s.opts.InstanceName)) == 1
	if sigOK := s.signatureOK(r.URL.Path, h, v4); !(idOK && instOK && sigOK) {
		return nil, false, errAuth
	}
	// The date is signed: a request re-sent later keeps its old date.
	if oe := s.checkDate(d); oe != nil {
		return nil, false, oe
	}
	body, oe := s.readBody(w, r)
	if oe != nil {
		return nil, true, oe
	}
	sum := md5.Sum(body)
	if h.Get("x-ots-contentmd5") != base64.StdEncoding.EncodeToString(sum[:]) {
		return nil, true, authErr("Mismatch between MD5 value of request body and x-ots-contentmd5 in header.")
	}
	return body, true, nil
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

// requestID returns a new x-ots-requestid: 16 random bytes in the
// service's 8-4-4-4-12 hex form, so an id says nothing about how many
// requests the server has served.
func (s *Server) requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// write sends a response with the headers real Tablestore sends: request
// id, body MD5, date, content type, and a response signature
// ("authorization: OTS id:sig") that the Python and Java SDKs verify.
func (s *Server) write(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	s.writeParts(w, r, status, []bodyPart{{b: body}})
}

// writeParts is write with a body in parts.
func (s *Server) writeParts(w http.ResponseWriter, r *http.Request, status int, body []bodyPart) {
	names := s.xotsHeaders(w, body...)
	mac := hmac.New(sha1.New, []byte(s.opts.AccessKeySecret))
	io.WriteString(mac, strings.Join(names, "\n")+"\n"+r.URL.Path)
	w.Header().Set("authorization", "OTS "+s.opts.AccessKeyID+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	w.WriteHeader(status)
	s.writeBody(w, r, body)
}

// writeUnsigned sends the error of a request that failed authentication:
// the x-ots headers without a response signature, which would name the
// access key ID and prove knowledge of the secret to an unknown caller.
func (s *Server) writeUnsigned(w http.ResponseWriter, e *otsError) {
	b, err := proto.Marshal(e.proto())
	if err != nil {
		b = nil
	}
	s.xotsHeaders(w, bodyPart{b: b})
	w.WriteHeader(e.status)
	w.Write(b)
}

// xotsHeaders sets the response's x-ots headers and content type and
// returns the signed lines "name:value", sorted.
func (s *Server) xotsHeaders(w http.ResponseWriter, body ...bodyPart) []string {
	hash := md5.New()
	size := 0
	for _, p := range body {
		p.writeTo(hash)
		size += p.size()
	}
	sum := hash.Sum(nil)
	h := w.Header()
	h.Set("Content-Length", strconv.Itoa(size))
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
	h.Set("Content-Type", "application/x-protobuf")
	return names
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
// tableRequest is a request message (a pointer to R) that names a table.
type tableRequest[R any] interface {
	*R
	proto.Message
	GetTableName() string
}

// decodeTableRequest unmarshals body into a new request R and reads the
// metadata of the table it names.
func decodeTableRequest[R any, P tableRequest[R]](ctx context.Context, s *Server, body []byte) (P, *tablekit.TableMeta, error) {
	req := P(new(R))
	if err := unmarshal(body, req); err != nil {
		return nil, nil, err
	}
	m, oe := s.meta(ctx, req.GetTableName())
	if oe != nil {
		return nil, nil, oe
	}
	return req, m, nil
}

func unmarshal(body []byte, m proto.Message) error {
	if err := proto.Unmarshal(body, m); err != nil {
		return errParse
	}
	return nil
}
