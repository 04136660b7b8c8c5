package tkycsb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/magiconair/properties"
	"github.com/pingcap/go-ycsb/pkg/ycsb"

	"github.com/tablekit/tablekit"
)

// KeyColumn is the name of the key column of a YCSB table.
const KeyColumn = "key"

// ErrNotFound is returned by a binding's Read of a record that does not
// exist: YCSB counts it as a failed operation.
var ErrNotFound = errors.New("tkycsb: record not found")

// DB is a go-ycsb binding over a tablekit Client.
type DB struct {
	c     *tablekit.Client
	owned bool                       // Close closes c
	proj  atomic.Pointer[columnsOpt] // the last projection Read or Scan built
}

// columnsOpt is a read's Columns option and the fields it was built from.
type columnsOpt struct {
	fields []string
	opt    tablekit.ReadOption
}

// New returns a binding over c; Close does not close c.
func New(c *tablekit.Client) *DB { return &DB{c: c} }

// Open opens a binding by URL (see tablekit.Open); Close closes the client.
func Open(ctx context.Context, url string) (*DB, error) {
	c, err := tablekit.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	return &DB{c: c, owned: true}, nil
}

// Setup creates table (one String key column) unless it exists.
func (d *DB) Setup(ctx context.Context, table string) error {
	err := d.c.CreateTable(ctx, tablekit.TableMeta{
		Name: table,
		Key:  tablekit.KeySchema{{Name: KeyColumn, Type: tablekit.TypeString}},
	})
	if errors.Is(err, tablekit.ErrAlreadyExists) {
		return nil
	}
	return err
}

// Close implements ycsb.DB.
func (d *DB) Close() error {
	if d.owned {
		return d.c.Close()
	}
	return nil
}

// InitThread implements ycsb.DB.
func (d *DB) InitThread(ctx context.Context, _, _ int) context.Context { return ctx }

// CleanupThread implements ycsb.DB.
func (d *DB) CleanupThread(context.Context) {}

func key(k string) tablekit.PrimaryKey { return tablekit.Key(KeyColumn, tablekit.String(k)) }

// columns returns tablekit.Columns(fields...), the last one built when the
// fields are the same: go-ycsb asks every read for the same fields, which
// Columns would copy and sort each time (an option is immutable, and
// goroutines may share it).
func (d *DB) columns(fields []string) tablekit.ReadOption {
	if p := d.proj.Load(); p != nil && slices.Equal(p.fields, fields) {
		return p.opt
	}
	p := &columnsOpt{fields: slices.Clone(fields), opt: tablekit.Columns(fields...)}
	d.proj.Store(p)
	return p.opt
}

// record is a row as go-ycsb takes it. Its byte slices share the values'
// immutable strings rather than copy them (Value.Bytes would): go-ycsb
// only reads what Read and Scan return, and the raw bindings, too, hand it
// the bytes their SDK decoded, so neither side pays a copy the other does
// not.
func record(cols []tablekit.Column) map[string][]byte {
	m := make(map[string][]byte, len(cols))
	for _, c := range cols {
		s, _ := c.Value.BytesString()
		m[c.Name] = unsafe.Slice(unsafe.StringData(s), len(s))
	}
	return m
}

// Read implements ycsb.DB: GetRow, projected on fields.
func (d *DB) Read(ctx context.Context, table, k string, fields []string) (map[string][]byte, error) {
	var (
		row   tablekit.Row
		found bool
		err   error
	)
	if len(fields) == 0 {
		row, found, err = d.c.Table(table).GetRow(ctx, key(k))
	} else {
		row, found, err = d.c.Table(table).GetRow(ctx, key(k), d.columns(fields))
	}
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, k)
	}
	return record(row.Columns), nil
}

// Scan implements ycsb.DB: Table.Scan from start with Limit(count), one
// backend page (the no-copy read where the backend has one; the records
// keep only the rows' strings, which Scan lets a caller keep).
func (d *DB) Scan(ctx context.Context, table, start string, count int, fields []string) ([]map[string][]byte, error) {
	opts := []tablekit.RangeOption{tablekit.Limit(count)}
	if len(fields) > 0 {
		opts = append(opts, d.columns(fields))
	}
	out := make([]map[string][]byte, 0, count)
	for r, err := range d.c.Table(table).Scan(ctx, key(start), tablekit.Key(KeyColumn, tablekit.InfMax), opts...) {
		if err != nil {
			return nil, err
		}
		out = append(out, record(r.Columns))
	}
	return out, nil
}

// sortedNames returns values' names in order, so that a write's cells do
// not depend on map order.
func sortedNames(values map[string][]byte) []string {
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// copyValues returns values' names in order and their bytes, in that
// order, copied into one string (go-ycsb reuses the buffers): a record's
// values cost one allocation, each value a piece of the string.
func copyValues(values map[string][]byte) ([]string, string) {
	names := make([]string, 0, len(values))
	n := 0
	for name, v := range values {
		names = append(names, name)
		n += len(v)
	}
	slices.Sort(names)
	var sb strings.Builder
	sb.Grow(n)
	for _, name := range names {
		sb.Write(values[name])
	}
	return names, sb.String()
}

// Update implements ycsb.DB: UpdateRow with one Put per field.
func (d *DB) Update(ctx context.Context, table, k string, values map[string][]byte) error {
	names, all := copyValues(values)
	changes := make([]tablekit.Change, len(names))
	for i, n := range names {
		l := len(values[n])
		changes[i], all = tablekit.Put(n, tablekit.BinaryString(all[:l])), all[l:]
	}
	_, err := d.c.Table(table).UpdateRow(ctx, key(k), changes)
	return err
}

// Insert implements ycsb.DB: PutRow.
func (d *DB) Insert(ctx context.Context, table, k string, values map[string][]byte) error {
	names, all := copyValues(values)
	cols := make([]tablekit.Column, len(names))
	for i, n := range names {
		l := len(values[n])
		cols[i], all = tablekit.Column{Name: n, Value: tablekit.BinaryString(all[:l])}, all[l:]
	}
	return d.c.Table(table).PutRow(ctx, key(k), cols)
}

// Delete implements ycsb.DB: DeleteRow.
func (d *DB) Delete(ctx context.Context, table, k string) error {
	return d.c.Table(table).DeleteRow(ctx, key(k))
}

// URLProperty is the go-ycsb property that names the tablekit URL of the
// "tablekit" binding.
const URLProperty = "tablekit.url"

type creator struct{}

// Create implements ycsb.DBCreator: it opens tablekit.url and creates the
// workload's table.
func (creator) Create(p *properties.Properties) (ycsb.DB, error) {
	url, ok := p.Get(URLProperty)
	if !ok {
		return nil, fmt.Errorf("tkycsb: property %s (a tablekit URL) is not set", URLProperty)
	}
	ctx := context.Background()
	d, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := d.Setup(ctx, p.GetString("table", "usertable")); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func init() { ycsb.RegisterDBCreator("tablekit", creator{}) }
