package awsdynamodb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/backend/driver"
)

// faultTransport sits between the SDK and dynalite and, for BatchWriteItem
// and BatchGetItem calls, injects the failures DynamoDB produces and
// dynalite never does:
//
//   - throttle: answer 400 ProvisionedThroughputExceededException without
//     forwarding (nothing is applied);
//   - unprocessed: strip a random part of the request's items or keys,
//     forward the rest, and return the stripped ones in UnprocessedItems /
//     UnprocessedKeys of the real response (they were not applied);
//   - dropBefore: fail with "connection reset" before sending;
//   - dropAfter: forward (the server applies it), then fail with
//     "connection reset" as if the response were lost.
type faultTransport struct {
	base                                     http.RoundTripper
	throttle, unprocessed, dropBefore, after float64

	mu  sync.Mutex
	rng *rand.Rand

	nThrottled, nStripped, nDropBefore, nDropAfter, nCalls atomic.Int64
	allUnprocessed                                         atomic.Bool // strip every item: nothing ever succeeds

	// answer, when set, is the response to every call of its operation,
	// which is not forwarded: a native error DynamoDB returns.
	answer atomic.Pointer[cannedAnswer]

	// lose, when set, forwards calls of its operation and then loses
	// their answers (a reset connection), as many times as it says.
	lose atomic.Pointer[lostAnswers]
}

// lostAnswers is how many answers of op faultTransport loses.
type lostAnswers struct {
	op   string
	n    atomic.Int64 // left to lose
	lost atomic.Int64 // lost so far
}

// cannedAnswer is a response faultTransport gives in place of the server.
type cannedAnswer struct {
	op     string // e.g. "PutItem"
	status int
	body   string
}

func newFaultTransport(seed uint64) *faultTransport {
	return &faultTransport{
		base:     &http.Transport{MaxIdleConnsPerHost: 64},
		throttle: 0.10, unprocessed: 0.30, dropBefore: 0.05, after: 0.05,
		rng: rand.New(rand.NewPCG(seed, 7)),
	}
}

func (f *faultTransport) roll() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64()
}

func (f *faultTransport) intN(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.IntN(n)
}

var errReset = errors.New("faultinject: read tcp 127.0.0.1: connection reset by peer")

func (f *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	if a := f.answer.Load(); a != nil && a.op == op {
		if req.Body != nil {
			io.Copy(io.Discard, req.Body)
			req.Body.Close()
		}
		return jsonResponse(req, a.status, []byte(a.body)), nil
	}
	l := f.lose.Load()
	lose := l != nil && l.op == op && l.n.Add(-1) >= 0
	if !lose && op != "BatchWriteItem" && op != "BatchGetItem" {
		return f.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if lose {
		l.lost.Add(1)
		return f.forwardLost(req, body)
	}
	f.nCalls.Add(1)
	p := f.roll()
	switch {
	case p < f.throttle:
		f.nThrottled.Add(1)
		return jsonResponse(req, 400, []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`)), nil
	case p < f.throttle+f.dropBefore:
		f.nDropBefore.Add(1)
		return nil, errReset
	case p < f.throttle+f.dropBefore+f.after:
		f.nDropAfter.Add(1)
		return f.forwardLost(req, body)
	case p < f.throttle+f.dropBefore+f.after+f.unprocessed || f.allUnprocessed.Load():
		return f.strip(req, op, body)
	}
	return f.forward(req, body)
}

func (f *faultTransport) forward(req *http.Request, body []byte) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return f.base.RoundTrip(r)
}

// forwardLost forwards the request (the server applies it) and then fails
// as if the answer were lost on a reset connection.
func (f *faultTransport) forwardLost(req *http.Request, body []byte) (*http.Response, error) {
	resp, err := f.forward(req, body)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errReset
}

func jsonResponse(req *http.Request, code int, body []byte) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", "faultinject")
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	return &http.Response{
		StatusCode: code, Status: strconv.Itoa(code) + " " + http.StatusText(code),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}

// strip moves part of the request's entries into the response's
// Unprocessed* field without letting the server see them.
func (f *faultTransport) strip(req *http.Request, op string, body []byte) (*http.Response, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	var items map[string]json.RawMessage
	if err := json.Unmarshal(in["RequestItems"], &items); err != nil {
		return nil, err
	}
	stripped := map[string]any{}
	keep := map[string]any{}
	moved := 0
	all := f.allUnprocessed.Load()
	for table, raw := range items {
		var entries []json.RawMessage
		var ka map[string]json.RawMessage // BatchGetItem: KeysAndAttributes
		if op == "BatchWriteItem" {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, err
			}
		} else {
			if err := json.Unmarshal(raw, &ka); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(ka["Keys"], &entries); err != nil {
				return nil, err
			}
		}
		var kept, gone []json.RawMessage
		for _, e := range entries {
			if all || f.intN(2) == 0 {
				gone = append(gone, e)
			} else {
				kept = append(kept, e)
			}
		}
		moved += len(gone)
		wrap := func(es []json.RawMessage) any {
			if op == "BatchWriteItem" {
				return es
			}
			m := map[string]any{}
			for k, v := range ka {
				m[k] = v
			}
			m["Keys"] = es
			return m
		}
		if len(gone) > 0 {
			stripped[table] = wrap(gone)
		}
		if len(kept) > 0 {
			keep[table] = wrap(kept)
		}
	}
	f.nStripped.Add(int64(moved))
	field := "UnprocessedItems"
	if op == "BatchGetItem" {
		field = "UnprocessedKeys"
	}
	var out map[string]any
	if len(keep) == 0 {
		// Nothing left to send: answer for the server.
		out = map[string]any{field: stripped}
		if op == "BatchGetItem" {
			out["Responses"] = map[string]any{}
		}
	} else {
		in["RequestItems"], _ = json.Marshal(keep)
		nb, _ := json.Marshal(in)
		resp, err := f.forward(req, nb)
		if err != nil {
			return nil, err
		}
		rb, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			return jsonResponse(req, resp.StatusCode, rb), nil
		}
		if err := json.Unmarshal(rb, &out); err != nil {
			return nil, err
		}
		prev, _ := out[field].(map[string]any)
		if len(prev) > 0 {
			return nil, fmt.Errorf("faultinject: server already returned %s", field)
		}
		out[field] = stripped
	}
	ob, _ := json.Marshal(out)
	return jsonResponse(req, 200, ob), nil
}

// TestBatchWriteSurvivesFaults writes 10,000 rows through
// tablekit.Client.BatchWriteRow in batches of 200 while the transport
// throttles, returns UnprocessedItems and drops connections before and after
// the server applied a call; then every acknowledged row must be there
// exactly once with its value. It reads them back with BatchGetRow under the
// same faults (UnprocessedKeys, throttling, drops).
func TestBatchWriteSurvivesFaults(t *testing.T) {
	// No deadline: a run slowed down by -race on a busy machine must not
	// fail for being slow (a hang is the test binary's timeout's to report).
	ctx := context.Background()
	ft := newFaultTransport(1)
	// The SDK's own retries are off, so that every injected throttle and
	// dropped connection reaches the adapter's retry loop.
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ft}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), &awsdynamodb.Options{Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	clock := tablekit.NewManualClock(time.UnixMilli(1_700_000_000_000))
	db, tbl := newTable(t, b, clock, tablekit.TableOptions{})
	const rows, batch = 10000, 200
	key := func(i int) tablekit.PrimaryKey {
		return tablekit.Key("pk", tablekit.String(fmt.Sprintf("p%03d", i%97))).Add("sk", tablekit.Integer(int64(i)))
	}
	val := func(i int) []tablekit.Column {
		return []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}, {Name: "s", Value: tablekit.String(strconv.Itoa(i * 7))}}
	}
	acked := make([]bool, rows)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed atomic.Int64
	sem := make(chan struct{}, 4)
	for lo := 0; lo < rows; lo += batch {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var ws []tablekit.BatchWrite
			for i := lo; i < lo+batch; i++ {
				ws = append(ws, tablekit.BatchPut(tbl.Name(), key(i), val(i)))
			}
			res, err := db.BatchWriteRow(ctx, ws)
			if err != nil {
				t.Errorf("BatchWriteRow [%d, %d): %v", lo, lo+batch, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for j, r := range res {
				if r.Err == nil {
					acked[lo+j] = true
				} else {
					failed.Add(1)
					t.Logf("row %d not acknowledged: %v", lo+j, r.Err)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("batch calls %d: throttled %d, items moved to Unprocessed* %d, dropped before send %d, dropped after apply %d; rows not acknowledged %d",
		ft.nCalls.Load(), ft.nThrottled.Load(), ft.nStripped.Load(), ft.nDropBefore.Load(), ft.nDropAfter.Load(), failed.Load())
	if ft.nThrottled.Load() == 0 || ft.nStripped.Load() == 0 || ft.nDropBefore.Load() == 0 || ft.nDropAfter.Load() == 0 {
		t.Fatalf("a fault kind was never injected: the test proves nothing")
	}
	// With retries until done, every row must have been acknowledged.
	if n := failed.Load(); n != 0 {
		t.Errorf("%d rows were not acknowledged", n)
	}

	// Read the whole table and check, through a clean client with the SDK's
	// usual retries: this reads what was stored, it does not test the fault
	// path (the faulted client's connections may have been cut under it).
	vb, err := awsdynamodb.New(newClient(t, nil), &awsdynamodb.Options{Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	vtbl := tablekit.NewClient(vb, tablekit.WithClock(clock)).Table(tbl.Name())
	seen := make([]bool, rows)
	n := 0
	var prev tablekit.PrimaryKey
	for row, err := range vtbl.Rows(ctx, tablekit.Key("pk", tablekit.InfMin).Add("sk", tablekit.InfMin), tablekit.Key("pk", tablekit.InfMax).Add("sk", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		if prev != nil && tablekit.CompareKeys(prev, row.Key) >= 0 {
			t.Fatalf("rows out of order or repeated: %v then %v", prev, row.Key)
		}
		prev = row.Key
		sk, _ := row.Key[1].Value.Int()
		i := int(sk)
		if i < 0 || i >= rows || !row.Key.Equal(key(i)) {
			t.Fatalf("unexpected row %v", row.Key)
		}
		if seen[i] {
			t.Fatalf("row %d returned twice", i)
		}
		seen[i] = true
		n++
		if v, _ := row.Get("v"); !v.Equal(tablekit.Integer(int64(i))) {
			t.Errorf("row %d: v = %v", i, v)
		}
		if s, _ := row.Get("s"); !s.Equal(tablekit.String(strconv.Itoa(i * 7))) {
			t.Errorf("row %d: s = %v", i, s)
		}
		if len(row.Columns) != 2 {
			t.Errorf("row %d has %d cells, want 2", i, len(row.Columns))
		}
	}
	for i := range rows {
		if acked[i] && !seen[i] {
			t.Errorf("acknowledged row %d is missing", i)
		}
	}
	t.Logf("%d rows stored", n)

	// Read every row back through BatchGetRow under the same faults.
	before := ft.nStripped.Load()
	for lo := 0; lo < rows; lo += tablekit.MaxBatchGet {
		var gets []tablekit.BatchGet
		for i := lo; i < lo+tablekit.MaxBatchGet; i++ {
			gets = append(gets, tablekit.BatchGet{Table: tbl.Name(), Key: key(i)})
		}
		res, err := db.BatchGetRow(ctx, gets)
		if err != nil {
			t.Fatalf("BatchGetRow [%d, %d): %v", lo, lo+tablekit.MaxBatchGet, err)
		}
		for j, r := range res {
			i := lo + j
			if r.Err != nil {
				t.Errorf("BatchGetRow row %d: %v", i, r.Err)
				continue
			}
			if r.Found != seen[i] {
				t.Errorf("BatchGetRow row %d: found=%v, range saw it: %v", i, r.Found, seen[i])
			}
			if v, _ := r.Row.Get("v"); r.Found && !v.Equal(tablekit.Integer(int64(i))) {
				t.Errorf("BatchGetRow row %d: v = %v", i, v)
			}
		}
	}
	if ft.nStripped.Load() == before {
		t.Errorf("no UnprocessedKeys were injected into BatchGetItem")
	}
}

// TestBatchWriteRetriesUntilContextEnds: when the server never processes
// anything, BatchWriteRow keeps retrying with backoff until the context
// ends, and then returns the context's error.
func TestBatchWriteRetriesUntilContextEnds(t *testing.T) {
	ft := newFaultTransport(2)
	ft.throttle, ft.dropBefore, ft.after = 0, 0, 0
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ft}), &awsdynamodb.Options{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	ft.allUnprocessed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var ws []tablekit.BatchWrite
	for i := range 30 {
		ws = append(ws, tablekit.BatchPut(tbl.Name(), tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(int64(i))), nil))
	}
	start := time.Now()
	_, err = db.BatchWriteRow(ctx, ws)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("BatchWriteRow against a server that processes nothing: %v, want context.DeadlineExceeded", err)
	}
	if calls := ft.nCalls.Load(); calls < 4 {
		t.Errorf("only %d BatchWriteItem calls in 400ms: not retrying", calls)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("BatchWriteRow returned %v after its context ended", d)
	}
}

// TestNativeErrorsMapPerSpec drives each DynamoDB error through the
// adapter (the transport answers in the server's place, the SDK's retries
// off) and checks SPEC §12: the portable sentinel (errors.Is), the native
// error still reachable (errors.As smithy.APIError with its code), only
// throttling and transient faults retryable, and a message that names the
// table once and does not echo the 1000-byte key.
func TestNativeErrorsMapPerSpec(t *testing.T) {
	ctx := context.Background()
	ft := newFaultTransport(3)
	ft.throttle, ft.unprocessed, ft.dropBefore, ft.after = 0, 0, 0, 0
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ft}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), nil)
	if err != nil {
		t.Fatal(err)
	}
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	long := strings.Repeat("k", 1000)
	key := tablekit.Key("pk", tablekit.String(long)).Add("sk", tablekit.Integer(1))
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	const prefix = "com.amazonaws.dynamodb.v20120810#"
	for _, tc := range []struct {
		code    string // __type, "" for none
		status  int
		message string
		want    error
	}{
		{"com.amazon.coral.service#UnrecognizedClientException", 400, "The security token included in the request is invalid.", tablekit.ErrPermissionDenied},
		{"com.amazon.coral.service#InvalidSignatureException", 400, "The request signature we calculated does not match the signature you provided.", tablekit.ErrPermissionDenied},
		{prefix + "AccessDeniedException", 400, "User is not authorized to perform: dynamodb:PutItem", tablekit.ErrPermissionDenied},
		{"com.amazon.coral.service#ExpiredTokenException", 400, "The security token included in the request is expired", tablekit.ErrPermissionDenied},
		{"com.amazon.coral.service#MissingAuthenticationTokenException", 400, "Request is missing Authentication Token", tablekit.ErrPermissionDenied},
		{"MissingAuthenticationToken", 403, "Missing Authentication Token", tablekit.ErrPermissionDenied},
		{"com.amazon.coral.service#IncompleteSignatureException", 400, "Authorization header requires 'Signature' parameter.", tablekit.ErrPermissionDenied},
		{prefix + "ProvisionedThroughputExceededException", 400, "The level of configured provisioned throughput for the table was exceeded.", tablekit.ErrThrottled},
		{"com.amazon.coral.availability#ThrottlingException", 400, "Rate of requests exceeds the allowed throughput.", tablekit.ErrThrottled},
		{prefix + "RequestLimitExceeded", 400, "Throughput exceeds the current throughput limit for your account.", tablekit.ErrThrottled},
		{prefix + "InternalServerError", 500, "Internal server error", tablekit.ErrUnavailable},
		{"com.amazon.coral.availability#ServiceUnavailableException", 503, "Service unavailable", tablekit.ErrUnavailable},
		{"com.amazon.coral.validate#ValidationException", 400, "Item size has exceeded the maximum allowed size", tablekit.ErrInvalidArgument},
		{"com.amazon.coral.validate#ValidationException", 400, "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes", tablekit.ErrInvalidArgument},
		{prefix + "ItemCollectionSizeLimitExceededException", 400, "Collection size exceeded.", tablekit.ErrInvalidArgument},
		{"", 413, "Request Entity Too Large", tablekit.ErrInvalidArgument},
		{"", 408, "Request Timeout", tablekit.ErrUnavailable}, // the server gave up waiting for the request: a retry may succeed
		{prefix + "ResourceNotFoundException", 400, "Requested resource not found", tablekit.ErrTableNotFound},
	} {
		body := `{"message":"` + tc.message + `"}`
		if tc.code != "" {
			body = `{"__type":"` + tc.code + `","message":"` + tc.message + `"}`
		}
		code := tc.code[strings.LastIndex(tc.code, "#")+1:]
		for _, call := range []struct {
			op  string
			run func() error
		}{
			{"PutItem", func() error { return tbl.PutRow(ctx, key, nil) }},
			{"GetItem", func() error { _, _, err := tbl.GetRow(ctx, key); return err }},
			{"Query", func() error {
				_, err := tbl.GetRange(ctx, tablekit.Key("pk", tablekit.String(long)).Add("sk", tablekit.InfMin), tablekit.Key("pk", tablekit.String(long)).Add("sk", tablekit.InfMax))
				return err
			}},
		} {
			ft.answer.Store(&cannedAnswer{op: call.op, status: tc.status, body: body})
			err := call.run()
			ft.answer.Store(nil)
			what := fmt.Sprintf("%s answered %d %s", call.op, tc.status, code)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", what, err, tc.want)
				continue
			}
			var api smithy.APIError
			if !errors.As(err, &api) || (code != "" && api.ErrorCode() != code) {
				t.Errorf("%s: errors.As smithy.APIError: %v (code %q)", what, api != nil, code)
			}
			wantRetry := tc.want == tablekit.ErrThrottled || tc.want == tablekit.ErrUnavailable
			if driver.Retryable(err) != wantRetry {
				t.Errorf("%s: retryable = %v, want %v", what, !wantRetry, wantRetry)
			}
			msg := err.Error()
			if strings.Contains(msg, long[:100]) {
				t.Errorf("%s: the message echoes the key: %.300s", what, msg)
			}
			if n := strings.Count(msg, tbl.Name()); n != 1 {
				t.Errorf("%s: the message names the table %d times: %s", what, n, msg)
			}
		}
	}
	// Errors of the adapter's own making quote only the start of the key.
	big := tablekit.String(strings.Repeat("v", 401*1024))
	err = tbl.PutRow(ctx, key, []tablekit.Column{{Name: "big", Value: big}})
	if !errors.Is(err, tablekit.ErrInvalidArgument) || strings.Contains(err.Error(), long[:100]) || strings.Count(err.Error(), tbl.Name()) != 1 {
		t.Errorf("PutRow of a 401 KB row at a 1000-byte key: %v; want ErrInvalidArgument naming the table once, without the whole key", err)
	}
	res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{tablekit.BatchPut(tbl.Name(), key, []tablekit.Column{{Name: "big", Value: big}})})
	if err != nil || !errors.Is(res[0].Err, tablekit.ErrInvalidArgument) || strings.Contains(res[0].Err.Error(), long[:100]) || strings.Count(res[0].Err.Error(), tbl.Name()) != 1 {
		t.Errorf("BatchWriteRow of a 401 KB row at a 1000-byte key: %v %v; want ErrInvalidArgument naming the table once, without the whole key", err, res)
	}
}

// TestConditionalWriteAnswerLost loses the answer of a conditional write's
// call after the server applied it: the SDK sends the call again, and its
// condition fails on what the first attempt wrote (on moto, under load, a
// catalog row written with ExpectNotExist failed so). The write must
// succeed, once: neither "the row exists" nor an increment applied twice.
func TestConditionalWriteAnswerLost(t *testing.T) {
	ctx := context.Background()
	ft := newFaultTransport(5)
	ft.throttle, ft.unprocessed, ft.dropBefore, ft.after = 0, 0, 0, 0
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ft}), nil)
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string, v int64) []tablekit.Column {
		return []tablekit.Column{{Name: name, Value: tablekit.Integer(v)}}
	}
	for _, tc := range []struct {
		name string
		opts tablekit.TableOptions
		op   string // the call whose answer is lost
		seed bool   // the row exists before the write
		// write writes row key and returns the value its column "n" must then hold.
		write func(tbl *tablekit.Table, key tablekit.PrimaryKey) (int64, error)
	}{
		{"PutNotExist", tablekit.TableOptions{}, "PutItem", false, func(tbl *tablekit.Table, key tablekit.PrimaryKey) (int64, error) {
			return 7, tbl.PutRow(ctx, key, col("n", 7), tablekit.ExpectNotExist)
		}},
		{"PutNotExistTTL", tablekit.TableOptions{TTL: 48 * time.Hour}, "PutItem", false, func(tbl *tablekit.Table, key tablekit.PrimaryKey) (int64, error) {
			return 7, tbl.PutRow(ctx, key, col("n", 7), tablekit.ExpectNotExist)
		}},
		{"UpdateNotExist", tablekit.TableOptions{}, "UpdateItem", false, func(tbl *tablekit.Table, key tablekit.PrimaryKey) (int64, error) {
			_, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("n", tablekit.Integer(7))}, tablekit.ExpectNotExist)
			return 7, err
		}},
		{"IncrementExist", tablekit.TableOptions{}, "PutItem", true, func(tbl *tablekit.Table, key tablekit.PrimaryKey) (int64, error) {
			res, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Increment("n", 5)}, tablekit.ExpectExist)
			if err == nil && (len(res.Increments) != 1 || !res.Increments[0].Value.Equal(tablekit.Integer(6))) {
				t.Errorf("UpdateRow returned increments %v, want n=6", res.Increments)
			}
			return 6, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tbl := newTable(t, b, nil, tc.opts)
			key := tablekit.Key("pk", tablekit.String("a")).Add("sk", tablekit.Integer(1))
			if tc.seed {
				if err := tbl.PutRow(ctx, key, col("n", 1)); err != nil {
					t.Fatal(err)
				}
			}
			l := &lostAnswers{op: tc.op}
			l.n.Store(1)
			ft.lose.Store(l)
			want, err := tc.write(tbl, key)
			ft.lose.Store(nil)
			if l.lost.Load() != 1 {
				t.Fatalf("%s answers lost: %d, want 1 (the write took another path)", tc.op, l.lost.Load())
			}
			if err != nil {
				t.Fatalf("write whose answer was lost and sent again: %v", err)
			}
			r, found, err := tbl.GetRow(ctx, key)
			if err != nil || !found {
				t.Fatalf("GetRow: found %v, %v", found, err)
			}
			if v, _ := r.Get("n"); !v.Equal(tablekit.Integer(want)) {
				t.Errorf("n = %v, want %d (applied once)", v, want)
			}
		})
	}
}
