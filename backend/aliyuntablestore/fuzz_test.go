package aliyuntablestore_test

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/plainbuffer"
)

// FuzzMalformedAnswers feeds the SDK, through the adapter, answers whose
// row bytes are arbitrary. The SDK's PlainBuffer reader panics on some of
// them (an INF_MAX in next_start_primary_key dereferences nil); the adapter
// must turn every such answer into an error, never a crash, and never
// return a row with a zero Value.
func FuzzMalformedAnswers(f *testing.F) {
	infKey := plainbuffer.EncodeRow(plainbuffer.Row{PrimaryKey: []plainbuffer.Cell{{Name: "id", Value: plainbuffer.InfMaxValue()}}})
	goodRow := plainbuffer.EncodeRow(plainbuffer.Row{
		PrimaryKey: []plainbuffer.Cell{{Name: "id", Value: plainbuffer.StringValue("a")}},
		Columns:    []plainbuffer.Cell{{Name: "n", Value: plainbuffer.IntegerValue(1), Timestamp: new(int64)}},
	})
	f.Add(goodRow, []byte(nil))
	f.Add(goodRow, infKey)
	f.Add(infKey, infKey)
	f.Add([]byte{0x75, 0, 0, 0, 1}, []byte{0x75, 0, 0, 0})
	f.Add([]byte{0x75, 0, 0, 0, 1, 3, 4, 0xff, 0xff, 0xff, 0x7f}, goodRow)

	consumed := &otsprotocol.ConsumedCapacity{CapacityUnit: &otsprotocol.CapacityUnit{Read: proto.Int32(1), Write: proto.Int32(0)}}
	var row, next []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m proto.Message
		switch r.URL.Path {
		case "/GetRow":
			m = &otsprotocol.GetRowResponse{Consumed: consumed, Row: row}
		case "/GetRange":
			m = &otsprotocol.GetRangeResponse{Consumed: consumed, Rows: row, NextStartPrimaryKey: next}
		case "/BatchGetRow":
			m = &otsprotocol.BatchGetRowResponse{Tables: []*otsprotocol.TableInBatchGetRowResponse{{
				TableName: proto.String("t"),
				Rows:      []*otsprotocol.RowInBatchGetRowResponse{{IsOk: proto.Bool(true), Consumed: consumed, Row: row}},
			}}}
		case "/UpdateRow":
			m = &otsprotocol.UpdateRowResponse{Consumed: consumed, Row: row}
		default:
			w.WriteHeader(http.StatusNotFound)
			return
		}
		b, _ := proto.Marshal(m)
		w.Write(b)
	}))
	defer srv.Close()
	cfg := aliyuntablestore.DefaultConfig()
	cfg.RetryTimes = 0
	b, err := aliyuntablestore.Open(context.Background(), &aliyuntablestore.Options{Endpoint: srv.URL, Instance: "i", AccessKeyID: "a", AccessKeySecret: "s", Config: cfg})
	if err != nil {
		f.Fatal(err)
	}
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}}
	key := tablekit.Key("id", tablekit.String("a"))
	now := time.Now().UnixMilli()
	valid := func(t *testing.T, rows ...*tablekit.Row) {
		for _, r := range rows {
			if r == nil {
				continue
			}
			for _, c := range r.Columns {
				if !c.Value.IsValid() {
					t.Errorf("column %q has an invalid value", c.Name)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, r, n []byte) {
		row, next = r, n // the server is used by this goroutine only
		ctx := context.Background()
		got, _ := b.GetRow(ctx, &tablekit.GetRowRequest{Meta: meta, Key: key, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now})
		valid(t, got)
		page, err := b.GetRange(ctx, &tablekit.GetRangeRequest{Meta: meta, Start: tablekit.Key("id", tablekit.InfMin), End: tablekit.Key("id", tablekit.InfMax), Limit: 10, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now})
		if err == nil {
			for i := range page.Rows {
				valid(t, &page.Rows[i])
			}
			for _, p := range page.Next {
				if !p.Value.Type().IsKeyType() {
					t.Errorf("next key has a %v column", p.Value.Type())
				}
			}
		}
		res, err := b.BatchGetRow(ctx, []*tablekit.GetRowRequest{{Meta: meta, Key: key, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: now}})
		if err == nil {
			valid(t, res[0].Row)
		}
		_, _ = b.Write(ctx, &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WriteUpdate, Key: key, Now: now, Changes: []tablekit.Change{{Kind: tablekit.ChangeIncrement, Column: "n", Delta: 1}}})
	})
}
