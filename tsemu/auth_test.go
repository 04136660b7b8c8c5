package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/common"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
)

func TestSignatureMismatch(t *testing.T) {
	e := newEnv(t)
	bad := sdkClient(e.srv, "wrong-secret")
	_, err := bad.ListTable()
	wantOTS(t, err, 403, "OTSAuthFailed", "Signature mismatch.")
	// The right secret works on the same server.
	if _, err := e.c.ListTable(); err != nil {
		t.Fatal(err)
	}
}

// TestWrongAccessKeyIDAndInstance: a wrong access key ID, a wrong
// instance and a wrong secret get the same answer (the service's answer to
// a bad signature), with the same headers but the request id and date, so
// an unauthenticated caller cannot confirm the key ID or the instance name
// alone.
func TestWrongAccessKeyIDAndInstance(t *testing.T) {
	e := newEnv(t)
	type answer struct {
		status int
		body   string
		header []string
	}
	get := func(mutate func(r *http.Request)) answer {
		t.Helper()
		r := signedRequest(t, e.srv, "ListTable", nil, e.srv.AccessKeySecret())
		mutate(r)
		got := do(t, e.srv, r)
		var names []string
		for k := range got.header {
			if lk := strings.ToLower(k); lk != "x-ots-requestid" && lk != "x-ots-date" && lk != "date" {
				names = append(names, lk+"="+got.header.Get(k))
			}
		}
		sort.Strings(names)
		return answer{got.status, string(got.body), names}
	}
	cases := map[string]func(r *http.Request){
		"WrongSecret": func(r *http.Request) { sign(t, r, "wrong-secret") },
		"WrongID": func(r *http.Request) {
			r.Header.Set("x-ots-accesskeyid", "someone-else")
			sign(t, r, e.srv.AccessKeySecret())
		},
		"WrongInstance": func(r *http.Request) {
			r.Header.Set("x-ots-instancename", "other-instance")
			sign(t, r, e.srv.AccessKeySecret())
		},
		// The right ID with a wrong secret, the right instance with a
		// wrong ID: knowing one of the names changes nothing.
		"RightIDWrongInstanceAndSecret": func(r *http.Request) {
			r.Header.Set("x-ots-instancename", "other-instance")
			sign(t, r, "wrong-secret")
		},
		"WrongIDAndSecret": func(r *http.Request) {
			r.Header.Set("x-ots-accesskeyid", "someone-else")
			sign(t, r, "wrong-secret")
		},
	}
	want := get(cases["WrongSecret"])
	for name, mutate := range cases {
		if got := get(mutate); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: answer %+v, differs from a wrong signature's %+v", name, got, want)
		}
	}
	// Through the SDK: the service's message for a bad signature.
	c := tablestore.NewClientWithConfig(e.srv.Endpoint(), e.srv.InstanceName(), "someone-else", e.srv.AccessKeySecret(), "", nil)
	_, err := c.ListTable()
	wantOTS(t, err, 403, "OTSAuthFailed", "Signature mismatch.")
	c = tablestore.NewClientWithConfig(e.srv.Endpoint(), "other-instance", e.srv.AccessKeyID(), e.srv.AccessKeySecret(), "", nil)
	_, err = c.ListTable()
	wantOTS(t, err, 403, "OTSAuthFailed", "Signature mismatch.")
}

func TestSignatureV4(t *testing.T) {
	e := newEnv(t)
	creds := common.CreateByCredentials(&common.DefaultCredentials{
		AccessKeyID: e.srv.AccessKeyID(), AccessKeySecret: e.srv.AccessKeySecret(),
	}, "cn-hangzhou")
	c := tablestore.NewClientWithCredentialsProvider(e.srv.Endpoint(), e.srv.InstanceName(), v4Provider{creds}, nil)
	if _, err := c.ListTable(); err != nil {
		t.Fatalf("V4-signed ListTable: %v", err)
	}
	wrong := common.CreateByCredentials(&common.DefaultCredentials{
		AccessKeyID: e.srv.AccessKeyID(), AccessKeySecret: "wrong",
	}, "cn-hangzhou")
	c = tablestore.NewClientWithCredentialsProvider(e.srv.Endpoint(), e.srv.InstanceName(), v4Provider{wrong}, nil)
	_, err := c.ListTable()
	wantOTS(t, err, 403, "OTSAuthFailed", "Signature mismatch.")
}

type v4Provider struct{ c *common.V4Credentials }

func (p v4Provider) GetCredentials() common.Credentials { return p.c }

func TestTransportChecks(t *testing.T) {
	e := newEnv(t)
	listBody := []byte{}
	t.Run("MD5", func(t *testing.T) {
		r := signedRequest(t, e.srv, "ListTable", listBody, e.srv.AccessKeySecret())
		r.Header.Set("x-ots-contentmd5", "AAAAAAAAAAAAAAAAAAAAAA==")
		sign(t, r, e.srv.AccessKeySecret()) // a valid signature over the wrong MD5
		do(t, e.srv, r).want(t, 403, "OTSAuthFailed", "Mismatch between MD5 value of request body and x-ots-contentmd5 in header.")
	})
	t.Run("BodyChangedAfterSigning", func(t *testing.T) {
		body, _ := proto.Marshal(&otsprotocol.DescribeTableRequest{TableName: proto.String("a")})
		r := signedRequest(t, e.srv, "DescribeTable", body, e.srv.AccessKeySecret())
		other, _ := proto.Marshal(&otsprotocol.DescribeTableRequest{TableName: proto.String("b")})
		r.Body = ioNop(other)
		do(t, e.srv, r).want(t, 403, "OTSAuthFailed", "Mismatch between MD5 value of request body and x-ots-contentmd5 in header.")
	})
	for _, h := range []string{"x-ots-date", "x-ots-apiversion", "x-ots-accesskeyid", "x-ots-instancename", "x-ots-contentmd5", "x-ots-signature"} {
		t.Run("Missing/"+h, func(t *testing.T) {
			r := signedRequest(t, e.srv, "ListTable", listBody, e.srv.AccessKeySecret())
			r.Header.Del(h) // checked before the signature: no need to re-sign
			do(t, e.srv, r).want(t, 400, "OTSParameterInvalid", "Missing header: "+h+".")
		})
	}
	t.Run("DateFormat", func(t *testing.T) {
		r := signedRequest(t, e.srv, "ListTable", listBody, e.srv.AccessKeySecret())
		r.Header.Set("x-ots-date", "blahblah")
		sign(t, r, e.srv.AccessKeySecret())
		do(t, e.srv, r).want(t, 400, "OTSParameterInvalid", "Invalid date format: blahblah.")
	})
	t.Run("SDKDateQuirk", func(t *testing.T) {
		// The Go SDK's layout "…05.123Z" prints month/day/hour after the dot.
		now := time.Now().UTC()
		for _, d := range []string{now.Format("2006-01-02T15:04:05.123Z"), now.Format("2006-01-02T15:04:05.000Z"), now.Format(http.TimeFormat)} {
			r := signedRequest(t, e.srv, "ListTable", listBody, e.srv.AccessKeySecret())
			r.Header.Set("x-ots-date", d)
			sign(t, r, e.srv.AccessKeySecret())
			if got := do(t, e.srv, r); got.status != 200 {
				t.Errorf("date %q: status %d %v", d, got.status, got.err)
			}
		}
	})
	t.Run("Method", func(t *testing.T) {
		r := signedRequest(t, e.srv, "ListTable", listBody, e.srv.AccessKeySecret())
		r.Method = http.MethodGet
		do(t, e.srv, r).want(t, 405, "OTSMethodNotAllowed", "Only POST method for requests is supported.")
	})
	t.Run("UnknownOperation", func(t *testing.T) {
		r := signedRequest(t, e.srv, "HelloWorld", listBody, e.srv.AccessKeySecret())
		do(t, e.srv, r).want(t, 400, "OTSUnsupportOperation", "Unsupported operation: 'HelloWorld'.")
		r = signedRequest(t, e.srv, "Search", listBody, e.srv.AccessKeySecret())
		do(t, e.srv, r).want(t, 400, "OTSUnsupportOperation", "Unsupported operation: 'Search'.")
	})
	t.Run("BodyTooLarge", func(t *testing.T) {
		r := signedRequest(t, e.srv, "PutRow", make([]byte, MaxBodySize+1), e.srv.AccessKeySecret())
		do(t, e.srv, r).want(t, 413, "OTSRequestBodyTooLarge", "The size of POST data is too large.")
	})
	t.Run("NotProtobuf", func(t *testing.T) {
		r := signedRequest(t, e.srv, "DescribeTable", []byte{0xff, 0xff, 0xff}, e.srv.AccessKeySecret())
		do(t, e.srv, r).want(t, 400, "OTSParameterInvalid", "Failed to parse the ProtoBuf message.")
	})
	t.Run("MissingRequiredField", func(t *testing.T) {
		do(t, e.srv, signedRequest(t, e.srv, "DescribeTable", nil, e.srv.AccessKeySecret())).
			want(t, 400, "OTSParameterInvalid", "Failed to parse the ProtoBuf message.")
	})
}

func ioNop(b []byte) *nopBody { return &nopBody{bytes.NewReader(b)} }

type nopBody struct{ *bytes.Reader }

func (nopBody) Close() error { return nil }

// TestResponseHeaders checks what other-language SDKs verify on every
// response: request id, body MD5, date, content type and the response
// signature "OTS id:base64(HMAC-SHA1(secret, sorted x-ots lines + "\n" + uri))".
func TestResponseHeaders(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		op   string
		body proto.Message
		code int
	}{
		{"ListTable", nil, 200},
		{"DescribeTable", &otsprotocol.DescribeTableRequest{TableName: proto.String("missing")}, 404},
	} {
		r := e.call(tc.op, tc.body)
		if r.status != tc.code {
			t.Fatalf("%s: status %d, want %d", tc.op, r.status, tc.code)
		}
		h := r.header
		sum := md5.Sum(r.body)
		if got := h.Get("x-ots-contentmd5"); got != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Errorf("%s: x-ots-contentmd5 %q does not match the body", tc.op, got)
		}
		if h.Get("x-ots-requestid") == "" || h.Get("x-ots-contenttype") == "" {
			t.Errorf("%s: missing x-ots-requestid or x-ots-contenttype: %v", tc.op, h)
		}
		d, err := time.Parse("2006-01-02T15:04:05.000000Z", h.Get("x-ots-date"))
		if err != nil || time.Since(d).Abs() > time.Minute {
			t.Errorf("%s: x-ots-date %q: %v", tc.op, h.Get("x-ots-date"), err)
		}
		var lines []string
		for k := range h {
			if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-ots-") {
				lines = append(lines, lk+":"+strings.TrimSpace(h.Get(k)))
			}
		}
		sort.Strings(lines)
		mac := hmac.New(sha1.New, []byte(e.srv.AccessKeySecret()))
		mac.Write([]byte(strings.Join(lines, "\n") + "\n/" + tc.op))
		want := "OTS " + e.srv.AccessKeyID() + ":" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		if got := h.Get("authorization"); got != want {
			t.Errorf("%s: authorization %q, want %q", tc.op, got, want)
		}
	}
	// Two requests get two request ids.
	if a, b := e.call("ListTable", nil).header.Get("x-ots-requestid"), e.call("ListTable", nil).header.Get("x-ots-requestid"); a == b {
		t.Errorf("request ids repeat: %q", a)
	}
}

// TestRequestIDUnpredictable: request ids have the service's form
// (8-4-4-4-12 hex digits) and are random: no hex digit keeps one value over
// 64 requests, as it would in a counter's or a fixed prefix's digits (the
// chance that a random digit does is 16^-63), and none repeats. An id says
// nothing about how many requests were served.
func TestRequestIDUnpredictable(t *testing.T) {
	e := newEnv(t)
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	const n = 64
	seen := map[string]bool{}
	var digits [32]map[byte]bool
	for i := range digits {
		digits[i] = map[byte]bool{}
	}
	for i := range n {
		var id string
		if i%2 == 0 {
			id = e.call("ListTable", nil).header.Get("x-ots-requestid")
		} else { // answers to failed authentications too
			r := signedRequest(t, e.srv, "ListTable", nil, "wrong")
			id = do(t, e.srv, r).header.Get("x-ots-requestid")
		}
		if !form.MatchString(id) {
			t.Fatalf("request id %q does not have the service's form 8-4-4-4-12", id)
		}
		if seen[id] {
			t.Fatalf("request id %q repeats", id)
		}
		seen[id] = true
		hex := strings.ReplaceAll(id, "-", "")
		for j := range digits {
			digits[j][hex[j]] = true
		}
	}
	for j, d := range digits {
		if len(d) == 1 {
			t.Errorf("hex digit %d of the request id is the same in %d requests: ids are not random", j, n)
		}
	}
}

// TestInProcess uses Handler through Transport, with no socket.
func TestInProcess(t *testing.T) {
	srv, err := NewServer(mem(Options{NoListen: true, InstanceName: "inst", AccessKeyID: "ak", AccessKeySecret: "sk"}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := tablestore.NewDefaultTableStoreConfig()
	cfg.Transport = srv.Transport()
	c := tablestore.NewClientWithConfig(srv.Endpoint(), "inst", "ak", "sk", "", cfg)
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("k", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, TableOption: tablestore.NewTableOption(-1, 1), ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	lt, err := c.ListTable()
	if err != nil || len(lt.TableNames) != 1 || lt.TableNames[0] != "t" {
		t.Fatalf("ListTable = %v, %v", lt, err)
	}
	if srv.Handler() == nil {
		t.Fatal("nil Handler")
	}
}
