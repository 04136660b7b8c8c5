package conformance

import (
	tk "github.com/tablekit/tablekit"
)

// testStaleUpdateTable: Backend.UpdateTable applies a change only to the
// table as req.Meta describes it, and otherwise changes nothing: options
// changed since (another Generation; other options, on a backend that
// counts no Generation) is ErrConditionFailed; the table deleted and
// created again (another Incarnation, at the same Generation) is
// ErrTableNotFound, not ErrConditionFailed, so that the caller does not
// retry against a table it never read; a table deleted is ErrTableNotFound.
// A backend that keeps no Incarnation (it reports "") is spared the
// second check: it cannot tell the tables apart.
func testStaleUpdateTable(e *env) {
	t := e.create("staleupd", schemaS, tk.TableOptions{})
	name := t.Name()
	describe := func(what string) *tk.TableMeta {
		e.t.Helper()
		m, err := e.b.DescribeTable(e.ctx, name)
		e.must(what+": Backend.DescribeTable", err)
		return m
	}
	maxVersions := func(what string, want int) {
		e.t.Helper()
		m, err := e.fresh().DescribeTable(e.ctx, name)
		if e.ok(what+": DescribeTable", err) && m.Options.MaxVersions != want {
			e.t.Errorf("%s: MaxVersions %d, want %d: a refused UpdateTable changed the table", what, m.Options.MaxVersions, want)
		}
	}
	update := func(m *tk.TableMeta) error {
		opts := m.Options
		opts.MaxVersions = 5
		_, err := e.b.UpdateTable(e.ctx, &tk.UpdateTableRequest{Meta: m, Options: opts})
		return err
	}

	m1 := describe("after CreateTable")
	e.must("UpdateTable MaxVersions 2", e.c.UpdateTable(e.ctx, name, tk.TableOptions{MaxVersions: 2}))
	m2 := describe("after UpdateTable")
	e.wantErr("Backend.UpdateTable with the table's meta from before an UpdateTable", update(m1), tk.ErrConditionFailed)
	maxVersions("after the refused UpdateTable", 2)

	e.must("DeleteTable", e.c.DeleteTable(e.ctx, name))
	e.must("CreateTable again", e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schemaS}))
	m3 := describe("after CreateTable again")
	if m2.Incarnation == "" {
		e.t.Logf("the backend keeps no Incarnation: the table created again is not told from the deleted one")
	} else {
		// The new table's meta but the old Incarnation: only the
		// Incarnation is stale.
		stale := *m3
		stale.Incarnation = m2.Incarnation
		e.wantErr("Backend.UpdateTable with the deleted table's Incarnation", update(&stale), tk.ErrTableNotFound)
		maxVersions("the table created again, after the refused UpdateTable", 1)
	}

	e.must("DeleteTable again", e.c.DeleteTable(e.ctx, name))
	e.wantErr("Backend.UpdateTable of a deleted table", update(m3), tk.ErrTableNotFound)
}
