package faults_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// harness runs the conformance suite on an engine wrapped by a disabled
// injector: the wrapper must be transparent.
type harness struct {
	open func(t testing.TB) (tablekit.Backend, error)
}

func (h harness) NewBackend(_ context.Context, t testing.TB, _ tablekit.Clock) (tablekit.Backend, error) {
	b, err := h.open(t)
	if err != nil {
		return nil, err
	}
	inj := faults.New(1, faults.Rule{Err: tablekit.ErrUnavailable}) // would fail every call
	inj.Disable()
	return inj.Wrap(b), nil
}

// ShareBackend gives another client the same engine behind a Close that
// leaves it open, wrapped again.
func (h harness) ShareBackend(_ context.Context, _ testing.TB, _ tablekit.Clock, b tablekit.Backend) (tablekit.Backend, error) {
	u, ok := b.(tablekit.Wrapper)
	if !ok {
		return nil, fmt.Errorf("ShareBackend: %T is not a faults wrapper", b)
	}
	inj := faults.New(1)
	switch e := u.Unwrap().(type) {
	case *localengine.Engine:
		return inj.Wrap(sharedLocal{e}), nil
	case *fileengine.Engine:
		return inj.Wrap(sharedFile{e}), nil
	case sharedLocal, sharedFile:
		return b, nil
	}
	return nil, fmt.Errorf("ShareBackend: %T", u.Unwrap())
}

type sharedLocal struct{ *localengine.Engine }

func (sharedLocal) Close() error { return nil }

type sharedFile struct{ *fileengine.Engine }

func (sharedFile) Close() error { return nil }

// TestConformanceFaultsOff runs the SPEC suite through disabled wrappers
// of the local engine (no batch calls) and of the file engine (a
// BatchWriter with As).
func TestConformanceFaultsOff(t *testing.T) {
	t.Run("localengine", func(t *testing.T) {
		conformance.RunTests(t, harness{open: func(testing.TB) (tablekit.Backend, error) { return localengine.New(), nil }})
	})
	t.Run("fileengine", func(t *testing.T) {
		if testing.Short() {
			t.Skip("the file engine's run is the long one; the local engine's covers -short")
		}
		conformance.RunTests(t, harness{open: func(t testing.TB) (tablekit.Backend, error) {
			return fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
		}})
	})
}

// Parts of backends with every combination of the optional interfaces,
// built on the local engine: bare has the Backend methods alone (the
// engine's own ScanRange is not promoted), each part one optional
// interface.
type (
	bare  struct{ tablekit.Backend }
	partR struct{ e *localengine.Engine }
	partW struct{ e *localengine.Engine }
	partS struct {
		e     *localengine.Engine
		calls *atomic.Int64
	}
	partA   struct{}
	readers struct {
		bare
		partR
		partW
	}
)

func (p partR) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	out := make([]tablekit.GetRowResponse, len(reqs))
	for i, r := range reqs {
		out[i].Row, out[i].Err = p.e.GetRow(ctx, r)
	}
	return out, nil
}

func (p partW) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	out := make([]tablekit.WriteResponse, len(reqs))
	for i, r := range reqs {
		out[i].Update, out[i].Err = p.e.Write(ctx, r)
	}
	return out, nil
}

func (p partS) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	p.calls.Add(1)
	return p.e.ScanRange(ctx, req, fn)
}

func (partA) As(t any) bool {
	if p, ok := t.(*engineRef); ok {
		p.e = &localengine.Engine{}
		return true
	}
	return false
}

type engineRef struct{ e *localengine.Engine }

// withRW is e with batch reads and writes.
func withRW(e *localengine.Engine) tablekit.Backend { return readers{bare{e}, partR{e}, partW{e}} }

// combos returns e as 16 backends, one for each combination of the
// optional interfaces (in the order of the bits R=1, W=2, S=4, A=8), and
// the counter of their ScanRange calls.
func combos(e *localengine.Engine) ([]tablekit.Backend, *atomic.Int64) {
	n := new(atomic.Int64)
	b, r, w, s, a := bare{e}, partR{e}, partW{e}, partS{e, n}, partA{}
	type (
		rw = readers
		rs struct {
			bare
			partR
			partS
		}
		ws struct {
			bare
			partW
			partS
		}
		rws struct {
			bare
			partR
			partW
			partS
		}
	)
	return []tablekit.Backend{
		b, struct {
			bare
			partR
		}{b, r}, struct {
			bare
			partW
		}{b, w}, rw{b, r, w},
		struct {
			bare
			partS
		}{b, s}, rs{b, r, s}, ws{b, w, s}, rws{b, r, w, s},
		struct {
			bare
			partA
		}{b, a}, struct {
			bare
			partR
			partA
		}{b, r, a}, struct {
			bare
			partW
			partA
		}{b, w, a}, struct {
			rw
			partA
		}{rw{b, r, w}, a},
		struct {
			bare
			partS
			partA
		}{b, s, a}, struct {
			rs
			partA
		}{rs{b, r, s}, a}, struct {
			ws
			partA
		}{ws{b, w, s}, a}, struct {
			rws
			partA
		}{rws{b, r, w, s}, a},
	}, n
}

func shape(b tablekit.Backend) string {
	_, r := b.(tablekit.BatchReader)
	_, w := b.(tablekit.BatchWriter)
	_, s := b.(tablekit.RangeScanner)
	_, a := b.(tablekit.NativeAccessor)
	return fmt.Sprintf("reader=%v writer=%v scanner=%v as=%v", r, w, s, a)
}

// The wrapper has exactly the capabilities of what it wraps (one wrapper
// type, whatever it wraps), and the Client uses them through it: it reaches the wrapped backend's As,
// and Table.Scan its ScanRange.
func TestWrapKeepsOptionalInterfaces(t *testing.T) {
	ctx := context.Background()
	e := localengine.New()
	if err := e.CreateTable(ctx, &tablekit.TableMeta{Name: "t", Key: schema, Options: tablekit.TableOptions{MaxVersions: 1, TTL: tablekit.NoExpiry, MaxVersionOffset: 86400 * time.Second}, Incarnation: "i", Generation: 1}); err != nil {
		t.Fatal(err)
	}
	inj := faults.New(1)
	bs, scans := combos(e)
	for i, b := range bs {
		want := fmt.Sprintf("reader=%v writer=%v scanner=%v as=%v", i&1 != 0, i&2 != 0, i&4 != 0, i&8 != 0)
		if got := shape(b); got != want {
			t.Fatalf("combos()[%d] is %s, want %s", i, got, want)
		}
		w := inj.Wrap(b)
		wantCaps := tablekit.Capabilities{BatchRead: i&1 != 0, BatchWrite: i&2 != 0, LendingScan: i&4 != 0, SecondaryIndex: true}
		if got := tablekit.CapabilitiesOf(w); got != wantCaps {
			t.Errorf("%s wrapped: capabilities %+v, want %+v", want, got, wantCaps)
		}
		if u := w.(tablekit.Wrapper).Unwrap(); u != b {
			t.Errorf("%s: Unwrap = %T", want, u)
		}
		db := tablekit.NewClient(w)
		var ref engineRef
		if got := db.As(&ref); got != (i&8 != 0) || got && ref.e == nil {
			t.Errorf("%s: As = %v", want, got)
		}
		before := scans.Load()
		for _, err := range db.Table("t").Scan(ctx, key(0), key(10)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := scans.Load() > before; got != (i&4 != 0) {
			t.Errorf("%s: Table.Scan called ScanRange: %v", want, got)
		}
	}
}

var schema = tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}

func key(i int) tablekit.PrimaryKey { return tablekit.Key("id", tablekit.Integer(int64(i))) }

// setup makes table "t" on a new engine and returns a client through the
// injector and a clean client on the same engine.
func setup(t *testing.T, inj *faults.Injector, b tablekit.Backend) (faulty, clean *tablekit.Client) {
	t.Helper()
	inj.Disable()
	faulty = tablekit.NewClient(inj.Wrap(b))
	t.Cleanup(func() { faulty.Close() })
	if err := faulty.CreateTable(context.Background(), tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
		t.Fatal(err)
	}
	inj.Enable()
	clean = tablekit.NewClient(sharedLocalOrFile(b))
	return faulty, clean
}

func sharedLocalOrFile(b tablekit.Backend) tablekit.Backend {
	switch e := b.(type) {
	case *localengine.Engine:
		return sharedLocal{e}
	case *fileengine.Engine:
		return sharedFile{e}
	}
	panic(fmt.Sprintf("%T", b))
}

func TestErrorsOfEachKind(t *testing.T) {
	ctx := context.Background()
	for _, code := range []error{tablekit.ErrThrottled, tablekit.ErrUnavailable, tablekit.ErrPermissionDenied, context.DeadlineExceeded} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			inj := faults.New(7, faults.Rule{Ops: faults.OpWrite, Table: "t", Err: code})
			db, clean := setup(t, inj, localengine.New())
			err := db.Table("t").PutRow(ctx, key(1), []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}})
			if !errors.Is(err, code) {
				t.Fatalf("PutRow = %v, want %v", err, code)
			}
			if _, isContext := code.(interface{ Timeout() bool }); !isContext && !errors.Is(err, faults.ErrInjected) {
				t.Errorf("PutRow = %v, does not match ErrInjected", err)
			}
			var te *tablekit.Error
			if errors.As(err, &te) && (te.Op != "PutRow" || te.Table != "t") {
				t.Errorf("error names op %q table %q", te.Op, te.Table)
			}
			if _, found, err := clean.Table("t").GetRow(ctx, key(1)); err != nil || found {
				t.Fatalf("a failed write was applied: found=%v err=%v", found, err)
			}
			// Reads are not matched by the rule.
			if _, _, err := db.Table("t").GetRow(ctx, key(1)); err != nil {
				t.Fatalf("GetRow = %v", err)
			}
			if inj.Hits(0) != 1 {
				t.Errorf("hits %d", inj.Hits(0))
			}
		})
	}
}

func TestLatencyAndTimeout(t *testing.T) {
	ctx := context.Background()
	inj := faults.New(1, faults.Rule{Ops: faults.OpGetRow, Latency: 30 * time.Millisecond})
	db, _ := setup(t, inj, localengine.New())
	start := time.Now()
	if _, _, err := db.Table("t").GetRow(ctx, key(1)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("GetRow took %v, want ≥ 30ms", d)
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, _, err := db.Table("t").GetRow(short, key(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetRow with a 5ms deadline = %v", err)
	}
}

func TestLostAnswer(t *testing.T) {
	ctx := context.Background()
	inj := faults.New(1, faults.Rule{Ops: faults.OpWrite, Lost: true, Times: 1})
	db, clean := setup(t, inj, localengine.New())
	err := db.Table("t").PutRow(ctx, key(1), nil, tablekit.ExpectNotExist)
	if !errors.Is(err, tablekit.ErrUnavailable) || !errors.Is(err, faults.ErrInjected) {
		t.Fatalf("PutRow = %v, want injected ErrUnavailable", err)
	}
	if _, found, err := clean.Table("t").GetRow(ctx, key(1)); err != nil || !found {
		t.Fatalf("the write whose answer was lost was not applied: found=%v err=%v", found, err)
	}
	// Its retry now fails its condition: the program must read to know.
	if err := db.Table("t").PutRow(ctx, key(1), nil, tablekit.ExpectNotExist); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Fatalf("retry = %v, want ErrConditionFailed", err)
	}
}

// hitPattern is which of 200 writes a rule with Prob 0.3 hits.
func hitPattern(t *testing.T, seed uint64, parallel bool) (string, int) {
	ctx := context.Background()
	inj := faults.New(seed, faults.Rule{Ops: faults.OpWrite, Prob: 0.3, Err: tablekit.ErrThrottled})
	db, _ := setup(t, inj, localengine.New())
	out := make([]byte, 200)
	writes := make([]tablekit.BatchWrite, 200)
	for i := range writes {
		writes[i] = tablekit.BatchWrite{Table: "t", Kind: tablekit.WritePut, Key: key(i)}
	}
	if parallel { // the local engine has no batch call: the Client writes 8 rows at a time
		res, err := db.BatchWriteRow(ctx, writes)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			out[i] = '.'
			if r.Err != nil {
				out[i] = 'x'
			}
		}
	} else {
		for i := range writes {
			out[i] = '.'
			if err := db.Table("t").PutRow(ctx, key(i), nil); err != nil {
				out[i] = 'x'
			}
		}
	}
	return string(out), inj.Hits(0)
}

func TestDeterministic(t *testing.T) {
	a, hits := hitPattern(t, 42, false)
	b, _ := hitPattern(t, 42, true)
	c, _ := hitPattern(t, 43, false)
	if a != b {
		t.Errorf("same seed, different faults in order and in parallel:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 gave the same faults")
	}
	if hits < 40 || hits > 80 {
		t.Errorf("Prob 0.3 hit %d of 200 writes", hits)
	}
}

// A batch call with a per-row rule: the hit rows fail on their own and are
// not applied, the others are applied.
func TestPartialBatchFailure(t *testing.T) {
	ctx := context.Background()
	fe, err := fileengine.Open(t.TempDir(), &fileengine.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	inj := faults.New(3, faults.Rule{Ops: faults.OpBatchWriteRow, Rows: 0.25, Err: tablekit.ErrThrottled, Latency: 20 * time.Millisecond})
	db, clean := setup(t, inj, fe)
	writes := make([]tablekit.BatchWrite, 200)
	for i := range writes {
		writes[i] = tablekit.BatchWrite{Table: "t", Kind: tablekit.WritePut, Key: key(i)}
	}
	start := time.Now()
	res, err := db.BatchWriteRow(ctx, writes)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("the batch took %v; the rule's latency is 20ms", d)
	}
	failed := 0
	for i, r := range res {
		_, found, gerr := clean.Table("t").GetRow(ctx, key(i))
		if gerr != nil {
			t.Fatal(gerr)
		}
		switch {
		case r.Err != nil && (!errors.Is(r.Err, tablekit.ErrThrottled) || found):
			t.Errorf("row %d: %v, found=%v", i, r.Err, found)
		case r.Err == nil && !found:
			t.Errorf("row %d: succeeded but not written", i)
		}
		if r.Err != nil {
			failed++
		}
	}
	if failed < 30 || failed > 70 || failed != inj.Hits(0) {
		t.Errorf("%d of 200 rows failed (hits %d), want about 50", failed, inj.Hits(0))
	}
}

// A batch read with a per-row rule: the hit rows fail on their own, the
// others are read; a whole-call rule fails the call.
func TestPartialBatchRead(t *testing.T) {
	ctx := context.Background()
	e := localengine.New()
	inj := faults.New(5, faults.Rule{Ops: faults.OpBatchGetRow, Rows: 0.5, Err: tablekit.ErrUnavailable})
	inj.Disable()
	db := tablekit.NewClient(inj.Wrap(withRW(e)))
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
		t.Fatal(err)
	}
	gets := make([]tablekit.BatchGet, 100)
	for i := range gets {
		if err := db.Table("t").PutRow(ctx, key(i), nil); err != nil {
			t.Fatal(err)
		}
		gets[i] = tablekit.BatchGet{Table: "t", Key: key(i)}
	}
	inj.Enable()
	res, err := db.BatchGetRow(ctx, gets)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i, r := range res {
		switch {
		case r.Err != nil && errors.Is(r.Err, tablekit.ErrUnavailable):
			failed++
		case r.Err != nil || !r.Found:
			t.Errorf("row %d: found=%v err=%v", i, r.Found, r.Err)
		}
	}
	if failed < 30 || failed > 70 || failed != inj.Hits(0) {
		t.Errorf("%d of 100 reads failed, %d hits", failed, inj.Hits(0))
	}

	whole := faults.New(5, faults.Rule{Ops: faults.OpBatchGetRow, Err: tablekit.ErrPermissionDenied})
	db2 := tablekit.NewClient(whole.Wrap(withRW(e)))
	if _, err := db2.BatchGetRow(ctx, gets); !errors.Is(err, tablekit.ErrPermissionDenied) {
		t.Errorf("whole-call fault: %v", err)
	}
}
