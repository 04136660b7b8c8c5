package awsdynamodb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
)

// lostAnswerTransport forwards every request; the first CreateTable of
// the rows' table (table, then '.' and the incarnation) reaches the
// server, and its answer is then lost, as a connection reset after the
// server acted loses it (the SDK retries it).
type lostAnswerTransport struct {
	base  http.RoundTripper
	table string // the rows' table's name, but for its incarnation
	lost  atomic.Int32
}

func (l *lostAnswerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".CreateTable") || r.Body == nil {
		return l.base.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var in struct{ TableName string }
	_ = json.Unmarshal(body, &in)
	resp, err := l.base.RoundTrip(r)
	if err != nil || !strings.HasPrefix(in.TableName, l.table+".") || !l.lost.CompareAndSwap(0, 1) {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errReset
}

// TestCreateTableAnswerLost: when the answer to the CreateTable of the
// rows' table is lost after the server made it, the SDK's retry finds the
// table; CreateTable takes it as its own (its name holds this creation's
// incarnation) and the table works, instead of failing with
// ErrAlreadyExists about a table it made itself.
func TestCreateTableAnswerLost(t *testing.T) {
	ctx := context.Background()
	name := uniqueName("lost")
	lt := &lostAnswerTransport{base: &http.Transport{}, table: name}
	b, err := awsdynamodb.New(newClient(t, &http.Client{Transport: lt}), &awsdynamodb.Options{NoTransactions: true})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(b)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}); err != nil {
		t.Fatalf("CreateTable with its answer lost once: %v", err)
	}
	if lt.lost.Load() != 1 {
		t.Fatal("no CreateTable answer was lost: the test did not test anything")
	}
	key := tablekit.Key("id", tablekit.String("a"))
	if err := db.Table(name).PutRow(ctx, key, []tablekit.Column{{Name: "c", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	if row, ok, err := db.Table(name).GetRow(ctx, key); err != nil || !ok || len(row.Columns) != 1 {
		t.Fatalf("GetRow: %v, %v, %v", row, ok, err)
	}
}
