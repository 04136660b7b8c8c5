package tablekit

import (
	"context"
	"slices"
)

// Meta returns the table's metadata as the Client knows it: from its cache
// (see [WithMetaCacheTTL]), read from the backend only when not cached. A
// program or package that checks a write against the schema (package typed
// does) calls it per write; [Client.DescribeTable] always asks the backend.
func (t *Table) Meta(ctx context.Context) (TableMeta, error) {
	if err := t.c.checkOpen("DescribeTable", t.name); err != nil {
		return TableMeta{}, err
	}
	m, err := t.c.tableMeta(ctx, t.name)
	if err != nil {
		return TableMeta{}, annotate(err, "DescribeTable", t.name)
	}
	out := *m
	out.Key = slices.Clone(m.Key)
	return out, nil
}
