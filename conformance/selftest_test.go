package conformance_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
	"github.com/tablekit/tablekit/localengine"
)

// TestSuiteOnLocalEngine runs the suite against the local engine: it is how
// the suite tests itself. It also reports how many backend calls the suite
// makes, the cost that matters when it runs against an emulator.
func TestSuiteOnLocalEngine(t *testing.T) {
	var calls, rows, backends, tables atomic.Int64
	conformance.RunTests(t, conformance.HarnessFunc(func(ctx context.Context, t testing.TB, clock tablekit.Clock) (tablekit.Backend, error) {
		backends.Add(1)
		return &counting{Backend: localengine.New(), calls: &calls, rows: &rows, tables: &tables}, nil
	}))
	t.Logf("%d backends, %d tables created, %d backend calls (%d rows in batches)", backends.Load(), tables.Load(), calls.Load(), rows.Load())
}

// counting counts the calls that reach a backend.
type counting struct {
	tablekit.Backend
	calls, rows, tables *atomic.Int64
}

func (c *counting) n() { c.calls.Add(1) }

func (c *counting) CreateTable(ctx context.Context, m *tablekit.TableMeta) error {
	c.n()
	c.tables.Add(1)
	return c.Backend.CreateTable(ctx, m)
}

func (c *counting) DescribeTable(ctx context.Context, name string) (*tablekit.TableMeta, error) {
	c.n()
	return c.Backend.DescribeTable(ctx, name)
}

func (c *counting) ListTables(ctx context.Context) ([]string, error) {
	c.n()
	return c.Backend.ListTables(ctx)
}

func (c *counting) UpdateTable(ctx context.Context, name string, o tablekit.TableOptions) error {
	c.n()
	return c.Backend.UpdateTable(ctx, name, o)
}

func (c *counting) DeleteTable(ctx context.Context, name string) error {
	c.n()
	return c.Backend.DeleteTable(ctx, name)
}

func (c *counting) GetRow(ctx context.Context, r *tablekit.GetRowRequest) (*tablekit.Row, error) {
	c.n()
	return c.Backend.GetRow(ctx, r)
}

func (c *counting) GetRange(ctx context.Context, r *tablekit.GetRangeRequest) (*tablekit.RangePage, error) {
	c.n()
	return c.Backend.GetRange(ctx, r)
}

func (c *counting) BatchGetRow(ctx context.Context, r []*tablekit.GetRowRequest) ([]tablekit.GetRowResult, error) {
	c.n()
	c.rows.Add(int64(len(r)))
	return c.Backend.BatchGetRow(ctx, r)
}

func (c *counting) PutRow(ctx context.Context, r *tablekit.PutRowRequest) error {
	c.n()
	return c.Backend.PutRow(ctx, r)
}

func (c *counting) UpdateRow(ctx context.Context, r *tablekit.UpdateRowRequest) (*tablekit.UpdateResult, error) {
	c.n()
	return c.Backend.UpdateRow(ctx, r)
}

func (c *counting) DeleteRow(ctx context.Context, r *tablekit.DeleteRowRequest) error {
	c.n()
	return c.Backend.DeleteRow(ctx, r)
}

func (c *counting) BatchWriteRow(ctx context.Context, r []*tablekit.WriteRequest) ([]tablekit.WriteResult, error) {
	c.n()
	c.rows.Add(int64(len(r)))
	return c.Backend.BatchWriteRow(ctx, r)
}
