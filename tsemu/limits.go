package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
	"google.golang.org/protobuf/encoding/protowire"
	protov2 "google.golang.org/protobuf/proto"

	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// Defaults of the server's network limits (Options fields of the same
// names override them).
const (
	// DefaultReadHeaderTimeout bounds the time to read a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the time to read a whole request, body
	// included: a client trickling its body is cut off after it.
	DefaultReadTimeout = 60 * time.Second
	// DefaultWriteTimeout bounds the time from the end of the request's
	// headers to the end of the response.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection idle that long.
	DefaultIdleTimeout = 120 * time.Second
	// DefaultMaxConns is the number of connections the server keeps open
	// at once; see Options.MaxConns.
	DefaultMaxConns = 1024
	// DefaultBodyMemory is how many bytes of request bodies the server
	// holds at once; see Options.BodyMemory.
	DefaultBodyMemory = 64 << 20
	// DefaultStallTimeout bounds the time to receive each 64 KiB of a
	// request body and to send each 256 KiB of a response: a client that
	// stops sending or reading, or does it slower than that, is cut off.
	DefaultStallTimeout = 5 * time.Second
	// DefaultResponseMemory is how many bytes of large responses the
	// server holds at once; see Options.ResponseMemory.
	DefaultResponseMemory = 64 << 20
)

// MaxDateSkew is how far x-ots-date may be from the server's wall clock,
// as on the service: a signed request cannot be replayed later than this.
const MaxDateSkew = 15 * time.Minute

// Caps on a filter (a read's filter or a write's column condition), which
// the service documents at 10 to 32 conditions; the emulator allows 32.
const (
	// MaxFilterWidth is the most sub filters of one composite filter.
	MaxFilterWidth = 32
	// MaxFilterConditions is the most single-column conditions in a
	// whole filter.
	MaxFilterConditions = 32
)

// checkFilterSize refuses a serialized filter wider than MaxFilterWidth or
// with more than MaxFilterConditions single-column conditions, before it
// is decoded into a tablekit filter or run against any row. Nesting is
// bounded by decodeFilter.
func checkFilterSize(b []byte) *otsError {
	n := 0
	return countConditions(b, &n, 0)
}

func countConditions(b []byte, n *int, depth int) *otsError {
	if depth > maxFilterDepth {
		return paramErr("The filter is nested more than %d levels deep.", maxFilterDepth)
	}
	// Read the wire format directly: a filter of 100,000 conditions is
	// refused after its 33rd, without decoding the rest. Filter: 1 type,
	// 2 filter (bytes).
	var typ uint64
	var inner []byte
	if !eachField(b, func(num protowire.Number, v uint64, bs []byte) bool {
		switch num {
		case 1:
			typ = v
		case 2:
			inner = bs
		}
		return true
	}) {
		return nil // decodeFilter reports the parse error
	}
	switch otsprotocol.FilterType(typ) {
	case otsprotocol.FilterType_FT_SINGLE_COLUMN_VALUE:
		if *n++; *n > MaxFilterConditions {
			return paramErr("The filter has more than %d conditions; the limit is %d.", MaxFilterConditions, MaxFilterConditions)
		}
	case otsprotocol.FilterType_FT_COMPOSITE_COLUMN_VALUE:
		// CompositeColumnValueFilter: 1 combinator, 2 sub_filters
		// (repeated Filter).
		var subs [][]byte
		comb := otsprotocol.LogicalOperator(0)
		eachField(inner, func(num protowire.Number, v uint64, bs []byte) bool {
			switch num {
			case 1:
				comb = otsprotocol.LogicalOperator(v)
			case 2:
				subs = append(subs, bs)
			}
			return len(subs) <= MaxFilterWidth
		})
		if len(subs) > MaxFilterWidth {
			return paramErr("The %v filter has more than %d sub filters; the limit is %d.", comb, MaxFilterWidth, MaxFilterWidth)
		}
		for _, sub := range subs {
			if oe := countConditions(sub, n, depth+1); oe != nil {
				return oe
			}
		}
	}
	return nil
}

// eachField calls f with each varint (v) or length-delimited (bs) field
// of the protobuf message b, others skipped, until f returns false. It
// reports whether b was well formed up to there.
func eachField(b []byte, f func(num protowire.Number, v uint64, bs []byte) bool) bool {
	for len(b) > 0 {
		num, wt, k := protowire.ConsumeTag(b)
		if k < 0 {
			return false
		}
		b = b[k:]
		var v uint64
		var bs []byte
		switch wt {
		case protowire.VarintType:
			v, k = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			bs, k = protowire.ConsumeBytes(b)
		default:
			k = protowire.ConsumeFieldValue(num, wt, b)
		}
		if k < 0 {
			return false
		}
		b = b[k:]
		if (wt == protowire.VarintType || wt == protowire.BytesType) && !f(num, v, bs) {
			return true
		}
	}
	return true
}

// checkDate applies the skew rule to a well-formed x-ots-date: more than
// MaxDateSkew (or opts.MaxDateSkew) from the server's wall clock is
// refused, as the service does.
func (s *Server) checkDate(d string) *otsError {
	skew := s.opts.MaxDateSkew
	if skew < 0 {
		return nil
	}
	if skew == 0 {
		skew = MaxDateSkew
	}
	t, ok := parseDate(d)
	if !ok || s.wallNow().Sub(t).Abs() > skew {
		return authErr("Mismatch between system time and x-ots-date: " + d + ".")
	}
	return nil
}

// parseDate reads x-ots-date to the second. The Go SDK's fraction is
// month/day/hour digits (see isoDate), so only the part before the dot
// counts.
func parseDate(d string) (time.Time, bool) {
	if isoDate.MatchString(d) {
		t, err := time.Parse("2006-01-02T15:04:05", d[:19])
		return t, err == nil
	}
	t, err := http.ParseTime(d)
	return t, err == nil
}

// connLimiter is a listener that keeps at most max connections open. At
// the cap, a new connection evicts another: first the one that has waited
// longest for its first request to arrive in full (a slow or silent
// client), then the longest-idle connection that has been served before,
// then the one waiting longest for a later request. Connections whose
// request is being served are never evicted. Attackers holding
// connections open therefore cannot exhaust file descriptors, and a
// client's keep-alive connection, once it has been served, outlives any
// number of them.
type connLimiter struct {
	net.Listener
	max int

	bytesRead atomic.Int64 // from every connection, for tests

	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func newConnLimiter(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, max: max, conns: map[*trackedConn]struct{}{}}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l, since: time.Now()}
	l.mu.Lock()
	var victim *trackedConn
	if len(l.conns) >= l.max {
		victim = l.victimLocked()
		if victim != nil {
			delete(l.conns, victim)
		}
	}
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	// Past the cap with every connection busy serving: the connection
	// is accepted and over the cap for as long as those take, never more
	// than max serving plus the new ones, which are themselves evictable.
	return tc, nil
}

// victimLocked picks the connection to evict (see connLimiter), or nil
// when every connection is serving.
func (l *connLimiter) victimLocked() *trackedConn {
	var best *trackedConn
	bestRank := 0
	for c := range l.conns {
		var rank int
		switch {
		case c.serving:
			continue
		case !c.served:
			rank = 3 // never completed a request
		case c.state == http.StateIdle:
			rank = 2
		default:
			rank = 1 // a served client reading its next request
		}
		if rank > bestRank || rank == bestRank && c.since.Before(best.since) {
			best, bestRank = c, rank
		}
	}
	return best
}

// open returns the number of open connections.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// trackedConn is a connection of a connLimiter with its state; the fields
// after l are guarded by l.mu.
type trackedConn struct {
	net.Conn
	l       *connLimiter
	state   http.ConnState
	serving bool      // a handler is running a request read in full
	served  bool      // a request has been read in full before
	since   time.Time // start of the current state
}

func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.bytesRead.Add(int64(n))
	return n, err
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// connState is the http.Server's ConnState hook.
func (l *connLimiter) connState(nc net.Conn, st http.ConnState) {
	c, ok := nc.(*trackedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		delete(l.conns, c)
		return
	}
	if c.state != st {
		c.state, c.since = st, time.Now()
	}
}

func (l *connLimiter) setServing(c *trackedConn, on bool) {
	l.mu.Lock()
	c.serving = on
	c.served = true
	c.since = time.Now()
	l.mu.Unlock()
}

type connKey struct{}

// connContext is the http.Server's ConnContext hook: it lets ServeHTTP find
// its connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// markServing records that r has been read in full and is being served,
// so its connection is not evicted; the returned func ends that.
func markServing(r *http.Request) func() {
	tc, ok := r.Context().Value(connKey{}).(*trackedConn)
	if !ok {
		return func() {}
	}
	tc.l.setServing(tc, true)
	return func() { tc.l.setServing(tc, false) }
}

// A request body's first bodyFree bytes need no room in
// Options.BodyMemory (they are bounded by MaxConns, as headers are): small
// requests never wait behind large ones. Room for the rest of a body is
// reserved once those bytes have arrived, so a client that declares a
// large body and sends nothing holds nothing. The body is read bodyChunk
// at a time, each within StallTimeout, and a reservation is held at most
// StallTimeout plus the rest of the body at minBodyRate.
const (
	bodyChunk   = 64 << 10
	bodyFree    = 64 << 10
	minBodyRate = 1 << 20 // bytes per second
)

// readBody reads r's body once its headers passed every check: at most
// MaxBodySize bytes, no more than the declared Content-Length, past its
// first bodyFree bytes holding room in Options.BodyMemory (see bodyFree).
// A client that stops sending, trickles, or holds room for too long gets
// 408: such clients hold little, and not for long, and cannot keep
// others' requests waiting.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *otsError) {
	tooLarge := &otsError{status: 413, code: "OTSRequestBodyTooLarge", msg: "The size of POST data is too large."}
	timeout := &otsError{status: 408, code: "OTSRequestTimeout", msg: "Request timeout."}
	want := r.ContentLength
	if want > MaxBodySize {
		return nil, tooLarge
	}
	if want < 0 { // chunked: unknown length, read to the end
		want = MaxBodySize + 1
	}
	if want == 0 {
		return []byte{}, nil
	}
	rc := http.NewResponseController(w)
	end := time.Now().Add(s.opts.ReadTimeout)
	stall := s.opts.StallTimeout
	var chunks [][]byte
	var n int64 // bytes read
	reserved := false
	for n < want {
		size := min(want-n, bodyChunk)
		if n >= bodyFree && !reserved && s.bodyMem != nil {
			reserved = true
			// The rest of the body, at once: a body never waits while
			// holding room, so bodies cannot hold each other up.
			rest := want - n
			ctx, cancel := context.WithDeadline(r.Context(), end)
			err := s.bodyMem.Acquire(ctx, rest)
			cancel()
			if err != nil {
				return nil, timeout
			}
			defer s.bodyMem.Release(rest)
			end = minTime(end, time.Now().Add(stall+time.Duration(rest)*time.Second/minBodyRate))
		}
		_ = rc.SetReadDeadline(minTime(end, time.Now().Add(stall))) // not supported in process: nothing to cut off
		buf := make([]byte, size)
		k, err := io.ReadFull(r.Body, buf)
		n += int64(k)
		chunks = append(chunks, buf[:k])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if r.ContentLength >= 0 {
				return nil, &otsError{status: 400, code: "OTSParameterInvalid", msg: "Failed to read the request body."}
			}
			break // a chunked body ends
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || strings.Contains(err.Error(), "timeout") {
				return nil, timeout
			}
			return nil, &otsError{status: 400, code: "OTSParameterInvalid", msg: "Failed to read the request body."}
		}
	}
	if n > MaxBodySize {
		return nil, tooLarge
	}
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.ReadTimeout))
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	// Every byte has arrived: the copy into one buffer is brief.
	body := make([]byte, 0, n)
	for i, c := range chunks {
		body = append(body, c...)
		chunks[i] = nil
	}
	return body, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Responses are written writeChunk at a time, each within StallTimeout.
// The first respFree bytes of a response need no room in
// Options.ResponseMemory (they are bounded by MaxConns): small answers
// never wait behind large ones.
const (
	writeChunk = 256 << 10
	respFree   = 256 << 10
)

// respHold is one request's share of Options.ResponseMemory, from its
// handler's reservation to the end of its response.
type respHold struct {
	start    time.Time // ServeHTTP began
	asked    int64     // bytes reserved for, free ones included
	acquired int64     // held in s.respMem
	// rows kept by rowsAnswer, encoded as the answer is written
	rows   []plainbuffer.Row
	stream bool
}

type respHoldKey struct{}

// reserveResponse makes room in Options.ResponseMemory for n more bytes
// of the response being built under ctx, before they are allocated: a
// handler calls it once, with the size of everything it will encode, so
// that it never waits holding a share. Past the first respFree bytes it
// waits for room, at most WriteTimeout from the request's start, then
// answers OTSServerBusy; a response larger than the whole budget waits
// for all of it.
func (s *Server) reserveResponse(ctx context.Context, n int64) *otsError {
	h, ok := ctx.Value(respHoldKey{}).(*respHold)
	if !ok || s.respMem == nil || n <= 0 {
		return nil
	}
	h.asked += n
	want := min(max(h.asked-respFree, 0), s.opts.ResponseMemory) - h.acquired
	if want <= 0 {
		return nil
	}
	wctx, cancel := context.WithDeadline(ctx, h.start.Add(s.opts.WriteTimeout))
	defer cancel()
	if err := s.respMem.Acquire(wctx, want); err != nil {
		return &otsError{status: 503, code: "OTSServerBusy", msg: "Server is busy."}
	}
	h.acquired += want
	return nil
}

// releaseResponse gives back h's share once the response is written.
func (s *Server) releaseResponse(h *respHold) {
	if h.acquired > 0 {
		s.respMem.Release(h.acquired)
		h.acquired = 0
	}
}

// writeBody writes a response body of parts writeChunk at a time, each
// within StallTimeout (and all within WriteTimeout of the request's
// start), so that a client that does not read its answer is cut off and
// its share of the response memory freed.
func (s *Server) writeBody(w http.ResponseWriter, r *http.Request, parts []bodyPart) {
	cw := &chunkWriter{w: w, rc: http.NewResponseController(w), end: time.Now().Add(s.opts.WriteTimeout), stall: s.opts.StallTimeout}
	if h, ok := r.Context().Value(respHoldKey{}).(*respHold); ok {
		cw.end = h.start.Add(s.opts.WriteTimeout)
	}
	for _, p := range parts {
		if p.writeTo(cw) != nil {
			return
		}
	}
}

// bodyPart is part of a response body: bytes, or (stream set) a
// PlainBuffer block of rows, encoded as it is written.
type bodyPart struct {
	b      []byte
	rows   []plainbuffer.Row
	stream bool
}

func (p bodyPart) size() int {
	if !p.stream {
		return len(p.b)
	}
	n := 4
	for _, r := range p.rows {
		n += plainbuffer.RowSize(r)
	}
	return n
}

func (p bodyPart) writeTo(w io.Writer) error {
	if !p.stream {
		_, err := w.Write(p.b)
		return err
	}
	return plainbuffer.WriteRows(w, p.rows)
}

// rowsAnswer returns the rows field (GetRowResponse.Row,
// GetRangeResponse.Rows) of an answer holding rows: empty for no rows;
// else, under ServeHTTP, empty too, and the rows are kept to be encoded
// as the answer is written (see marshalResponse), so that an answer
// holds no copy of its rows, whatever their size.
func rowsAnswer(ctx context.Context, rows []plainbuffer.Row) []byte {
	if len(rows) == 0 {
		return []byte{}
	}
	h, ok := ctx.Value(respHoldKey{}).(*respHold)
	if !ok {
		return plainbuffer.EncodeRows(rows)
	}
	h.rows, h.stream = rows, true
	return []byte{}
}

// marshalResponse encodes a response message as parts of its body. The
// rows kept by rowsAnswer follow the rest of the message as their own
// field (protobuf fields may come in any order), encoded as written.
func marshalResponse(h *respHold, m proto.Message) ([]bodyPart, error) {
	var rows *[]byte
	switch m := m.(type) {
	case *otsprotocol.GetRowResponse:
		rows = &m.Row
	case *otsprotocol.GetRangeResponse:
		rows = &m.Rows
	}
	if rows == nil || !h.stream {
		b, err := proto.Marshal(m)
		return []bodyPart{{b: b}}, err
	}
	*rows = nil
	b, err := protov2.MarshalOptions{AllowPartial: true}.Marshal(proto.MessageV2(m))
	if err != nil {
		return nil, err
	}
	block := bodyPart{rows: h.rows, stream: true}
	// Both rows fields are field 2 of their message.
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(block.size()))
	return []bodyPart{{b: b}, block}, nil
}

// chunkWriter writes to w writeChunk bytes at a time, each within
// StallTimeout and all before end.
type chunkWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	end   time.Time
	stall time.Duration
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), writeChunk)
		_ = c.rc.SetWriteDeadline(minTime(c.end, time.Now().Add(c.stall))) // not supported in process
		m, err := c.w.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}
