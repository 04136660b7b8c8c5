package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	tk "github.com/tablekit/tablekit"
)

// RunTests runs the whole contract of SPEC.md against backends made by h:
// one subtest per SPEC section ("S4_KeyOrder"), one per case inside it
// ("S4_KeyOrder/NegativeIntegers"), then the randomized differential test
// ("Differential") and the linearizability check ("Linearizability").
//
// Every case gets its own backend from h and its own *tablekit.ManualClock,
// so cases do not depend on each other or on their order; every table a case
// creates has a name unique to the run and is deleted when the case ends.
// Assertions report with t.Errorf and go on, so one run lists every
// difference from the contract.
func RunTests(t *testing.T, h Harness) {
	s := newSuite(h)
	for _, sec := range sections() {
		t.Run(sec.name, func(t *testing.T) {
			for _, c := range sec.cases {
				t.Run(c.name, func(t *testing.T) {
					c.run(s.newEnv(t))
				})
			}
		})
	}
	t.Run("Differential", func(t *testing.T) { RunDifferential(t, h) })
	t.Run("Linearizability", func(t *testing.T) { RunLinearizability(t, h) })
}

type testCase struct {
	name string
	run  func(e *env)
}

type section struct {
	name  string
	cases []testCase
}

// sections lists SPEC.md section by section.
func sections() []section {
	return []section{
		{"S1_Names", namesCases()},
		{"S2_Types", typesCases()},
		{"S3_Tables", tablesCases()},
		{"S3_CrossClient", crossClientCases()},
		{"S4_KeyOrder", keyOrderCases()},
		{"S4_KeySchema", keySchemaCases()},
		{"S5_Versions", versionsCases()},
		{"S5_MaxVersions", maxVersionsCases()},
		{"S5_HiddenVersions", hiddenVersionCases()},
		{"S6_TTL", ttlCases()},
		{"S7_Existence", existenceCases()},
		{"S8_PutRow", putRowCases()},
		{"S8_UpdateRow", updateRowCases()},
		{"S8_Increment", incrementCases()},
		{"S8_DeleteRow", deleteRowCases()},
		{"S8_GetRow", getRowCases()},
		{"S8_GetRange", getRangeCases()},
		{"S8_Resume", resumeCases()},
		{"S8_IteratorCancel", iteratorCancelCases()},
		{"S8_Batch", batchCases()},
		{"S8_BatchSameRow", batchSameRowCases()},
		{"S8_AfterClose", afterCloseCases()},
		{"S9_Conditions", conditionCases()},
		{"S10_Filters", filterCases()},
		{"S11_Consistency", consistencyCases()},
		{"S12_Errors", errorCases()},
		{"S12_BadInput", badInputCases()},
		{"S12_Context", contextCases()},
		{"S13_Capabilities", capabilityCases()},
		{"S13_AtomicWrite", atomicCases()},
		{"S14_AutoIncrement", autoIncCases()},
		{"S15_ChangeFeed", changeFeedCases()},
		{"S16_SecondaryIndex", indexCases()},
	}
}

// baseTime is where every case's clock starts: a time with a millisecond
// part (so that the floor to seconds of SPEC §5 and §6 matters) and later
// than any wall clock the suite will meet, so that a backend whose emulator
// collects garbage by wall-clock time never removes what the suite expects
// to read.
var baseTime = time.Date(2031, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

type suite struct {
	h      Harness
	prefix string
	seq    atomic.Int64
}

func newSuite(h Harness) *suite {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &suite{h: h, prefix: "tk" + hex.EncodeToString(b[:])[:6]}
}

// env is one case's world: a backend, its clock, a client over both, and
// the case's test.
type env struct {
	t     *testing.T
	ctx   context.Context
	clock *tk.ManualClock
	b     tk.Backend
	c     *tk.Client
	s     *suite
}

func (s *suite) newEnv(t *testing.T) *env {
	t.Helper()
	clock := tk.NewManualClock(baseTime)
	b, err := s.h.NewBackend(t.Context(), t, clock)
	if err != nil {
		t.Fatalf("Harness.NewBackend: %v", err)
	}
	if b == nil {
		t.Fatal("Harness.NewBackend returned a nil backend and no error")
	}
	c := tk.NewClient(b, tk.WithClock(clock))
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Backend.Close: %v", err)
		}
	})
	return &env{t: t, ctx: t.Context(), clock: clock, b: b, c: c, s: s}
}

// now is the clock's time in milliseconds.
func (e *env) now() int64 { return e.clock.Now().UnixMilli() }

// client returns another client over the case's backend with a metadata
// cache of its own that never expires, so that it stays as stale as the
// case makes it. It must not be closed (that would close the backend).
func (e *env) client() *tk.Client {
	return tk.NewClient(e.b, tk.WithClock(e.clock), tk.WithMetaCacheTTL(0))
}

// other opens a second backend on the case's store, as another process
// would (Harness.ShareBackend, or NewBackend again), and returns a client
// over it whose metadata cache never expires. It checks that the client
// sees table t, and stops the case with advice for the harness author if
// it does not. The client is closed when the case ends.
func (e *env) other(t tbl) *tk.Client {
	e.t.Helper()
	b, err := shareBackend(e.ctx, e.t, e.s.h, e.clock, e.b)
	if err != nil {
		e.t.Fatalf("opening a second backend on the store: %v", err)
	}
	if b == nil {
		e.t.Fatal("opening a second backend on the store: nil backend and no error")
	}
	c := tk.NewClient(b, tk.WithClock(e.clock), tk.WithMetaCacheTTL(0))
	e.t.Cleanup(func() {
		if err := c.Close(); err != nil {
			e.t.Errorf("second backend: Close: %v", err)
		}
	})
	if _, err := c.DescribeTable(e.ctx, t.Name()); err != nil {
		e.t.Fatalf("second backend: DescribeTable %q, a table the first backend created: %v\n%s", t.Name(), err, notSharedHelp)
	}
	return c
}

// fresh returns a second client over the same backend with an empty
// metadata cache, so that what it reports comes from the backend. It must
// not be closed (that would close the backend).
func (e *env) fresh() *tk.Client { return tk.NewClient(e.b, tk.WithClock(e.clock)) }

// name returns a table name unique to this run.
func (e *env) name(hint string) string {
	n := fmt.Sprintf("%s_%d_%s", e.s.prefix, e.s.seq.Add(1), hint)
	if len(n) > 48 {
		n = n[:48]
	}
	return n
}

// tbl is a table handle that knows its key schema.
type tbl struct {
	*tk.Table
	schema tk.KeySchema
}

// bound returns the key whose every column is v (InfMin or InfMax).
func (t tbl) bound(v tk.Value) tk.PrimaryKey {
	k := make(tk.PrimaryKey, len(t.schema))
	for i, c := range t.schema {
		k[i] = tk.KeyPart{Name: c.Name, Value: v}
	}
	return k
}

func (t tbl) lo() tk.PrimaryKey { return t.bound(tk.InfMin) }
func (t tbl) hi() tk.PrimaryKey { return t.bound(tk.InfMax) }

// create makes a table that is deleted when the case ends.
func (e *env) create(hint string, schema tk.KeySchema, opts tk.TableOptions) tbl {
	e.t.Helper()
	name := e.name(hint)
	e.createNamed(name, schema, opts)
	return tbl{Table: e.c.Table(name), schema: schema}
}

func (e *env) createNamed(name string, schema tk.KeySchema, opts tk.TableOptions) {
	e.t.Helper()
	if err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schema, Options: opts}); err != nil {
		e.t.Fatalf("CreateTable %q: %v", name, err)
	}
	e.cleanupTable(name)
}

func (e *env) cleanupTable(name string) {
	t, c := e.t, e.c
	t.Cleanup(func() {
		err := c.DeleteTable(context.Background(), name)
		if err != nil && !errors.Is(err, tk.ErrTableNotFound) {
			t.Errorf("cleanup: DeleteTable %q: %v", name, err)
		}
	})
}
