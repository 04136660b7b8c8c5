package conformance_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// The suite must be able to fail. TestSuiteCatchesMutants runs it (in a
// child process) against the local engine with one bug planted at a time,
// and checks that the case meant to catch that bug fails.

const mutantEnv = "TABLEKIT_CONFORMANCE_MUTANT"

// mutants maps each planted bug to a case that must catch it.
var mutants = map[string]string{
	"intAsDouble":           "S2_Types/AttributeRoundTrip",
	"noFilter":              "S10_Filters/Operators",
	"noProjection":          "S8_GetRow/Projection",
	"ttlOffByOneMs":         "S6_TTL/WorkedExample_UTC",
	"noTimeRange":           "S8_GetRow/VersionsAndTimeRange",
	"noBackward":            "S4_KeyOrder/NegativeIntegers",
	"noNext":                "S8_Resume/RowsIterator",
	"dropLastBeforeNext":    "S8_Resume/ForwardWithWrites",
	"swapAdjacent":          "S4_KeyOrder/Strings",
	"batchGetReversed":      "S8_Batch/GetPerRowResults",
	"batchWriteFirstError":  "S8_Batch/WritePerRowResults",
	"noCondition":           "S9_Conditions/RowExistence",
	"noColumnCondition":     "S9_Conditions/ColumnCondition",
	"versionIsNow":          "S5_Versions/ExplicitVersions",
	"noKeyOnly":             "S7_Existence/KeyOnlyRow",
	"noIncrements":          "S8_Increment/AbsentIsZero",
	"noUpdateTable":         "S3_Tables/UpdateTable",
	"ignoreCtx":             "S12_Context/Canceled",
	"deleteMissingFails":    "S8_DeleteRow/Delete",
	"notFoundUnavailable":   "S3_Tables/MissingTable",
	"listTruncates50":       "S1_Names/LongNamesDistinct",
	"ignoreIncarnation":     "S3_CrossClient/RecreatedOtherSchema",
	"staleUpdateRetryable":  "S3_CrossClient/StaleUpdateTable",
	"scanSkipsFirst":        "S8_Resume/ScanIterator",
	"trimWithCachedOptions": "S3_CrossClient/MaxVersionsRaised",
	"scanClaimedSkips":      "S13_Capabilities/Claimed",
	"batchReadUndeclared":   "S13_Capabilities/Absent",
	"atomicPartial":         "S13_AtomicWrite/AllOrNothing",
	"aiDuplicate":           "S14_AutoIncrement/UniqueIncreasing16Writers",
	"aiDecreasing":          "S14_AutoIncrement/UniqueIncreasing16Writers",
	// Not a backend bug: a harness whose backends share no storage and
	// that does not implement SharedStore must fail, never skip.
	"notShared": "S3_CrossClient/RecreatedSameSchema",
}

func TestSuiteCatchesMutants(t *testing.T) {
	runMutants(t, mutantEnv, "TestMutant", mutants, func(t *testing.T, m string, out []byte) {
		if m == "notShared" && !strings.Contains(string(out), "implement conformance.SharedStore") {
			t.Errorf("a harness that shares no storage was not told to implement SharedStore:\n%s", tail(out))
		}
	})
}

// runMutants runs child, in a child process per mutant of table (named in
// env), on the case that must catch it, and fails unless that case fails;
// check, if not nil, looks at the child's output too.
func runMutants(t *testing.T, env, child string, table map[string]string, check func(t *testing.T, m string, out []byte)) {
	if os.Getenv(env) != "" {
		t.Skip("in a mutant's child process")
	}
	if testing.Short() {
		t.Skip("runs the suite once per mutant")
	}
	for m, caughtBy := range table {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			sec, cs, _ := strings.Cut(caughtBy, "/")
			cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$/^"+sec+"$/^"+cs+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), env+"="+m)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed with mutant %s (err %v):\n%s", m, err, tail(out))
			}
			if !strings.Contains(string(out), "--- FAIL: "+child+"/"+caughtBy+" ") {
				t.Errorf("mutant %s was not caught by %s:\n%s", m, caughtBy, tail(out))
			}
			if check != nil {
				check(t, m, out)
			}
		})
	}
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// TestMutant is the child process's test: the suite against one mutant.
func TestMutant(t *testing.T) {
	m := os.Getenv(mutantEnv)
	if m == "" {
		t.Skip("only in a child process of TestSuiteCatchesMutants")
	}
	if _, ok := mutants[m]; !ok {
		t.Fatalf("unknown mutant %q", m)
	}
	if m == "notShared" {
		conformance.RunTests(t, conformance.HarnessFunc(func(context.Context, testing.TB, tablekit.Clock) (tablekit.Backend, error) {
			return localengine.New(), nil
		}))
		return
	}
	conformance.RunTests(t, newLocalStore(func(b tablekit.Backend) tablekit.Backend { return &mutant{Backend: b, m: m} }))
}

// mutant is the local engine with the bug named m.
type mutant struct {
	tablekit.Backend
	m    string
	down atomic.Int64 // aiDecreasing's last value
}

func (b *mutant) ctx(ctx context.Context) context.Context {
	if b.m == "ignoreCtx" {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (b *mutant) err(err error) error {
	if b.m == "notFoundUnavailable" && errors.Is(err, tablekit.ErrTableNotFound) {
		return tablekit.Errorf(tablekit.ErrUnavailable, "mutant")
	}
	return err
}

func (b *mutant) row(r *tablekit.Row) {
	if r == nil || b.m != "intAsDouble" {
		return
	}
	for i, c := range r.Columns {
		if v, ok := c.Value.Int(); ok && v == 7 {
			r.Columns[i].Value = tablekit.Double(7)
		}
	}
}

// meta is the request's meta; with ignoreIncarnation, the bug of a backend
// that checks no incarnation: a stale request is taken for the current
// table's, old key schema and all.
func (b *mutant) meta(ctx context.Context, m *tablekit.TableMeta) *tablekit.TableMeta {
	if b.m != "ignoreIncarnation" {
		return m
	}
	cur, err := b.Backend.DescribeTable(ctx, m.Name)
	if err != nil {
		return m
	}
	c := *m
	c.Incarnation = cur.Incarnation
	return &c
}

func (b *mutant) read(s tablekit.ReadSpec, now int64) (tablekit.ReadSpec, int64) {
	switch b.m {
	case "noFilter":
		s.Filter = nil
	case "noProjection":
		s.Columns = nil
	case "ttlOffByOneMs":
		now--
	case "noTimeRange":
		s.TimeRange = nil
	}
	return s, now
}

func (b *mutant) cond(c tablekit.Condition) tablekit.Condition {
	switch b.m {
	case "noCondition":
		return tablekit.Condition{}
	case "noColumnCondition":
		c.Column = nil
	}
	return c
}

func (b *mutant) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	m, err := b.Backend.DescribeTable(b.ctx(ctx), name)
	return m, b.err(err)
}

func (b *mutant) ListTables(ctx context.Context) ([]string, error) {
	names, err := b.Backend.ListTables(b.ctx(ctx))
	if b.m == "listTruncates50" {
		for i, n := range names {
			names[i] = n[:min(len(n), 50)]
		}
	}
	return names, err
}

// ScanRange is the local engine's: the mutant is a RangeScanner, so that
// Table.Scan reaches it.
func (b *mutant) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	s := b.Backend.(tablekit.RangeScanner)
	if b.m == "scanClaimedSkips" {
		return nil, tablekit.ErrSkip
	}
	if b.m == "scanSkipsFirst" {
		first := true
		return s.ScanRange(b.ctx(ctx), req, func(r tablekit.Row) bool {
			if first {
				first = false
				return true
			}
			return fn(r)
		})
	}
	return s.ScanRange(b.ctx(ctx), req, fn)
}

// Capabilities is what the mutant's methods show, and auto-increment keys,
// but for batchReadUndeclared, which withholds BatchRead while BatchGetRow
// works.
func (b *mutant) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.BatchRead = shown.BatchRead && b.m != "batchReadUndeclared"
	shown.AutoIncrement = true
	return shown
}

// AtomicWrite is the local engine's, but for atomicPartial: the bug of a
// backend that degrades an atomic write to writes one at a time, which
// leaves those before a failing condition written.
func (b *mutant) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	if b.m != "atomicPartial" {
		return b.Backend.(tablekit.AtomicWriter).AtomicWrite(b.ctx(ctx), reqs)
	}
	out := make([]tablekit.WriteResponse, len(reqs))
	for i, r := range reqs {
		res, err := b.Backend.Write(ctx, r)
		if err != nil {
			return nil, &tablekit.AtomicWriteError{Index: i, Err: err}
		}
		out[i].Update = res
	}
	return out, nil
}

func (b *mutant) UpdateTable(ctx context.Context, r *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	if b.m == "noUpdateTable" {
		return r.Meta, nil
	}
	m, err := b.Backend.UpdateTable(b.ctx(ctx), r)
	if b.m == "staleUpdateRetryable" && errors.Is(err, tablekit.ErrTableNotFound) {
		err = tablekit.Errorf(tablekit.ErrConditionFailed, "table %q changed", r.Meta.Name)
	}
	return m, b.err(err)
}

func (b *mutant) DeleteTable(ctx context.Context, name string) error {
	return b.err(b.Backend.DeleteTable(b.ctx(ctx), name))
}

func (b *mutant) CreateTable(ctx context.Context, m *tablekit.TableMeta) error {
	return b.err(b.Backend.CreateTable(b.ctx(ctx), m))
}

func (b *mutant) GetRow(ctx context.Context, r *tablekit.GetRowRequest) (*tablekit.Row, error) {
	c := *r
	c.Meta = b.meta(ctx, c.Meta)
	c.Read, c.Now = b.read(c.Read, c.Now)
	row, err := b.Backend.GetRow(b.ctx(ctx), &c)
	b.row(row)
	return row, b.err(err)
}

func (b *mutant) GetRange(ctx context.Context, r *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	c := *r
	c.Meta = b.meta(ctx, c.Meta)
	c.Read, c.Now = b.read(c.Read, c.Now)
	if b.m == "noBackward" && c.Backward {
		c.Backward = false
		c.Start, c.End = c.End, c.Start
	}
	p, err := b.Backend.GetRange(b.ctx(ctx), &c)
	if err != nil {
		return p, b.err(err)
	}
	for i := range p.Rows {
		b.row(&p.Rows[i])
	}
	switch b.m {
	case "noNext":
		p.Next = nil
	case "dropLastBeforeNext":
		if p.Next != nil && len(p.Rows) > 1 {
			p.Rows = p.Rows[:len(p.Rows)-1]
		}
	case "swapAdjacent":
		if len(p.Rows) > 3 {
			p.Rows[1], p.Rows[2] = p.Rows[2], p.Rows[1]
		}
	}
	return p, nil
}

// BatchGetRow is the local engine's reads one at a time (the engine has no
// batch call), through the mutant's GetRow, so that the mutant's other bugs
// show in batches too.
func (b *mutant) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResponse, error) {
	res := make([]tablekit.GetRowResponse, len(reqs))
	for i, r := range reqs {
		res[i].Row, res[i].Err = b.GetRow(ctx, r)
		if err := b.ctx(ctx).Err(); err != nil {
			return nil, err
		}
	}
	if b.m == "batchGetReversed" {
		slices.Reverse(res)
	}
	return res, nil
}

func (b *mutant) Write(ctx context.Context, r *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	c := *r
	c.Meta = b.meta(ctx, c.Meta)
	c.Condition = b.cond(c.Condition)
	switch {
	case b.m == "versionIsNow" && c.Kind == tablekit.WritePut:
		c.Columns = slices.Clone(c.Columns)
		for i := range c.Columns {
			c.Columns[i].Version = c.Now
		}
	case b.m == "noKeyOnly" && c.Kind == tablekit.WritePut && len(c.Columns) == 0:
		c.Kind = tablekit.WriteDelete
	case b.m == "aiDuplicate" && c.Key.AutoIncrementIndex() >= 0:
		c.Key = c.Key.WithAutoIncrement(1) // every write the same value
		res, err := b.Backend.Write(b.ctx(ctx), &c)
		return aiResult(res, c.Key), err
	case b.m == "aiDecreasing" && c.Key.AutoIncrementIndex() >= 0:
		b.down.CompareAndSwap(0, 1<<40)
		c.Key = c.Key.WithAutoIncrement(b.down.Add(-1)) // unique, but each below the last
		res, err := b.Backend.Write(b.ctx(ctx), &c)
		return aiResult(res, c.Key), err
	case b.m == "deleteMissingFails" && c.Kind == tablekit.WriteDelete:
		row, err := b.Backend.GetRow(ctx, &tablekit.GetRowRequest{Meta: c.Meta, Key: c.Key, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: c.Now})
		if err == nil && row == nil {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "mutant: no such row")
		}
	}
	res, err := b.Backend.Write(b.ctx(ctx), &c)
	if b.m == "trimWithCachedOptions" && err == nil && c.Kind == tablekit.WriteUpdate {
		b.trim(ctx, &c)
	}
	if b.m == "noIncrements" && res != nil {
		res.Increments = nil
	}
	return res, b.err(err)
}

// aiResult is res carrying key, as a write with AutoIncrement answers.
func aiResult(res *tablekit.UpdateResult, key tablekit.PrimaryKey) *tablekit.UpdateResult {
	if res == nil {
		res = &tablekit.UpdateResult{}
	}
	res.Key = key
	return res
}

// BatchWriteRow is the local engine's writes one at a time (the engine has
// no batch call), through the mutant's Write.
func (b *mutant) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	res := make([]tablekit.WriteResponse, len(reqs))
	for i, r := range reqs {
		res[i].Update, res[i].Err = b.Write(ctx, r)
		if err := b.ctx(ctx).Err(); err != nil {
			return nil, err
		}
	}
	if b.m == "batchWriteFirstError" {
		var first error
		for i := range res {
			if first != nil {
				res[i] = tablekit.WriteResponse{Err: first}
			} else if res[i].Err != nil {
				first = res[i].Err
			}
		}
	}
	return res, nil
}

// trim is the bug of a backend that trims a row to the MaxVersions of the
// request's (cached) options after an update, even when the table's
// options have since been raised.
func (b *mutant) trim(ctx context.Context, w *tablekit.WriteRequest) {
	cur, err := b.Backend.DescribeTable(ctx, w.Meta.Name)
	if err != nil || w.Meta.Options.MaxVersions >= cur.Options.MaxVersions {
		return
	}
	row, err := b.Backend.GetRow(ctx, &tablekit.GetRowRequest{Meta: cur, Key: w.Key, Read: tablekit.ReadSpec{MaxVersions: w.Meta.Options.MaxVersions}, Now: w.Now})
	if err != nil || row == nil {
		return
	}
	_, _ = b.Backend.Write(ctx, &tablekit.WriteRequest{Meta: cur, Kind: tablekit.WritePut, Key: w.Key, Columns: row.Columns, Now: w.Now})
}
