package awsdynamodb_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// ttlTransport plays DynamoDB's native TTL, which dynalite lacks: it
// answers UpdateTimeToLive and DescribeTimeToLive itself, keeping each
// table's state, and forwards every other call to dynalite.
type ttlTransport struct {
	base http.RoundTripper

	mu      sync.Mutex
	enabled map[string]bool
	calls   []string // "<table> on" / "<table> off", in order
}

func (tr *ttlTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	if op != "UpdateTimeToLive" && op != "DescribeTimeToLive" {
		return tr.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var in struct {
		TableName               string
		TimeToLiveSpecification struct {
			AttributeName string
			Enabled       bool
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, err
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []byte
	if op == "UpdateTimeToLive" {
		spec := in.TimeToLiveSpecification
		tr.enabled[in.TableName] = spec.Enabled
		state := map[bool]string{true: " on", false: " off"}[spec.Enabled]
		tr.calls = append(tr.calls, in.TableName+state)
		out, _ = json.Marshal(map[string]any{"TimeToLiveSpecification": spec})
	} else {
		status := "DISABLED"
		if tr.enabled[in.TableName] {
			status = "ENABLED"
		}
		out, _ = json.Marshal(map[string]any{"TimeToLiveDescription": map[string]any{"AttributeName": ".x", "TimeToLiveStatus": status}})
	}
	return jsonResponse(req, 200, out), nil
}

func (tr *ttlTransport) log() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.calls...)
}

// TestRaisingTTLTurnsNativeTTLOff: items carry an expiry computed with the
// TTL of their write, so once TTL is raised DynamoDB must no longer delete
// by it. Lowering TTL keeps native TTL on; raising it or setting NoExpiry
// turns it off, for good, and the metadata records that.
func TestRaisingTTLTurnsNativeTTLOff(t *testing.T) {
	ctx := context.Background()
	tr := &ttlTransport{base: http.DefaultTransport, enabled: map[string]bool{}}
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: tr}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, raise := range []time.Duration{3 * 86400 * time.Second, tablekit.NoExpiry} {
		db, tbl := newTable(t, b, nil, tablekit.TableOptions{TTL: 2 * 86400 * time.Second})
		native := nativeOf(t, b, tbl.Name())
		layout := func() bool {
			t.Helper()
			_, on, err := b.TableLayout(ctx, tbl.Name())
			if err != nil {
				t.Fatal(err)
			}
			return on
		}
		if !layout() {
			t.Fatalf("TableLayout after CreateTable: nativeTTL = false on a server with native TTL")
		}
		// Lowering TTL and changing MaxVersions keep native TTL on.
		if err := db.UpdateTable(ctx, tbl.Name(), tablekit.TableOptions{TTL: 86400 * time.Second, MaxVersions: 2}); err != nil {
			t.Fatal(err)
		}
		if !layout() {
			t.Errorf("lowering TTL turned native TTL off")
		}
		if err := db.UpdateTable(ctx, tbl.Name(), tablekit.TableOptions{TTL: raise, MaxVersions: 2}); err != nil {
			t.Fatal(err)
		}
		if layout() {
			t.Errorf("TTL raised to %v: metadata still records native TTL on", raise)
		}
		tr.mu.Lock()
		on := tr.enabled[native]
		tr.mu.Unlock()
		if on {
			t.Errorf("TTL raised to %v: native TTL still enabled on %q", raise, native)
		}
		got, err := db.DescribeTable(ctx, tbl.Name())
		if err != nil || got.Options.TTL != raise || got.Options.MaxVersions != 2 {
			t.Errorf("DescribeTable after the raise: %+v, %v", got, err)
		}
		// Lowering it again does not turn native TTL back on.
		if err := db.UpdateTable(ctx, tbl.Name(), tablekit.TableOptions{TTL: 86400 * time.Second}); err != nil {
			t.Fatal(err)
		}
		if layout() {
			t.Errorf("native TTL back on after lowering TTL again")
		}
	}
	offs := 0
	for _, c := range tr.log() {
		if strings.HasSuffix(c, " off") {
			offs++
		}
	}
	if offs != 2 {
		t.Errorf("UpdateTimeToLive calls %q: want exactly one disable per table", tr.log())
	}
}
