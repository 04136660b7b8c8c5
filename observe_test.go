package tablekit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/observe"
)

// recorder is an Observer that keeps what it saw.
type recorder struct {
	mu  sync.Mutex
	ops []*recorded
}

type recorded struct {
	op      observe.Operation
	retries []observe.Retry
	out     *observe.Outcome
	ctxSeen bool // End got the context StartOperation returned
}

type recKey struct{}

func (r *recorder) StartOperation(ctx context.Context, op observe.Operation) (context.Context, observe.Observation) {
	rec := &recorded{op: op}
	r.mu.Lock()
	r.ops = append(r.ops, rec)
	r.mu.Unlock()
	return context.WithValue(ctx, recKey{}, rec), &recObs{r: r, rec: rec}
}

type recObs struct {
	r   *recorder
	rec *recorded
}

func (o *recObs) Retry(_ context.Context, rt observe.Retry) {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.rec.retries = append(o.rec.retries, rt)
}

func (o *recObs) End(ctx context.Context, out observe.Outcome) {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	o.rec.out = &out
	o.rec.ctxSeen = ctx.Value(recKey{}) == o.rec
}

func (r *recorder) find(t *testing.T, name string) *recorded {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.ops) - 1; i >= 0; i-- {
		if r.ops[i].op.Name == name {
			if r.ops[i].out == nil {
				t.Fatalf("%s was started but not ended", name)
			}
			return r.ops[i]
		}
	}
	t.Fatalf("%s was not observed; saw %d operations", name, len(r.ops))
	return nil
}

func newObserved(t *testing.T, b tablekit.Backend, opts ...tablekit.ClientOption) (*tablekit.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	db := tablekit.NewClient(b, append([]tablekit.ClientOption{tablekit.WithObserver(rec)}, opts...)...)
	t.Cleanup(func() { db.Close() })
	err := db.CreateTable(context.Background(), tablekit.TableMeta{
		Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, rec
}

func TestObserverSeesEveryOperation(t *testing.T) {
	ctx := context.Background()
	db, rec := newObserved(t, localengine.New())
	tbl := db.Table("t")
	cols := []tablekit.Column{{Name: "v", Value: tablekit.String("hello")}}
	key := tablekit.Key("k", tablekit.Integer(1))
	if err := tbl.PutRow(ctx, key, cols); err != nil {
		t.Fatal(err)
	}
	put := rec.find(t, "PutRow")
	if put.op.System != "tablekit.local" || put.op.Table != "t" || put.out.Rows != 1 || put.out.Err != nil || !put.ctxSeen {
		t.Fatalf("PutRow observed as %+v, outcome %+v", put.op, *put.out)
	}
	if want := key.Size() + len("v") + len("hello"); put.out.Bytes != want {
		t.Fatalf("PutRow bytes = %d, want %d", put.out.Bytes, want)
	}

	row, _, err := tbl.GetRow(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if get := rec.find(t, "GetRow"); get.out.Rows != 1 || get.out.Bytes != row.Size() {
		t.Fatalf("GetRow outcome %+v, row size %d", *get.out, row.Size())
	}
	if _, found, _ := tbl.GetRow(ctx, tablekit.Key("k", tablekit.Integer(2))); found {
		t.Fatal("row 2 found")
	}
	if get := rec.find(t, "GetRow"); get.out.Rows != 0 || get.out.Bytes != 0 {
		t.Fatalf("missing row's GetRow outcome %+v", *get.out)
	}

	// A failed condition is the operation's error, with its error.type.
	err = tbl.PutRow(ctx, key, cols, tablekit.ExpectNotExist)
	if !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("PutRow ExpectNotExist = %v", err)
	}
	if put := rec.find(t, "PutRow"); put.out.Err == nil || put.out.ErrorType != "condition_failed" || put.out.Rows != 0 {
		t.Fatalf("failed PutRow outcome %+v", *put.out)
	}

	writes := []tablekit.BatchWrite{
		{Table: "t", Kind: tablekit.WritePut, Key: tablekit.Key("k", tablekit.Integer(2)), Columns: cols},
		{Table: "t", Kind: tablekit.WritePut, Key: tablekit.Key("k", tablekit.Integer(3)), Columns: cols},
		{Table: "t", Kind: tablekit.WritePut, Key: key, Columns: cols, Condition: tablekit.Condition{Row: tablekit.ExpectNotExist}},
	}
	if _, err := db.BatchWriteRow(ctx, writes); err != nil {
		t.Fatal(err)
	}
	bw := rec.find(t, "BatchWriteRow")
	if bw.op.BatchSize != 3 || bw.op.Table != "t" || bw.out.Rows != 2 || bw.out.Failed != 1 || bw.out.Err != nil {
		t.Fatalf("BatchWriteRow observed as %+v, outcome %+v", bw.op, *bw.out)
	}

	n := 0
	for _, err := range tbl.Rows(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if rows := rec.find(t, "Rows"); rows.out.Rows != n || n != 3 {
		t.Fatalf("Rows yielded %d, observed %+v", n, *rows.out)
	}
	n = 0
	for _, err := range tbl.Scan(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if scan := rec.find(t, "Scan"); scan.out.Rows != n || n != 3 || scan.out.Bytes == 0 {
		t.Fatalf("Scan yielded %d, observed %+v", n, *scan.out)
	}
	res, err := tbl.GetRange(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax), tablekit.Limit(2))
	if err != nil {
		t.Fatal(err)
	}
	if gr := rec.find(t, "GetRange"); gr.out.Rows != 2 || len(res.Rows) != 2 || gr.out.Bytes != res.Rows[0].Size()+res.Rows[1].Size() {
		t.Fatalf("GetRange outcome %+v", *gr.out)
	}
	if _, err := db.ListTables(ctx); err != nil {
		t.Fatal(err)
	}
	if lt := rec.find(t, "ListTables"); lt.op.Table != "" {
		t.Fatalf("ListTables observed as %+v", lt.op)
	}
	rec.find(t, "CreateTable")
}

// A Client whose cached metadata went stale retries with new metadata; the
// retry is reported with error.type stale_metadata.
func TestObserverSeesStaleRetry(t *testing.T) {
	ctx := context.Background()
	eng := localengine.New()
	var logs bytes.Buffer
	db, rec := newObserved(t, eng, tablekit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	key := tablekit.Key("k", tablekit.Integer(1))
	if err := db.Table("t").PutRow(ctx, key, nil); err != nil { // caches the table
		t.Fatal(err)
	}
	other := tablekit.NewClient(eng)
	defer other.Close()
	if err := other.DeleteTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("t").PutRow(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	put := rec.find(t, "PutRow")
	if put.out.Retries != 1 || len(put.retries) != 1 || put.retries[0].ErrorType != "stale_metadata" || put.retries[0].Attempt != 1 {
		t.Fatalf("PutRow after re-creation: outcome %+v, retries %+v", *put.out, put.retries)
	}
	if !strings.Contains(logs.String(), "tablekit: retry") || !strings.Contains(logs.String(), "op=PutRow") {
		t.Fatalf("retry not logged: %q", logs.String())
	}
}

// backoffOnce is the local engine with a backend that backs off once per
// write, as an adapter does when its store sheds load.
type backoffOnce struct{ *localengine.Engine }

func (b backoffOnce) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if err := (driver.Backoff{}).Wait(ctx, 0); err != nil {
		return nil, err
	}
	return b.Engine.Write(ctx, req)
}

func TestObserverSeesDriverBackoff(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	db, rec := newObserved(t, backoffOnce{localengine.New()}, tablekit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := db.Table("t").PutRow(ctx, tablekit.Key("k", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	put := rec.find(t, "PutRow")
	if put.out.Retries != 1 || len(put.retries) != 1 || put.retries[0].Attempt != 1 || put.retries[0].Delay <= 0 {
		t.Fatalf("PutRow with a backoff: outcome %+v, retries %+v", *put.out, put.retries)
	}
	if !strings.Contains(logs.String(), "attempt=1") {
		t.Fatalf("backoff not logged: %q", logs.String())
	}
}

// Without an observer or logger, a back-off reports to nobody (and must
// not panic).
func TestBackoffUnobserved(t *testing.T) {
	if err := (driver.Backoff{}).Wait(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

// An operation that ends throttled is logged at Warn, with its op and table.
func TestLoggerSeesThrottling(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	inj := faults.New(1, faults.Rule{Ops: faults.OpWrite, Err: tablekit.ErrThrottled})
	inj.Disable()
	db, rec := newObserved(t, inj.Wrap(localengine.New()), tablekit.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	inj.Enable()
	err := db.Table("t").PutRow(ctx, tablekit.Key("k", tablekit.Integer(1)), nil)
	if !errors.Is(err, tablekit.ErrThrottled) {
		t.Fatalf("PutRow = %v", err)
	}
	if put := rec.find(t, "PutRow"); put.out.ErrorType != "throttled" {
		t.Errorf("error type %q", put.out.ErrorType)
	}
	for _, want := range []string{"level=WARN", `msg="tablekit: throttled"`, "op=PutRow", "table=t"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s: %q", want, logs.String())
		}
	}
}

// Every read and write the Client builds from cached metadata goes through
// the one stale-metadata retry, and each reports it: after another client
// re-creates the table, the first call of each kind is retried once, with
// error.type stale_metadata, and Outcome.Retries counts it (a Scan's
// retry once went uncounted).
func TestStaleRetryCountedByEveryCall(t *testing.T) {
	ctx := context.Background()
	key := tablekit.Key("k", tablekit.Integer(1))
	lo, hi := tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)
	calls := map[string]func(db *tablekit.Client) error{
		"PutRow": func(db *tablekit.Client) error { return db.Table("t").PutRow(ctx, key, nil) },
		"GetRow": func(db *tablekit.Client) error { _, _, err := db.Table("t").GetRow(ctx, key); return err },
		"GetRange": func(db *tablekit.Client) error {
			_, err := db.Table("t").GetRange(ctx, lo, hi)
			return err
		},
		"Rows": func(db *tablekit.Client) error {
			for _, err := range db.Table("t").Rows(ctx, lo, hi) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"Scan": func(db *tablekit.Client) error {
			for _, err := range db.Table("t").Scan(ctx, lo, hi) {
				if err != nil {
					return err
				}
			}
			return nil
		},
		"BatchGetRow": func(db *tablekit.Client) error {
			res, err := db.BatchGetRow(ctx, []tablekit.BatchGet{{Table: "t", Key: key}})
			if err == nil {
				err = res[0].Err
			}
			return err
		},
		"BatchWriteRow": func(db *tablekit.Client) error {
			res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{tablekit.BatchPut("t", key, nil)})
			if err == nil {
				err = res[0].Err
			}
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			eng := localengine.New()
			db, rec := newObserved(t, eng)
			if err := db.Table("t").PutRow(ctx, key, nil); err != nil { // caches the table
				t.Fatal(err)
			}
			other := tablekit.NewClient(eng)
			defer other.Close()
			if err := other.DeleteTable(ctx, "t"); err != nil {
				t.Fatal(err)
			}
			if err := other.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
				t.Fatal(err)
			}
			if err := other.Table("t").PutRow(ctx, key, nil); err != nil {
				t.Fatal(err)
			}
			if err := call(db); err != nil {
				t.Fatalf("%s after re-creation: %v", name, err)
			}
			op := rec.find(t, name)
			if op.out.Retries != 1 || len(op.retries) != 1 || op.retries[0].ErrorType != "stale_metadata" || op.retries[0].Attempt != 1 {
				t.Fatalf("%s after re-creation: outcome %+v, retries %+v", name, *op.out, op.retries)
			}
		})
	}
}

// acmeStore is a third-party backend that names its own db.system.name.
type acmeStore struct{ *localengine.Engine }

func (acmeStore) SystemName() string { return "acme.kv" }

// A backend names its telemetry system itself (tablekit.SystemNamer), and
// a wrapper (tablekit.Wrapper) reports the name of the backend inside; the
// root knows no adapter by name.
func TestSystemNameFromBackend(t *testing.T) {
	ctx := context.Background()
	for name, b := range map[string]tablekit.Backend{
		"acme.kv":        acmeStore{localengine.New()},
		"tablekit.local": localengine.New(),
	} {
		for _, wrapped := range []bool{false, true} {
			if wrapped {
				b = faults.New(1).Wrap(b)
			}
			rec := &recorder{}
			db := tablekit.NewClient(b, tablekit.WithObserver(rec))
			if _, err := db.ListTables(ctx); err != nil {
				t.Fatal(err)
			}
			if got := rec.find(t, "ListTables").op.System; got != name {
				t.Errorf("%s (wrapped %v): Operation.System = %q", name, wrapped, got)
			}
		}
	}
}
