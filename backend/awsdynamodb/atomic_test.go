package awsdynamodb_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/localengine"
)

// hookTransport counts calls per operation (countingTransport) and runs
// before once, just before the first call of operation op is sent.
type hookTransport struct {
	*countingTransport
	op     string
	once   sync.Once
	before func()
}

func (h *hookTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.") == h.op && h.before != nil {
		h.once.Do(h.before)
	}
	return h.countingTransport.RoundTrip(r)
}

// newMotoHooked opens the adapter on moto with a hookTransport.
func newMotoHooked(t *testing.T, op string) (*awsdynamodb.Backend, *hookTransport) {
	t.Helper()
	ep := needMoto(t)
	ht := &hookTransport{countingTransport: newCountingTransport(), op: op}
	c := dynamodb.NewFromConfig(awsConfig(&http.Client{Transport: ht}), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ep) })
	b, err := awsdynamodb.New(c, &awsdynamodb.Options{Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	return b, ht
}

func pk(p string, s int64) tablekit.PrimaryKey {
	return tablekit.PrimaryKey{{Name: "pk", Value: tablekit.String(p)}, {Name: "sk", Value: tablekit.Integer(s)}}
}

// TestAtomicWriteOneCall: unconditional puts and deletes, and ones
// conditioned on existence only, need no read: the atomic write is one
// TransactWriteItems and nothing else.
func TestAtomicWriteOneCall(t *testing.T) {
	b, ct := newMotoHooked(t, "")
	ctx := context.Background()
	_, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	var ws []tablekit.BatchWrite
	for i := range 10 {
		ws = append(ws, tablekit.BatchPut("", pk("a", int64(i)), []tablekit.Column{{Name: "c", Value: tablekit.Integer(int64(i))}}))
	}
	ws[3].Condition = tablekit.Condition{Row: tablekit.ExpectNotExist}
	// The backend's first atomic write also asks, once, whether the store
	// serves TransactWriteItems (probe.go).
	ct.reset()
	if _, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", pk("first", 0), nil)}); err != nil {
		t.Fatal(err)
	}
	if n := ct.get("TransactWriteItems"); n != 2 {
		t.Errorf("the first atomic write: %d TransactWriteItems, want 2 (the probe, the write)", n)
	}
	ct.reset()
	if _, err := tbl.AtomicWrite(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if n, g, bg := ct.get("TransactWriteItems"), ct.get("GetItem"), ct.get("BatchGetItem"); n != 1 || g != 0 || bg != 0 {
		t.Errorf("10 puts: %d TransactWriteItems, %d GetItem, %d BatchGetItem; want 1, 0, 0", n, g, bg)
	}
	// The same condition now fails: the one-call form cannot say why, so
	// the adapter reads and answers for write 3, writing nothing.
	ws[0] = tablekit.BatchDelete("", pk("a", 0))
	_, err := tbl.AtomicWrite(ctx, ws)
	var ae *tablekit.AtomicWriteError
	if !errors.Is(err, tablekit.ErrConditionFailed) || !errors.As(err, &ae) || ae.Index != 3 {
		t.Fatalf("put ExpectNotExist of an existing row at 3: %v, want ErrConditionFailed at index 3", err)
	}
	if _, found, err := tbl.GetRow(ctx, pk("a", 0)); err != nil || !found {
		t.Errorf("row 0 after the refused atomic write: found=%v, %v; want it kept", found, err)
	}
}

// TestAtomicWriteRetriesLostRace: another writer changes a row between the
// atomic write's read and its TransactWriteItems; the transaction is
// canceled, and the adapter reads again and applies the increment on top
// of the other writer's, so nothing is lost.
func TestAtomicWriteRetriesLostRace(t *testing.T) {
	b, ht := newMotoHooked(t, "TransactWriteItems")
	ctx := context.Background()
	db, tbl := newTable(t, b, nil, tablekit.TableOptions{})
	if _, err := tbl.UpdateRow(ctx, pk("a", 1), []tablekit.Change{tablekit.Increment("n", 1)}); err != nil {
		t.Fatal(err)
	}
	other := tablekit.NewClient(newMotoBackend(t)).Table(tbl.Name())
	ht.before = func() {
		if _, err := other.UpdateRow(ctx, pk("a", 1), []tablekit.Change{tablekit.Increment("n", 10)}); err != nil {
			t.Error(err)
		}
	}
	_ = db
	ht.reset()
	res, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{
		tablekit.BatchUpdate("", pk("a", 1), []tablekit.Change{tablekit.Increment("n", 1)}),
		tablekit.BatchPut("", pk("a", 2), []tablekit.Column{{Name: "c", Value: tablekit.String("x")}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0].Increments; len(got) != 1 || !got[0].Value.Equal(tablekit.Integer(12)) {
		t.Errorf("increments %+v, want n=12 (1, then the other writer's 10, then this 1)", got)
	}
	if n := ht.get("TransactWriteItems"); n != 2 {
		t.Errorf("%d TransactWriteItems, want 2 (one canceled by the race, one applied)", n)
	}
	row, _, err := tbl.GetRow(ctx, pk("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := row.Columns[0].Value.Int(); v != 12 {
		t.Errorf("n = %v after the race, want 12", row.Columns[0].Value)
	}
}

// TestAtomicWriteStaleOptions: an UpdateTable lowering MaxVersions lands
// between the atomic write's read and its TransactWriteItems, whose
// DeleteVersion would bring a version the new options hide back into view.
// The metadata ConditionCheck in the transaction catches it, the Client
// reads the table again and retries, and the row reads as on the local
// engine, where the same writes run in the same order.
func TestAtomicWriteStaleOptions(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	run := func(be tablekit.Backend, other tablekit.Backend, name string, hook func(func())) tablekit.Row {
		t.Helper()
		clock := tablekit.NewManualClock(now)
		db := tablekit.NewClient(be, tablekit.WithClock(clock))
		if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: []tablekit.KeyColumn{{Name: "pk", Type: tablekit.TypeString}, {Name: "sk", Type: tablekit.TypeInteger}},
			Options: tablekit.TableOptions{MaxVersions: 3}}); err != nil {
			t.Fatal(err)
		}
		tbl := db.Table(name)
		ms := now.UnixMilli()
		for i := int64(1); i <= 3; i++ {
			if _, err := tbl.UpdateRow(ctx, pk("a", 1), []tablekit.Change{tablekit.PutAt("c", tablekit.Integer(i), ms-(4-i)*1000)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := tbl.GetRow(ctx, pk("a", 1)); err != nil { // db caches MaxVersions 3
			t.Fatal(err)
		}
		hook(func() {
			if err := tablekit.NewClient(other, tablekit.WithClock(clock)).UpdateTable(ctx, name, tablekit.TableOptions{MaxVersions: 1}); err != nil {
				t.Error(err)
			}
		})
		if _, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{
			tablekit.BatchUpdate("", pk("a", 1), []tablekit.Change{tablekit.DeleteVersion("c", ms-1000)}),
			tablekit.BatchPut("", pk("a", 2), []tablekit.Column{{Name: "d", Value: tablekit.Integer(1)}}),
		}); err != nil {
			t.Fatal(err)
		}
		row, _, err := tbl.GetRow(ctx, pk("a", 1), tablekit.MaxVersions(3))
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	le := localengine.New()
	want := run(le, le, "stale", func(update func()) { update() })

	b, ht := newMotoHooked(t, "TransactWriteItems")
	got := run(b, newMotoBackend(t), uniqueName("stale"), func(update func()) { ht.before = update })
	if !rowsEqual(got, want) {
		t.Errorf("row after the atomic write under options changed meanwhile:\n got %+v\nwant %+v (local engine)", got.Columns, want.Columns)
	}
	if n := ht.get("TransactWriteItems"); n < 2 {
		t.Errorf("%d TransactWriteItems, want the first refused by the metadata check and a retry", n)
	}
}

func rowsEqual(a, b tablekit.Row) bool {
	if len(a.Columns) != len(b.Columns) {
		return false
	}
	for i := range a.Columns {
		x, y := a.Columns[i], b.Columns[i]
		if x.Name != y.Name || x.Version != y.Version || !x.Value.Equal(y.Value) {
			return false
		}
	}
	return true
}

// TestAtomicWriteRefusedWithoutTransactions: with NoTransactions (and
// ?transactions=false) the backend declares no atomic writes and the
// Client refuses them before any call; by default it declares them.
func TestAtomicWriteRefusedWithoutTransactions(t *testing.T) {
	ctx := context.Background()
	ct := newCountingTransport()
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: ct}), &awsdynamodb.Options{NoTransactions: true})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(b)
	if db.Capabilities().AtomicWrite {
		t.Error("NoTransactions: Capabilities().AtomicWrite is true")
	}
	_, err = db.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("t", pk("a", 1), nil)})
	if !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Errorf("AtomicWrite with NoTransactions: %v, want ErrUnimplemented", err)
	}
	if n := ct.get("TransactWriteItems"); n != 0 {
		t.Errorf("%d TransactWriteItems sent, want none", n)
	}
	if d, _ := awsdynamodb.New(newClient(t, nil), nil); !tablekit.NewClient(d).Capabilities().AtomicWrite {
		t.Error("by default Capabilities().AtomicWrite is false")
	}
	for url, want := range map[string]bool{
		"dynamodb://?region=" + dynalitetest.Region + "&endpoint=" + needDynalite(t) + "&transactions=false": false,
		"dynamodb://?region=" + dynalitetest.Region + "&endpoint=" + needDynalite(t):                         true,
	} {
		t.Setenv("AWS_ACCESS_KEY_ID", "test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
		db, err := tablekit.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if got := db.Capabilities().AtomicWrite; got != want {
			t.Errorf("%s: Capabilities().AtomicWrite = %v, want %v", url, got, want)
		}
		db.Close()
	}
}
