package conformance_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/conformance"
)

// TestSuiteOnLocalEngine runs the suite against the local engine: it is how
// the suite tests itself. It also reports how many backend calls the suite
// makes, the cost that matters when it runs against an emulator.
func TestSuiteOnLocalEngine(t *testing.T) {
	var calls, backends, tables atomic.Int64
	conformance.RunTests(t, newLocalStore(func(b tablekit.Backend) tablekit.Backend {
		backends.Add(1)
		return &counting{Backend: b, calls: &calls, tables: &tables}
	}))
	t.Logf("%d backends, %d tables created, %d backend calls", backends.Load(), tables.Load(), calls.Load())
}

// counting counts the calls that reach a backend. The local engine has no
// batch calls, so batches reach it (and are counted) one row at a time,
// through the Client's fallback.
type counting struct {
	tablekit.Backend
	calls, tables *atomic.Int64
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

func (c *counting) UpdateTable(ctx context.Context, r *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	c.n()
	return c.Backend.UpdateTable(ctx, r)
}

func (c *counting) DeleteTable(ctx context.Context, name string) error {
	c.n()
	return c.Backend.DeleteTable(ctx, name)
}

func (c *counting) GetRow(ctx context.Context, r *tablekit.GetRowRequest) (*tablekit.Row, error) {
	c.n()
	return c.Backend.GetRow(ctx, r)
}

func (c *counting) GetRange(ctx context.Context, r *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	c.n()
	return c.Backend.GetRange(ctx, r)
}

func (c *counting) Write(ctx context.Context, r *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	c.n()
	return c.Backend.Write(ctx, r)
}
