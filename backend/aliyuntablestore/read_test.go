package aliyuntablestore_test

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/plainbuffer"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// Every read shape the adapter plans differently — projection or not,
// time range or not, filter columns inside or outside the projection,
// rows that exist without selected cells, key-only rows — gives the local
// engine's answer through GetRow, BatchGetRow and GetRange.
//
// tsemu answers as the real service does: no row when a read with
// columns_to_get selects no cell in it (with a time_range alone the row is
// found, with no columns, as the Go SDK's own TestBatchGetRow asserts).
// That is what the adapter's second reads are for. "strict" runs the same reads through a
// proxy that drops such rows itself, and checks it finds none left to drop.
func TestReadShapesMatchLocalEngine(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(map[bool]string{false: "tsemu", true: "strict"}[strict], func(t *testing.T) {
			testReadShapes(t, strict)
		})
	}
}

func testReadShapes(t *testing.T, strict bool) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	endpoint := srv.Endpoint()
	var dropped atomic.Int64
	if strict {
		p := httptest.NewServer(strictHandler(srv.Handler(), &dropped))
		defer p.Close()
		endpoint = p.URL
	}
	b, err := aliyuntablestore.Open(context.Background(), &aliyuntablestore.Options{Endpoint: endpoint, Instance: srv.InstanceName(), AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret()})
	if err != nil {
		t.Fatal(err)
	}
	dbs := map[string]*tablekit.Client{
		"adapter": tablekit.NewClient(b, tablekit.WithClock(clock)),
		"local":   tablekit.NewClient(localengine.New(), tablekit.WithClock(clock)),
	}
	now := clock.Now().UnixMilli()
	t0, t1, t2 := now-3000, now-2000, now-1000
	i64 := tablekit.Integer
	rows := []struct {
		id   string
		cols []tablekit.Column
	}{
		{"a", []tablekit.Column{{Name: "x", Value: i64(1), Version: t0}, {Name: "x", Value: i64(2), Version: t1}, {Name: "y", Value: tablekit.String("s"), Version: t2}}},
		{"b", []tablekit.Column{{Name: "y", Value: tablekit.String("t"), Version: t0}}},
		{"c", nil}, // key-only
		{"d", []tablekit.Column{{Name: "x", Value: i64(5), Version: t2}, {Name: "z", Value: tablekit.Boolean(true), Version: t1}}},
	}
	for _, db := range dbs {
		err := db.CreateTable(ctx, tablekit.TableMeta{Name: "shapes", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}, Options: tablekit.TableOptions{MaxVersions: 3}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := db.Table("shapes").PutRow(ctx, userKey(r.id), r.cols); err != nil {
				t.Fatal(err)
			}
		}
	}
	filters := []tablekit.Filter{
		nil,
		tablekit.SingleColumnValue("x", tablekit.GreaterEqual, i64(2)),
		tablekit.ColumnFilter{Column: "x", Op: tablekit.Equal, Value: i64(1), AllVersions: true},
		tablekit.ColumnFilter{Column: "y", Op: tablekit.NotEqual, Value: tablekit.String("t"), FilterIfMissing: true},
		tablekit.Not(tablekit.SingleColumnValue("z", tablekit.Equal, tablekit.Boolean(true))),
	}
	var shapes [][]tablekit.ReadOption
	for _, cols := range [][]string{nil, {"x"}, {"y"}, {"nope"}, {"id"}} {
		for _, tr := range [][2]int64{{}, {t0, t1}, {t1, now}, {now, now + 1}} {
			for _, mv := range []int{0, 1, 2} {
				for _, f := range filters {
					var o []tablekit.ReadOption
					if cols != nil {
						o = append(o, tablekit.Columns(cols...))
					}
					if tr != [2]int64{} {
						o = append(o, tablekit.Versions(tr[0], tr[1]))
					}
					if mv > 0 {
						o = append(o, tablekit.MaxVersions(mv))
					}
					if f != nil {
						o = append(o, tablekit.WithFilter(f))
					}
					shapes = append(shapes, o)
				}
			}
		}
	}
	type answer struct {
		Gets  []string
		Batch []string
		Range []string
	}
	run := func(db *tablekit.Client, opts []tablekit.ReadOption) answer {
		var a answer
		tbl := db.Table("shapes")
		var batch []tablekit.BatchGet
		for _, r := range append(rows, struct {
			id   string
			cols []tablekit.Column
		}{id: "missing"}) {
			row, found, err := tbl.GetRow(ctx, userKey(r.id), opts...)
			a.Gets = append(a.Gets, fmt.Sprint(found, row.Columns, err))
			batch = append(batch, tablekit.BatchGet{Table: "shapes", Key: userKey(r.id), Options: opts})
		}
		res, err := db.BatchGetRow(ctx, batch)
		if err != nil {
			a.Batch = append(a.Batch, err.Error())
		}
		for _, r := range res {
			a.Batch = append(a.Batch, fmt.Sprint(r.Found, r.Row.Columns, r.Err))
		}
		ropts := make([]tablekit.RangeOption, 0, len(opts)+1)
		for _, o := range opts {
			ropts = append(ropts, o)
		}
		for _, back := range []bool{false, true} {
			start, end := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
			ro := ropts
			if back {
				start, end = end, start
				ro = append(ro, tablekit.Backward())
			}
			for r, err := range tbl.Rows(ctx, start, end, append(ro, tablekit.PageSize(2))...) {
				a.Range = append(a.Range, fmt.Sprint(r.Key, r.Columns, err))
			}
		}
		return a
	}
	for i, opts := range shapes {
		want, got := run(dbs["local"], opts), run(dbs["adapter"], opts)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("shape %d: adapter\n%+v\nlocal engine\n%+v", i, got, want)
		}
	}
	t.Logf("%d read shapes agree", len(shapes))
	if strict && dropped.Load() != 0 {
		t.Errorf("the strict proxy dropped %d rows tsemu answered: tsemu no longer answers as the service", dropped.Load())
	}
}

// strictHandler serves h but drops, from GetRow and BatchGetRow answers,
// every row without attribute cells when the read had columns_to_get, and
// counts them in dropped.
func strictHandler(h http.Handler, dropped *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		empty := func(row []byte) bool {
			if len(row) == 0 {
				return false
			}
			pr, err := plainbuffer.DecodeRow(row)
			return err == nil && len(pr.Columns) == 0
		}
		if rec.Code == http.StatusOK {
			switch r.URL.Path {
			case "/GetRow":
				var req otsprotocol.GetRowRequest
				var resp otsprotocol.GetRowResponse
				if proto.Unmarshal(body, &req) == nil && proto.Unmarshal(out, &resp) == nil &&
					len(req.ColumnsToGet) > 0 && empty(resp.Row) {
					resp.Row = []byte{}
					dropped.Add(1)
					out, _ = proto.Marshal(&resp)
				}
			case "/BatchGetRow":
				var req otsprotocol.BatchGetRowRequest
				var resp otsprotocol.BatchGetRowResponse
				if proto.Unmarshal(body, &req) == nil && proto.Unmarshal(out, &resp) == nil {
					for i, tr := range resp.Tables {
						if i >= len(req.Tables) || len(req.Tables[i].ColumnsToGet) == 0 {
							continue
						}
						for _, row := range tr.Rows {
							if row.GetIsOk() && empty(row.Row) {
								row.Row = []byte{}
								dropped.Add(1)
							}
						}
					}
					out, _ = proto.Marshal(&resp)
				}
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(out)
	})
}
