package tkycsb

import (
	"context"
	"fmt"
	"slices"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// RawTablestore is a go-ycsb binding of the Tablestore Go SDK itself: a
// String primary key "key", a Binary attribute column per field, reads of
// the newest version.
type RawTablestore struct {
	c *tablestore.TableStoreClient
}

// NewRawTablestore returns a raw binding over c.
func NewRawTablestore(c *tablestore.TableStoreClient) *RawTablestore { return &RawTablestore{c: c} }

// Setup creates table (TTL forever, one version) unless it exists.
func (r *RawTablestore) Setup(_ context.Context, table string) error {
	list, err := r.c.ListTable()
	if err != nil {
		return err
	}
	if slices.Contains(list.TableNames, table) {
		return nil
	}
	meta := &tablestore.TableMeta{TableName: table}
	meta.AddPrimaryKeyColumn(KeyColumn, tablestore.PrimaryKeyType_STRING)
	_, err = r.c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta:          meta,
		TableOption:        tablestore.NewTableOption(-1, 1),
		ReservedThroughput: &tablestore.ReservedThroughput{},
	})
	return err
}

func (r *RawTablestore) Close() error { return nil }

func (r *RawTablestore) InitThread(ctx context.Context, _, _ int) context.Context { return ctx }

func (r *RawTablestore) CleanupThread(context.Context) {}

func tsKey(key string) *tablestore.PrimaryKey {
	pk := &tablestore.PrimaryKey{}
	pk.AddPrimaryKeyColumn(KeyColumn, key)
	return pk
}

func rawTablestoreRecord(cols []*tablestore.AttributeColumn) map[string][]byte {
	m := make(map[string][]byte, len(cols))
	for _, c := range cols {
		if b, ok := c.Value.([]byte); ok {
			m[c.ColumnName] = b
		}
	}
	return m
}

func (r *RawTablestore) Read(_ context.Context, table, key string, fields []string) (map[string][]byte, error) {
	out, err := r.c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: table, PrimaryKey: tsKey(key), MaxVersion: 1, ColumnsToGet: fields,
	}})
	if err != nil {
		return nil, err
	}
	if out.PrimaryKey.PrimaryKeys == nil && len(out.Columns) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, key)
	}
	return rawTablestoreRecord(out.Columns), nil
}

func (r *RawTablestore) Scan(_ context.Context, table, start string, count int, fields []string) ([]map[string][]byte, error) {
	end := &tablestore.PrimaryKey{}
	end.AddPrimaryKeyColumnWithMaxValue(KeyColumn)
	crit := &tablestore.RangeRowQueryCriteria{
		TableName: table, StartPrimaryKey: tsKey(start), EndPrimaryKey: end,
		ColumnsToGet: fields, MaxVersion: 1, Direction: tablestore.FORWARD, Limit: int32(count),
	}
	var out []map[string][]byte
	for {
		res, err := r.c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: crit})
		if err != nil {
			return nil, err
		}
		for _, row := range res.Rows {
			out = append(out, rawTablestoreRecord(row.Columns))
		}
		if res.NextStartPrimaryKey == nil || len(out) >= count {
			return out, nil
		}
		crit.StartPrimaryKey = res.NextStartPrimaryKey
		crit.Limit = int32(count - len(out))
	}
}

func (r *RawTablestore) Update(_ context.Context, table, key string, values map[string][]byte) error {
	ch := &tablestore.UpdateRowChange{TableName: table, PrimaryKey: tsKey(key)}
	for _, n := range sortedNames(values) {
		ch.PutColumn(n, values[n])
	}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err := r.c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: ch})
	return err
}

func (r *RawTablestore) Insert(_ context.Context, table, key string, values map[string][]byte) error {
	ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: tsKey(key)}
	for _, n := range sortedNames(values) {
		ch.AddColumn(n, values[n])
	}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err := r.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
	return err
}

func (r *RawTablestore) Delete(_ context.Context, table, key string) error {
	ch := &tablestore.DeleteRowChange{TableName: table, PrimaryKey: tsKey(key)}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	_, err := r.c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: ch})
	return err
}
