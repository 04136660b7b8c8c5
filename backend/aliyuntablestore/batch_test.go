package aliyuntablestore_test

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/plainbuffer"
	"github.com/tablekit/tablekit/localengine"
)

// When the server refuses a whole batch for one table or one row (as
// Tablestore may: a missing table, an invalid row), nothing was applied;
// the adapter sends the batch again split by table, then in halves, so
// every other row is applied once and the bad ones get their own error.
func TestBatchWholeCallRefusalIsSplit(t *testing.T) {
	srv := newServer(t)
	meta := createUsers(t, srv)
	p := newProxy(t, srv)
	b := openAt(t, srv, p.URL, nil)
	p.on("/BatchWriteRow", func(w http.ResponseWriter, r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req otsprotocol.BatchWriteRowRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Error(err)
			return false
		}
		for _, tbl := range req.Tables {
			if tbl.GetTableName() == "gone" {
				return fail(404, "OTSObjectNotExist", "Requested table does not exist.")(w, r)
			}
			for _, row := range tbl.Rows {
				pr, err := plainbuffer.DecodeRow(row.RowChange)
				if err == nil && len(pr.PrimaryKey) == 1 && string(pr.PrimaryKey[0].Value.Bytes) == "poison" {
					return fail(400, "OTSParameterInvalid", "poisoned row")(w, r)
				}
			}
		}
		return false
	})
	defer p.hook.Store(nil)
	gone := &tablekit.TableMeta{Name: "gone", Key: meta.Key, Options: meta.Options}
	now := time.Now().UnixMilli()
	var writes []*tablekit.WriteRequest
	want := map[int]error{}
	for i := range 12 {
		m, id := meta, fmt.Sprintf("r%02d", i)
		switch i {
		case 3:
			m = gone
			want[i] = tablekit.ErrTableNotFound
		case 9:
			id = "poison"
			want[i] = tablekit.ErrInvalidArgument
		}
		writes = append(writes, &tablekit.WriteRequest{Meta: m, Kind: tablekit.WriteUpdate, Key: userKey(id), Now: now,
			Changes: []tablekit.Change{{Kind: tablekit.ChangeIncrement, Column: "n", Delta: 1}}})
	}
	res, err := b.BatchWriteRow(context.Background(), writes)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		var oe *tablestore.OtsError
		switch {
		case want[i] != nil && (!errors.Is(r.Err, want[i]) || !errors.As(r.Err, &oe)):
			t.Errorf("write %d: err = %v, want %v", i, r.Err, want[i])
		case want[i] == nil && r.Err != nil:
			t.Errorf("write %d: %v", i, r.Err)
		case want[i] == nil && (r.Update == nil || len(r.Update.Increments) != 1 || r.Update.Increments[0].Value != tablekit.Integer(1)):
			t.Errorf("write %d: increments %+v, want n = 1 (applied once)", i, r.Update)
		}
	}
	t.Logf("%d BatchWriteRow calls for 12 rows with 2 refused", p.seen.Load())
}

// A BatchGetRow whose reads differ in their selection per row, repeat a
// row and span tables gives the local engine's answers.
func TestBatchGetMixedReads(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	dbs := []*tablekit.Client{
		tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil)),
		tablekit.NewClient(localengine.New()),
	}
	now := time.Now().UnixMilli()
	for _, db := range dbs {
		for _, name := range []string{"t1", "t2"} {
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: usersMeta.Key, Options: tablekit.TableOptions{MaxVersions: 3}}); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				cols := []tablekit.Column{
					{Name: "a", Value: tablekit.Integer(int64(i)), Version: now - 2000},
					{Name: "a", Value: tablekit.Integer(int64(i + 10)), Version: now - 1000},
					{Name: "b", Value: tablekit.String(name), Version: now - 1000},
				}
				if i == 3 {
					cols = nil
				}
				if err := db.Table(name).PutRow(ctx, userKey(fmt.Sprint(i)), cols); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	opts := [][]tablekit.ReadOption{
		nil,
		{tablekit.Columns("b")},
		{tablekit.MaxVersions(2)},
		{tablekit.Versions(now-2000, now-1500)},
		{tablekit.Columns("a"), tablekit.WithFilter(tablekit.SingleColumnValue("b", tablekit.Equal, tablekit.String("t1")))},
		{tablekit.Columns("zz")},
	}
	var gets []tablekit.BatchGet
	for i := range 40 {
		gets = append(gets, tablekit.BatchGet{Table: []string{"t1", "t2"}[i%2], Key: userKey(fmt.Sprint(i % 5)), Options: opts[i%len(opts)]})
	}
	var answers [2][]string
	for k, db := range dbs {
		res, err := db.BatchGetRow(ctx, gets)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			answers[k] = append(answers[k], fmt.Sprint(r.Found, r.Row.Key, r.Row.Columns, r.Err))
		}
	}
	if !reflect.DeepEqual(answers[0], answers[1]) {
		for i := range answers[0] {
			if answers[0][i] != answers[1][i] {
				t.Errorf("get %d: adapter %s, local engine %s", i, answers[0][i], answers[1][i])
			}
		}
	}
}
