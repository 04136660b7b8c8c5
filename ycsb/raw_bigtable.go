package tkycsb

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/bigtable"
)

// RawBigtable is a go-ycsb binding of the Bigtable client itself: the
// operations a Bigtable user would write for YCSB (one family "c", a
// column per field, reads of the newest version), to compare the adapter
// with.
type RawBigtable struct {
	c     *bigtable.Client
	admin *bigtable.AdminClient
}

// NewRawBigtable returns a raw binding over c and admin (admin creates the
// table); Close closes neither.
func NewRawBigtable(c *bigtable.Client, admin *bigtable.AdminClient) *RawBigtable {
	return &RawBigtable{c: c, admin: admin}
}

const rawFamily = "c"

// Setup creates table with family c keeping one version, unless it exists.
func (r *RawBigtable) Setup(ctx context.Context, table string) error {
	tables, err := r.admin.Tables(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if t == table {
			return nil
		}
	}
	if err := r.admin.CreateTable(ctx, table); err != nil {
		return err
	}
	if err := r.admin.CreateColumnFamily(ctx, table, rawFamily); err != nil {
		return err
	}
	return r.admin.SetGCPolicy(ctx, table, rawFamily, bigtable.MaxVersionsPolicy(1))
}

func (r *RawBigtable) Close() error { return nil }

func (r *RawBigtable) InitThread(ctx context.Context, _, _ int) context.Context { return ctx }

func (r *RawBigtable) CleanupThread(context.Context) {}

// filter reads the newest version of fields (all columns when none).
func (r *RawBigtable) filter(fields []string) bigtable.ReadOption {
	if len(fields) == 0 {
		return bigtable.RowFilter(bigtable.LatestNFilter(1))
	}
	return bigtable.RowFilter(bigtable.ChainFilters(
		bigtable.ColumnFilter("^(?:"+strings.Join(fields, "|")+")$"),
		bigtable.LatestNFilter(1)))
}

func rawBigtableRecord(row bigtable.Row) map[string][]byte {
	items := row[rawFamily]
	m := make(map[string][]byte, len(items))
	for _, it := range items {
		m[strings.TrimPrefix(it.Column, rawFamily+":")] = it.Value
	}
	return m
}

func (r *RawBigtable) Read(ctx context.Context, table, key string, fields []string) (map[string][]byte, error) {
	row, err := r.c.Open(table).ReadRow(ctx, key, r.filter(fields))
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return rawBigtableRecord(row), nil
}

func (r *RawBigtable) Scan(ctx context.Context, table, start string, count int, fields []string) ([]map[string][]byte, error) {
	var out []map[string][]byte
	err := r.c.Open(table).ReadRows(ctx, bigtable.InfiniteRange(start), func(row bigtable.Row) bool {
		out = append(out, rawBigtableRecord(row))
		return true
	}, r.filter(fields), bigtable.LimitRows(int64(count)))
	return out, err
}

// mutation sets values, after deleting the row first when replace is set.
func (r *RawBigtable) mutation(values map[string][]byte, replace bool) *bigtable.Mutation {
	m := bigtable.NewMutation()
	if replace {
		m.DeleteRow()
	}
	for _, n := range sortedNames(values) {
		m.Set(rawFamily, n, bigtable.ServerTime, values[n])
	}
	return m
}

func (r *RawBigtable) Update(ctx context.Context, table, key string, values map[string][]byte) error {
	return r.c.Open(table).Apply(ctx, key, r.mutation(values, false))
}

// Insert replaces the row (a DeleteRow then the cells, in one Apply), as
// tablekit's PutRow does.
func (r *RawBigtable) Insert(ctx context.Context, table, key string, values map[string][]byte) error {
	return r.c.Open(table).Apply(ctx, key, r.mutation(values, true))
}

func (r *RawBigtable) Delete(ctx context.Context, table, key string) error {
	m := bigtable.NewMutation()
	m.DeleteRow()
	return r.c.Open(table).Apply(ctx, key, m)
}
