package tablekit

import (
	"context"
	"errors"
	"iter"
	"math"
)

// Table returns a handle for the rows of table. It does no I/O.
func (c *Client) Table(name string) *Table { return &Table{c: c, name: name} }

// Table reads and writes the rows of one table. It is safe for concurrent use.
type Table struct {
	c    *Client
	name string
}

// Name returns the table's name.
func (t *Table) Name() string { return t.name }

// PutRow replaces the row at key with cols (none: a key-only row).
func (t *Table) PutRow(ctx context.Context, key PrimaryKey, cols []Column, opts ...WriteOption) error {
	ctx, st := t.c.begin(ctx, "PutRow", t.name)
	res, err := t.c.write(ctx, "PutRow", t.name, WritePut, key, cols, nil, writeCond(opts))
	st.endWrite(err, key, cols, nil)
	if err == nil && len(opts) > 0 {
		setReturnKey(returnKeyOf(opts), resKey(res), key)
	}
	return err
}

// UpdateRow applies changes in order to the row at key (absent: created).
func (t *Table) UpdateRow(ctx context.Context, key PrimaryKey, changes []Change, opts ...WriteOption) (UpdateResult, error) {
	ctx, st := t.c.begin(ctx, "UpdateRow", t.name)
	res, err := t.c.write(ctx, "UpdateRow", t.name, WriteUpdate, key, nil, changes, writeCond(opts))
	st.endWrite(err, key, nil, changes)
	if err == nil && len(opts) > 0 {
		setReturnKey(returnKeyOf(opts), resKey(res), key)
	}
	if err != nil || res == nil {
		return UpdateResult{}, err
	}
	return *res, nil
}

// DeleteRow removes the row at key. Deleting a missing row is not an error.
func (t *Table) DeleteRow(ctx context.Context, key PrimaryKey, opts ...WriteOption) error {
	ctx, st := t.c.begin(ctx, "DeleteRow", t.name)
	_, err := t.c.write(ctx, "DeleteRow", t.name, WriteDelete, key, nil, nil, writeCond(opts))
	st.endWrite(err, key, nil, nil)
	return err
}

// GetRow reads the row at key; found is false (no error) if it is absent or
// fails the filter.
func (t *Table) GetRow(ctx context.Context, key PrimaryKey, opts ...ReadOption) (row Row, found bool, err error) {
	ctx, st := t.c.begin(ctx, "GetRow", t.name)
	r, err := t.c.getRow(ctx, t.name, key, opts)
	if st != nil {
		st.endRead(r, err)
	}
	if err != nil {
		return Row{}, false, annotate(err, "GetRow", t.name)
	}
	if r == nil {
		return Row{}, false, nil
	}
	return *r, true, nil
}

// resKey is a write result's Key (nil: none).
func resKey(res *UpdateResult) PrimaryKey {
	if res == nil {
		return nil
	}
	return res.Key
}

// writeCond is writeCondition without its cost (a Condition on the heap)
// when there are no options.
func writeCond(opts []WriteOption) Condition {
	if len(opts) == 0 {
		return Condition{}
	}
	return writeCondition(opts)
}

// write validates and applies one write.
func (c *Client) write(ctx context.Context, op, table string, kind WriteKind, key PrimaryKey, cols []Column, changes []Change, cond Condition) (*UpdateResult, error) {
	var res *UpdateResult
	err := c.run(ctx, table, func(m *TableMeta) error {
		req, err := c.writeRequest(m, kind, key, cols, changes, cond)
		if err != nil {
			return err
		}
		res, err = c.applyWrite(ctx, req)
		return err
	})
	if err != nil {
		return nil, c.backendErr(err, op, table)
	}
	return res, nil
}

// writeRequest validates a write against m and builds its request. The
// request shares key with the caller (the backend only reads it); columns
// and changes are new slices with their versions set.
func (c *Client) writeRequest(m *TableMeta, kind WriteKind, key PrimaryKey, cols []Column, changes []Change, cond Condition) (*WriteRequest, error) {
	now := c.now()
	if err := checkWriteKey(m, kind, key); err != nil {
		return nil, err
	}
	if !c.caps.AutoIncrement && key.AutoIncrementIndex() >= 0 {
		return nil, Errorf(ErrUnimplemented, "the backend has no auto-increment key columns (SPEC §14; Capabilities.AutoIncrement is false)")
	}
	if err := checkCondition(m, cond); err != nil {
		return nil, err
	}
	req := &WriteRequest{Meta: m, Kind: kind, Key: key, Condition: cond, Now: now}
	var verr *Error
	switch kind {
	case WritePut:
		req.Columns, verr = resolvePut(m, cols, now)
	case WriteUpdate:
		req.Changes, verr = resolveChanges(m, changes, now)
	case WriteDelete:
	default:
		verr = invalid("write of unknown kind %d", kind)
	}
	if verr != nil {
		return nil, verr
	}
	return req, nil
}

// getRow validates and runs one read.
func (c *Client) getRow(ctx context.Context, table string, key PrimaryKey, opts []ReadOption) (*Row, error) {
	var r *Row
	err := c.run(ctx, table, func(m *TableMeta) error {
		req, err := c.getRequest(m, key, opts)
		if err != nil {
			return err
		}
		r, err = c.b.GetRow(ctx, req)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrTableNotFound) {
			c.forget(table)
		}
		return nil, err
	}
	return r, nil
}

func (c *Client) getRequest(m *TableMeta, key PrimaryKey, opts []ReadOption) (*GetRowRequest, error) {
	if err := checkKey(m, key, false); err != nil {
		return nil, err
	}
	spec, verr := readSpec(m, opts)
	if verr != nil {
		return nil, verr
	}
	return &GetRowRequest{Meta: m, Key: key, Read: spec, Now: c.now()}, nil
}

// readSpec resolves a read's options; without any, it allocates nothing.
func readSpec(m *TableMeta, opts []ReadOption) (ReadSpec, *Error) {
	if len(opts) == 0 {
		return ReadSpec{MaxVersions: 1}, nil // resolveRead of no options
	}
	o := new(readOptions) // the options see it through an interface: it lives on the heap
	for _, opt := range opts {
		if opt != nil {
			opt.applyRead(o)
		}
	}
	return resolveRead(m, o)
}

// PrefixRange returns the bounds of the rows whose leading key columns equal
// prefix (nil: the whole table; SPEC §8), else ErrInvalidPrimaryKey.
// Backward, swap start and end (a whole key: read forward).
func (t *Table) PrefixRange(ctx context.Context, prefix PrimaryKey) (start, end PrimaryKey, err error) {
	m, err := t.c.tableMeta(ctx, t.name)
	if err != nil {
		return nil, nil, annotate(err, "PrefixRange", t.name)
	}
	if len(prefix) > len(m.Key) {
		return nil, nil, annotate(Errorf(ErrInvalidPrimaryKey, "key prefix %v has %d columns; the schema has %d", prefix, len(prefix), len(m.Key)), "PrefixRange", t.name)
	}
	start = make(PrimaryKey, len(m.Key))
	end = make(PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		if i >= len(prefix) {
			start[i], end[i] = KeyPart{Name: kc.Name, Value: InfMin}, KeyPart{Name: kc.Name, Value: InfMax}
			continue
		}
		p := prefix[i]
		if p.Name != kc.Name {
			return nil, nil, annotate(Errorf(ErrInvalidPrimaryKey, "key prefix column %d is named %q, the schema says %q", i+1, p.Name, kc.Name), "PrefixRange", t.name)
		}
		if verr := checkKeyValue(kc, p.Value, false); verr != nil {
			return nil, nil, annotate(verr, "PrefixRange", t.name)
		}
		start[i], end[i] = p, p
	}
	if len(prefix) == len(m.Key) {
		last := len(end) - 1
		end[last].Value = successor(end[last].Value)
	}
	return start, end, nil
}

// successor is the least key value above v (of v's type, within
// MaxKeyValueSize bytes), or InfMax when there is none.
func successor(v Value) Value {
	switch v.typ {
	case TypeInteger:
		if int64(v.num) == math.MaxInt64 {
			return InfMax
		}
		return Value{typ: TypeInteger, num: v.num + 1}
	case TypeString, TypeBinary:
		if len(v.str) < MaxKeyValueSize {
			return Value{typ: v.typ, str: v.str + "\x00"}
		}
		// The longest value: the next is v cut after its last byte below
		// 0xff, that byte incremented.
		b := []byte(v.str)
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] != 0xff {
				b[i]++
				return Value{typ: v.typ, str: string(b[:i+1])}
			}
		}
	}
	return InfMax
}

// PrefixRows streams the rows of prefix ([Table.PrefixRange]; nil: the whole
// table) with [Table.Rows]'s options; [Backward] walks them down.
func (t *Table) PrefixRows(ctx context.Context, prefix PrimaryKey, opts ...RangeOption) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		start, end, err := t.PrefixRange(ctx, prefix)
		if err != nil {
			yield(Row{}, err)
			return
		}
		var o readOptions
		for _, opt := range opts {
			if opt != nil {
				opt.applyRange(&o)
			}
		}
		if o.backward {
			if len(prefix) == len(start) {
				// One row: read it forward (its successor bounds it only
				// from above).
				opts = append(opts[:len(opts):len(opts)], rangeOpt(func(o *readOptions) { o.backward = false }))
			} else {
				start, end = end, start
			}
		}
		for r, err := range t.Rows(ctx, start, end, opts...) {
			if !yield(r, err) {
				return
			}
		}
	}
}
