package conformance_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
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
	"intAsDouble":          "S2_Types/AttributeRoundTrip",
	"noFilter":             "S10_Filters/Operators",
	"noProjection":         "S8_GetRow/Projection",
	"ttlOffByOneMs":        "S6_TTL/WorkedExample_UTC",
	"noTimeRange":          "S8_GetRow/VersionsAndTimeRange",
	"noBackward":           "S4_KeyOrder/NegativeIntegers",
	"noNext":               "S8_Resume/RowsIterator",
	"dropLastBeforeNext":   "S8_Resume/ForwardWithWrites",
	"swapAdjacent":         "S4_KeyOrder/Strings",
	"batchGetReversed":     "S8_Batch/GetPerRowResults",
	"batchWriteFirstError": "S8_Batch/WritePerRowResults",
	"noCondition":          "S9_Conditions/RowExistence",
	"noColumnCondition":    "S9_Conditions/ColumnCondition",
	"versionIsNow":         "S5_Versions/ExplicitVersions",
	"noKeyOnly":            "S7_Existence/KeyOnlyRow",
	"noIncrements":         "S8_Increment/AbsentIsZero",
	"noUpdateTable":        "S3_Tables/UpdateTable",
	"ignoreCtx":            "S12_Context/Canceled",
	"deleteMissingFails":   "S8_DeleteRow/Delete",
	"notFoundUnavailable":  "S3_Tables/MissingTable",
	"listTruncates50":      "S1_Names/LongNamesDistinct",
}

func TestSuiteCatchesMutants(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("in a mutant's child process")
	}
	if testing.Short() {
		t.Skip("runs the suite once per mutant")
	}
	for m, caughtBy := range mutants {
		t.Run(m, func(t *testing.T) {
			t.Parallel()
			sec, cs, _ := strings.Cut(caughtBy, "/")
			cmd := exec.Command(os.Args[0], "-test.run=^TestMutant$/^"+sec+"$/^"+cs+"$", "-test.count=1")
			cmd.Env = append(os.Environ(), mutantEnv+"="+m)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite passed with mutant %s (err %v):\n%s", m, err, tail(out))
			}
			if !strings.Contains(string(out), "--- FAIL: TestMutant/"+caughtBy+" ") {
				t.Errorf("mutant %s was not caught by %s:\n%s", m, caughtBy, tail(out))
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
	conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		return &mutant{Backend: localengine.New(), m: m}, nil
	}))
}

// mutant is the local engine with the bug named m.
type mutant struct {
	tablekit.Backend
	m string
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

func (b *mutant) UpdateTable(ctx context.Context, name string, o tablekit.TableOptions) error {
	if b.m == "noUpdateTable" {
		return nil
	}
	return b.err(b.Backend.UpdateTable(b.ctx(ctx), name, o))
}

func (b *mutant) DeleteTable(ctx context.Context, name string) error {
	return b.err(b.Backend.DeleteTable(b.ctx(ctx), name))
}

func (b *mutant) CreateTable(ctx context.Context, m *tablekit.TableMeta) error {
	return b.err(b.Backend.CreateTable(b.ctx(ctx), m))
}

func (b *mutant) GetRow(ctx context.Context, r *tablekit.GetRowRequest) (*tablekit.Row, error) {
	c := *r
	c.Read, c.Now = b.read(c.Read, c.Now)
	row, err := b.Backend.GetRow(b.ctx(ctx), &c)
	b.row(row)
	return row, b.err(err)
}

func (b *mutant) GetRange(ctx context.Context, r *tablekit.GetRangeRequest) (*tablekit.RangePage, error) {
	c := *r
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

func (b *mutant) BatchGetRow(ctx context.Context, reqs []*tablekit.GetRowRequest) ([]tablekit.GetRowResult, error) {
	res, err := b.Backend.BatchGetRow(b.ctx(ctx), reqs)
	if b.m == "batchGetReversed" {
		slices.Reverse(res)
	}
	return res, err
}

func (b *mutant) PutRow(ctx context.Context, r *tablekit.PutRowRequest) error {
	c := *r
	c.Condition = b.cond(c.Condition)
	switch {
	case b.m == "versionIsNow":
		c.Columns = slices.Clone(c.Columns)
		for i := range c.Columns {
			c.Columns[i].Version = c.Now
		}
	case b.m == "noKeyOnly" && len(c.Columns) == 0:
		return b.Backend.DeleteRow(b.ctx(ctx), &tablekit.DeleteRowRequest{Meta: c.Meta, Key: c.Key, Condition: c.Condition, Now: c.Now})
	}
	return b.err(b.Backend.PutRow(b.ctx(ctx), &c))
}

func (b *mutant) UpdateRow(ctx context.Context, r *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	c := *r
	c.Condition = b.cond(c.Condition)
	res, err := b.Backend.UpdateRow(b.ctx(ctx), &c)
	if b.m == "noIncrements" && res != nil {
		res.Increments = nil
	}
	return res, b.err(err)
}

func (b *mutant) DeleteRow(ctx context.Context, r *tablekit.DeleteRowRequest) error {
	c := *r
	c.Condition = b.cond(c.Condition)
	if b.m == "deleteMissingFails" {
		row, err := b.Backend.GetRow(ctx, &tablekit.GetRowRequest{Meta: c.Meta, Key: c.Key, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: c.Now})
		if err == nil && row == nil {
			return tablekit.Errorf(tablekit.ErrInvalidArgument, "mutant: no such row")
		}
	}
	return b.err(b.Backend.DeleteRow(b.ctx(ctx), &c))
}

func (b *mutant) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResult, error) {
	res, err := b.Backend.BatchWriteRow(b.ctx(ctx), reqs)
	if b.m == "batchWriteFirstError" {
		var first error
		for i := range res {
			if first != nil {
				res[i] = tablekit.WriteResult{Err: first}
			} else if res[i].Err != nil {
				first = res[i].Err
			}
		}
	}
	return res, err
}
