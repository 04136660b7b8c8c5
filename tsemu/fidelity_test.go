package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// fidelityDir holds calls recorded against the real Tablestore service
// (../shared/fidelity next to the checkout; see its README). The files are
// read in place, never copied into the repository.
var fidelityDir = filepath.Join("..", "..", "shared", "fidelity", "tablestore-recordings")

// knownMismatches are the recorded calls the emulator answers differently,
// each with its reason (also listed in the package doc). The test fails
// when one of them starts to match, so the list stays exact. There are
// none: every recorded call, the local transactions included, matches.
var knownMismatches = map[string]string{}

// recording is one recorded call.
type recording struct {
	name   string // file name without .json
	group  string // the test that made it
	index  int    // insertionIndex
	op     string
	body   []byte // the request body to send
	status int
	resp   []byte
}

type stub struct {
	Request struct {
		URL          string           `json:"url"`
		BodyPatterns []map[string]any `json:"bodyPatterns"`
	} `json:"request"`
	Response struct {
		Status     int    `json:"status"`
		Base64Body string `json:"base64Body"`
	} `json:"response"`
	InsertionIndex int `json:"insertionIndex"`
}

var groupName = regexp.MustCompile(`^(.*)-post-\d+$`)

// loadRecordings reads every stub and orders the calls as they were made:
// groups (one per recorded test) by ascending insertionIndex, and inside a
// group by descending insertionIndex (the recorder numbers a test's calls
// from its last).
func loadRecordings(t *testing.T) []recording {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fidelityDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no recordings in %s: CI must have ../shared/fidelity", fidelityDir)
		}
		t.Skipf("no recordings in %s", fidelityDir)
	}
	var recs []recording
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s stub
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		m := groupName.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("%s: unexpected file name", f)
		}
		r := recording{name: name, group: m[1], index: s.InsertionIndex, op: strings.TrimPrefix(s.Request.URL, "/"), status: s.Response.Status}
		if r.resp, err = base64.StdEncoding.DecodeString(s.Response.Base64Body); err != nil {
			t.Fatalf("%s: response body: %v", f, err)
		}
		if len(s.Request.BodyPatterns) != 1 {
			t.Fatalf("%s: %d body patterns", f, len(s.Request.BodyPatterns))
		}
		bp := s.Request.BodyPatterns[0]
		switch {
		case bp["binaryEqualTo"] != nil:
			r.body, err = base64.StdEncoding.DecodeString(bp["binaryEqualTo"].(string))
		case bp["equalToJson"] != nil:
			r.body, err = canonicalRequest(bp["equalToJson"].(string))
		case bp["equalTo"] != nil:
			r.body = []byte(bp["equalTo"].(string))
		default:
			err = fmt.Errorf("no usable body pattern in %v", bp)
		}
		if err != nil {
			t.Fatalf("%s: request: %v", f, err)
		}
		recs = append(recs, r)
	}
	first := map[string]int{}
	for _, r := range recs {
		if i, ok := first[r.group]; !ok || r.index < i {
			first[r.group] = r.index
		}
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if a.group != b.group {
			return first[a.group] < first[b.group]
		}
		return a.index > b.index
	})
	return recs
}

// canonicalRequest rebuilds a PutRow or DeleteRow body from the recorder's
// canonical JSON: table, one row (key and typed cells), and the Condition
// message in hex.
func canonicalRequest(s string) ([]byte, error) {
	type cell struct{ T, V string }
	var c struct {
		Op    string
		Table string
		Rows  []struct {
			PK           map[string]cell
			Cells        map[string]cell
			DeleteMarker bool
		}
		Condition string
	}
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, err
	}
	if len(c.Rows) != 1 {
		return nil, fmt.Errorf("%d rows", len(c.Rows))
	}
	condBytes, err := hex.DecodeString(c.Condition)
	if err != nil {
		return nil, err
	}
	var cond otsprotocol.Condition
	if err := proto.Unmarshal(condBytes, &cond); err != nil {
		return nil, err
	}
	value := func(x cell) (*plainbuffer.Value, error) {
		switch strings.TrimPrefix(x.T, "PK:") {
		case "STRING":
			return plainbuffer.StringValue(x.V), nil
		case "INTEGER":
			i, err := strconv.ParseInt(x.V, 10, 64)
			return plainbuffer.IntegerValue(i), err
		case "BOOLEAN":
			b, err := strconv.ParseBool(x.V)
			return plainbuffer.BooleanValue(b), err
		case "DOUBLE":
			f, err := strconv.ParseFloat(x.V, 64)
			return plainbuffer.DoubleValue(f), err
		case "BINARY":
			var ints []byte
			var raw []int
			if err := json.Unmarshal([]byte(x.V), &raw); err != nil {
				return nil, err
			}
			for _, i := range raw {
				ints = append(ints, byte(i))
			}
			if ints == nil {
				ints = []byte{}
			}
			return plainbuffer.BlobValue(ints), nil
		}
		return nil, fmt.Errorf("unknown cell type %q", x.T)
	}
	cells := func(m map[string]cell) ([]plainbuffer.Cell, error) {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		var out []plainbuffer.Cell
		for _, n := range names {
			v, err := value(m[n])
			if err != nil {
				return nil, fmt.Errorf("cell %s: %w", n, err)
			}
			out = append(out, plainbuffer.Cell{Name: n, Value: v})
		}
		return out, nil
	}
	row := c.Rows[0]
	pk, err := cells(row.PK)
	if err != nil {
		return nil, err
	}
	cols, err := cells(row.Cells)
	if err != nil {
		return nil, err
	}
	switch c.Op {
	case "PutRow":
		return proto.Marshal(&otsprotocol.PutRowRequest{
			TableName: proto.String(c.Table), Condition: &cond,
			Row: plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: pk, Columns: cols}),
		})
	case "DeleteRow":
		return proto.Marshal(&otsprotocol.DeleteRowRequest{
			TableName: proto.String(c.Table), Condition: &cond,
			PrimaryKey: plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: pk, DeleteMarker: row.DeleteMarker}),
		})
	}
	return nil, fmt.Errorf("unknown op %q", c.Op)
}

// responseMessage returns an empty response message for op.
func responseMessage(op string) proto.Message {
	switch op {
	case "PutRow":
		return new(otsprotocol.PutRowResponse)
	case "DeleteRow":
		return new(otsprotocol.DeleteRowResponse)
	case "GetRange":
		return new(otsprotocol.GetRangeResponse)
	case "BatchGetRow":
		return new(otsprotocol.BatchGetRowResponse)
	case "DescribeTable":
		return new(otsprotocol.DescribeTableResponse)
	case "StartLocalTransaction":
		return new(otsprotocol.StartLocalTransactionResponse)
	case "CommitTransaction":
		return new(otsprotocol.CommitTransactionResponse)
	case "AbortTransaction":
		return new(otsprotocol.AbortTransactionResponse)
	}
	return nil
}

// answerFields flattens an answer into field path → value: the status,
// the error code and message, or every field of the decoded response.
// PlainBuffer rows are decoded; what differs by nature between two runs is
// reduced to its presence: cell timestamps, the table id, creation and
// throughput-increase times.
func answerFields(op string, status int, body []byte) map[string]string {
	out := map[string]string{"status": strconv.Itoa(status)}
	if status/100 != 2 {
		var e otsprotocol.Error
		if err := proto.Unmarshal(body, &e); err != nil {
			out["error"] = "undecodable: " + err.Error()
			return out
		}
		out["code"] = e.GetCode()
		out["message"] = e.GetMessage()
		return out
	}
	m := responseMessage(op)
	if m == nil {
		out["body"] = hex.EncodeToString(body)
		return out
	}
	if err := proto.Unmarshal(body, m); err != nil {
		out["body"] = "undecodable: " + err.Error()
		return out
	}
	flatten(out, "", reflect.ValueOf(m))
	for k := range out {
		switch {
		case k == ".#9", // creation_time, unknown to the SDK's descriptor
			strings.HasSuffix(k, ".LastIncreaseTime"), k == "TableMeta.TableId",
			k == "TransactionId": // a new id per transaction
			out[k] = "<present>"
		}
	}
	return out
}

var rowFields = map[string]bool{"Row": true, "Rows": true, "NextStartPrimaryKey": true}

func flatten(out map[string]string, path string, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Elem().Kind() != reflect.Struct {
			out[path] = fmt.Sprint(v.Elem().Interface())
			return
		}
		flatten(out, path, v.Elem())
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Name == "XXX_unrecognized" {
				unknownFields(out, path, v.Field(i).Bytes())
				continue
			}
			if !f.IsExported() || strings.HasPrefix(f.Name, "XXX_") {
				continue
			}
			p := strings.TrimPrefix(path+"."+f.Name, ".")
			fv := v.Field(i)
			if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Uint8 {
				if !fv.IsNil() {
					if rowFields[f.Name] {
						out[p] = describeRows(fv.Bytes())
					} else {
						out[p] = hex.EncodeToString(fv.Bytes())
					}
				}
				continue
			}
			flatten(out, p, fv)
		}
	case reflect.Slice:
		for i := range v.Len() {
			flatten(out, fmt.Sprintf("%s[%d]", path, i), v.Index(i))
		}
	default:
		out[path] = fmt.Sprint(v.Interface())
	}
}

// unknownFields lists fields the SDK's generated code does not know
// (table_id, for one) by number.
func unknownFields(out map[string]string, path string, b []byte) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			out[path+".#?"] = "malformed"
			return
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			out[path+".#?"] = "malformed"
			return
		}
		out[fmt.Sprintf("%s.#%d", path, num)] = hex.EncodeToString(b[:m])
		b = b[m:]
	}
}

// describeRows renders a PlainBuffer block without cell timestamps.
func describeRows(b []byte) string {
	if len(b) == 0 {
		return "<empty>"
	}
	rows, err := plainbuffer.DecodeRows(b)
	if err != nil {
		return "undecodable: " + err.Error()
	}
	var sb strings.Builder
	for _, r := range rows {
		sb.WriteString("{")
		for _, c := range r.PrimaryKey {
			fmt.Fprintf(&sb, "%s=%s ", c.Name, valueString(c.Value))
		}
		sb.WriteString("|")
		for _, c := range r.Columns {
			fmt.Fprintf(&sb, " %s=%s", c.Name, valueString(c.Value))
			if c.Op != plainbuffer.OpPut {
				fmt.Fprintf(&sb, "(%v)", c.Op)
			}
		}
		if r.DeleteMarker {
			sb.WriteString(" DELETE")
		}
		sb.WriteString("}")
	}
	return sb.String()
}

func valueString(v *plainbuffer.Value) string {
	if v == nil {
		return "<nil>"
	}
	switch v.Type {
	case plainbuffer.TypeInteger:
		return strconv.FormatInt(v.Int, 10)
	case plainbuffer.TypeDouble:
		return strconv.FormatUint(math.Float64bits(v.Float), 16)
	case plainbuffer.TypeBoolean:
		return strconv.FormatBool(v.Bool)
	case plainbuffer.TypeString:
		return strconv.Quote(string(v.Bytes))
	case plainbuffer.TypeBlob:
		return "0x" + hex.EncodeToString(v.Bytes)
	}
	return v.Type.String()
}

// diffFields lists the fields whose values differ, sorted.
func diffFields(want, got map[string]string) []string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("%s: want %s, missing", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("%s: want %s, got %s", k, w, g))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s: unexpected %s", k, g))
		}
	}
	sort.Strings(d)
	return d
}

// TestRecordedService replays the calls recorded against the real
// Tablestore service, in their recorded order, on tables created from the
// recorded DescribeTable answers, and compares each decoded answer with
// the recorded one field by field. It logs the matches per operation and
// requires the mismatches to be exactly knownMismatches.
func TestRecordedService(t *testing.T) {
	recs := loadRecordings(t)
	e := newEnv(t)
	replay(t, recs, func(op string, body []byte) rawResp {
		return do(t, e.srv, signedRequest(t, e.srv, op, body, e.srv.AccessKeySecret()))
	})
}

// TestRecordedServiceOverFile replays the recorded calls against
// `tablestore-emulator -backend file://DIR`: the same answers from the
// durable engine, through the command, over the network.
func TestRecordedServiceOverFile(t *testing.T) {
	recs := loadRecordings(t)
	emu := startEmulator(t, "-backend", "file://"+filepath.ToSlash(t.TempDir()))
	replay(t, recs, func(op string, body []byte) rawResp {
		return doWith(t, http.DefaultTransport, signedRequestTo(t, emu.endpoint, DefaultInstanceName, DefaultAccessKeyID, op, body, emu.secret))
	})
}

// replay creates the recorded tables through send, then sends every
// recorded call and checks the answers (see TestRecordedService).
func replay(t *testing.T, recs []recording, send func(op string, body []byte) rawResp) {
	t.Helper()
	call := func(op string, m proto.Message) rawResp {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return send(op, b)
	}
	// Create every table from its first recorded DescribeTable answer.
	created := map[string]bool{}
	for _, r := range recs {
		if r.op != "DescribeTable" || r.status != 200 {
			continue
		}
		var d otsprotocol.DescribeTableResponse
		if err := proto.Unmarshal(r.resp, &d); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		name := d.GetTableMeta().GetTableName()
		if created[name] {
			continue
		}
		created[name] = true
		o := d.GetTableOptions()
		req := &otsprotocol.CreateTableRequest{
			TableMeta: &otsprotocol.TableMeta{
				TableName: proto.String(name), PrimaryKey: d.TableMeta.PrimaryKey, DefinedColumn: d.TableMeta.DefinedColumn,
			},
			ReservedThroughput: &otsprotocol.ReservedThroughput{CapacityUnit: d.GetReservedThroughputDetails().GetCapacityUnit()},
			TableOptions: &otsprotocol.TableOptions{
				TimeToLive: o.TimeToLive, MaxVersions: o.MaxVersions, DeviationCellVersionInSec: o.DeviationCellVersionInSec,
			},
		}
		for _, im := range d.IndexMetas {
			req.IndexMetas = append(req.IndexMetas, &otsprotocol.IndexMeta{
				Name: im.Name, PrimaryKey: im.PrimaryKey, DefinedColumn: im.DefinedColumn,
				IndexUpdateMode: im.IndexUpdateMode, IndexType: im.IndexType,
			})
		}
		if resp := call("CreateTable", req); resp.status != 200 {
			t.Fatalf("CreateTable %s from %s: %d %s %s", name, r.name, resp.status, resp.err.GetCode(), resp.err.GetMessage())
		}
	}
	type tally struct{ match, total int }
	perOp := map[string]*tally{}
	var mismatched []string
	txns := &txnReplay{ids: map[string]string{}, open: map[string]string{}, attached: map[string]int{}}
	for _, r := range recs {
		body := txns.request(t, r)
		resp := send(r.op, body)
		txns.answered(t, r, resp)
		diff := diffFields(answerFields(r.op, r.status, r.resp), answerFields(r.op, resp.status, resp.body))
		tl := perOp[r.op]
		if tl == nil {
			tl = &tally{}
			perOp[r.op] = tl
		}
		tl.total++
		_, known := knownMismatches[r.name]
		if len(diff) == 0 {
			tl.match++
			if known {
				t.Errorf("%s (%s) now matches the recorded answer: remove it from knownMismatches", r.name, r.op)
			}
			continue
		}
		mismatched = append(mismatched, r.name)
		if known {
			t.Logf("known mismatch %s (%s, %s): %s", r.name, r.op, knownMismatches[r.name], diff[0])
		} else {
			t.Errorf("%s (%s) differs from the recorded answer:\n\t%s", r.name, r.op, strings.Join(diff, "\n\t"))
		}
	}
	ops := make([]string, 0, len(perOp))
	total := 0
	for op, tl := range perOp {
		ops = append(ops, fmt.Sprintf("%s %d/%d", op, tl.match, tl.total))
		total += tl.match
	}
	sort.Strings(ops)
	t.Logf("recorded calls matching: %d/%d (%s)", total, len(recs), strings.Join(ops, ", "))
	if len(mismatched) != len(knownMismatches) {
		t.Errorf("%d calls differ, %d are known mismatches", len(mismatched), len(knownMismatches))
	}
	txns.check(t)
}

// txnReplay re-attaches local transactions in the replay. The recorder
// kept PutRow and DeleteRow in a canonical form without transaction_id,
// and CommitTransaction and AbortTransaction name the service's ids. So a
// write to a partition key a recorded transaction holds gets the id the
// emulator answered for it (the service refuses such a write without the
// id, so the recorded one carried it), and a commit or an abort gets the
// emulator's id for the recorded one.
type txnReplay struct {
	ids      map[string]string // recorded id → emulator's
	open     map[string]string // table and partition key → emulator's id
	started  []string          // emulator ids, in order
	attached map[string]int    // emulator id → writes sent with it
}

// partitionOf names the partition key of a PlainBuffer key or row.
func partitionOf(t *testing.T, table string, b []byte) string {
	t.Helper()
	row, err := plainbuffer.DecodeRow(b)
	if err != nil || len(row.PrimaryKey) == 0 {
		t.Fatalf("recorded key of %s: %v", table, err)
	}
	pk := row.PrimaryKey[0]
	return table + "\x00" + pk.Name + "=" + valueString(pk.Value)
}

// request returns the body to send for r.
func (x *txnReplay) request(t *testing.T, r recording) []byte {
	t.Helper()
	var m interface {
		proto.Message
		GetTableName() string
	}
	var key func() []byte
	var setID func(string)
	switch r.op {
	case "PutRow":
		req := new(otsprotocol.PutRowRequest)
		m, key, setID = req, func() []byte { return req.Row }, func(id string) { req.TransactionId = &id }
	case "UpdateRow":
		req := new(otsprotocol.UpdateRowRequest)
		m, key, setID = req, func() []byte { return req.RowChange }, func(id string) { req.TransactionId = &id }
	case "DeleteRow":
		req := new(otsprotocol.DeleteRowRequest)
		m, key, setID = req, func() []byte { return req.PrimaryKey }, func(id string) { req.TransactionId = &id }
	case "CommitTransaction", "AbortTransaction":
		// Both messages are one transaction_id, field 1.
		var req otsprotocol.CommitTransactionRequest
		if err := proto.Unmarshal(r.body, &req); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		id, ok := x.ids[req.GetTransactionId()]
		if !ok {
			t.Fatalf("%s: transaction %q was not started in the replay", r.name, req.GetTransactionId())
		}
		for part, open := range x.open {
			if open == id {
				delete(x.open, part)
			}
		}
		b, err := proto.Marshal(&otsprotocol.CommitTransactionRequest{TransactionId: &id})
		if err != nil {
			t.Fatal(err)
		}
		return b
	default:
		return r.body
	}
	if err := proto.Unmarshal(r.body, m); err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	id, ok := x.open[partitionOf(t, m.GetTableName(), key())]
	if !ok {
		return r.body
	}
	setID(id)
	x.attached[id]++
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answered notes the transaction a StartLocalTransaction opened.
func (x *txnReplay) answered(t *testing.T, r recording, resp rawResp) {
	t.Helper()
	if r.op != "StartLocalTransaction" || r.status != 200 || resp.status != 200 {
		return
	}
	var req otsprotocol.StartLocalTransactionRequest
	var rec, got otsprotocol.StartLocalTransactionResponse
	for _, u := range []struct {
		b []byte
		m proto.Message
	}{{r.body, &req}, {r.resp, &rec}, {resp.body, &got}} {
		if err := proto.Unmarshal(u.b, u.m); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	x.ids[rec.GetTransactionId()] = got.GetTransactionId()
	x.open[partitionOf(t, req.GetTableName(), req.Key)] = got.GetTransactionId()
	x.started = append(x.started, got.GetTransactionId())
}

// check requires every transaction to have been used by a write and ended.
func (x *txnReplay) check(t *testing.T) {
	t.Helper()
	if len(x.started) == 0 {
		t.Error("the replay started no local transaction")
	}
	for _, id := range x.started {
		if x.attached[id] == 0 {
			t.Errorf("transaction %s: no recorded write was sent with it", id)
		}
	}
	for part := range x.open {
		t.Errorf("the transaction on %q was never committed or aborted", part)
	}
	t.Logf("local transactions replayed: %d, writes sent in them: %v", len(x.started), x.attached)
}
