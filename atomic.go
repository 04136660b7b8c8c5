package tablekit

import (
	"context"
	"errors"
	"fmt"
)

// Limits of one AtomicWrite (SPEC §13): writes, and bytes of keys, column
// names and values in all.
const (
	MaxAtomicWrite     = 100
	MaxAtomicWriteSize = 4 << 20
)

// AtomicWriteError names the failed write (0-based); errors.Is sees through.
type AtomicWriteError struct {
	Index int
	Err   error
}

// Error is Err's message, which names the write.
func (e *AtomicWriteError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("tablekit: atomic write %d failed", e.Index)
	}
	return e.Err.Error()
}

// Unwrap returns Err.
func (e *AtomicWriteError) Unwrap() error { return e.Err }

// AtomicWrite applies writes to distinct rows of one table and partition key
// all or nothing, within SPEC §13's limits; if one fails, nothing is written
// and err is an [*AtomicWriteError] naming it. No [Capabilities.AtomicWrite]:
// ErrUnimplemented. A write creating a row with [AutoIncrement] in a table
// with secondary indexes is refused with ErrUnimplemented, nothing written
// (its entries would need the key the atomic write assigns: see the index
// notes, "Auto-increment keys"); write such a row alone.
func (c *Client) AtomicWrite(ctx context.Context, writes []BatchWrite) (out []BatchWriteResult, err error) {
	const op = "AtomicWrite"
	table := ""
	if len(writes) > 0 {
		table = writes[0].Table
	}
	ctx, st := c.beginBatch(ctx, op, table, len(writes))
	defer func() { st.endBatchWrite(writes, out, err) }()
	if err := c.checkOpen(op, table); err != nil {
		return nil, err
	}
	aw, ok := optional[AtomicWriter](c, c.caps.AtomicWrite)
	if !ok {
		return nil, refuse(op, table, "the backend cannot write several rows atomically (SPEC §13; Capabilities.AtomicWrite is false)")
	}
	if len(writes) == 0 || len(writes) > MaxAtomicWrite {
		return nil, annotate(fmtLimit(op, len(writes), MaxAtomicWrite), op, table)
	}
	for i := range writes {
		if writes[i].Table != table {
			return nil, atomicErr(Errorf(ErrInvalidArgument, "table %q: all writes of an atomic write must be of table %q", writes[i].Table, table), i, op, table)
		}
	}
	var res []WriteResponse
	err = c.run(ctx, table, func(m *TableMeta) error {
		reqs, err := c.atomicRequests(m, writes)
		if err != nil {
			return err
		}
		if len(m.Indexes) > 0 {
			res, err = c.atomicIndexed(ctx, aw, reqs)
		} else {
			res, err = aw.AtomicWrite(ctx, reqs)
		}
		if err == nil && len(res) != len(reqs) {
			err = Errorf(ErrUnavailable, "backend returned %d results for %d writes", len(res), len(reqs))
		}
		return err
	})
	if err != nil {
		var ae *AtomicWriteError
		if errors.As(err, &ae) {
			if errors.Is(ae.Err, ErrTableNotFound) {
				c.forget(table)
			}
			return nil, atomicErr(ae.Err, ae.Index, op, table)
		}
		return nil, c.backendErr(err, op, table)
	}
	out = make([]BatchWriteResult, len(writes))
	for i, r := range res {
		if r.Update != nil {
			out[i].Increments, out[i].Key = r.Update.Increments, r.Update.Key
		}
		setReturnKey(writes[i].returnKey, out[i].Key, writes[i].Key)
	}
	return out, nil
}

// AtomicWrite is [Client.AtomicWrite] on t; a write's Table may be left
// empty.
func (t *Table) AtomicWrite(ctx context.Context, writes []BatchWrite) ([]BatchWriteResult, error) {
	for i := range writes {
		if writes[i].Table == "" { // name the table in a copy: writes is the caller's
			ws := make([]BatchWrite, len(writes))
			for j, w := range writes {
				if w.Table == "" {
					w.Table = t.name
				}
				ws[j] = w
			}
			return t.c.AtomicWrite(ctx, ws)
		}
	}
	return t.c.AtomicWrite(ctx, writes)
}

// smallAtomic is how many writes an atomic write checks for a row written
// twice by comparing keys, rather than with a map.
const smallAtomic = 16

// atomicRequests validates an atomic write against m (the table's meta)
// and builds its requests: each write as a single-row write is, then the
// rules of SPEC §13 across them. An error is an *AtomicWriteError naming
// the write.
func (c *Client) atomicRequests(m *TableMeta, writes []BatchWrite) ([]*WriteRequest, error) {
	reqs := make([]*WriteRequest, len(writes))
	var seen map[string]struct{}
	if len(writes) > smallAtomic {
		seen = make(map[string]struct{}, len(writes))
	}
	size := 0
	for i := range writes {
		w := &writes[i]
		req, err := c.writeRequest(m, w.Kind, w.Key, w.Columns, w.Changes, w.Condition)
		if err != nil {
			return nil, &AtomicWriteError{Index: i, Err: err}
		}
		if i > 0 && !w.Key[0].Value.Equal(writes[0].Key[0].Value) {
			return nil, &AtomicWriteError{Index: i, Err: invalid("key %v is not of partition key %s=%v, the first write's: an atomic write stays within one partition key",
				w.Key, w.Key[0].Name, writes[0].Key[0].Value)}
		}
		dup := false
		switch {
		case w.Key.AutoIncrementIndex() >= 0: // a new row
		case len(writes) <= smallAtomic: // a scan of the few before it beats a map
			for j := range i {
				dup = dup || writes[j].Key.Equal(w.Key)
			}
		default:
			id := string(encodeToken(token{key: w.Key}))
			_, dup = seen[id]
			seen[id] = struct{}{}
		}
		if dup {
			return nil, &AtomicWriteError{Index: i, Err: invalid("row %v is written twice in one atomic write", w.Key)}
		}
		if size += writeBytes(w.Key, w.Columns, w.Changes); size > MaxAtomicWriteSize {
			return nil, &AtomicWriteError{Index: i, Err: invalid("the atomic write reaches %d bytes at this write; the limit is %d bytes", size, MaxAtomicWriteSize)}
		}
		reqs[i] = req
	}
	return reqs, nil
}

// atomicErr is err, write i's, as AtomicWrite returns it: an
// *AtomicWriteError around an *Error of op and table whose message names
// the write.
func atomicErr(err error, i int, op, table string) error {
	err = annotate(err, op, table)
	var te *Error
	if errors.As(err, &te) {
		cp := *te
		if cp.Msg != "" {
			cp.Msg = fmt.Sprintf("write %d: %s", i, cp.Msg)
		} else {
			cp.Msg = fmt.Sprintf("write %d", i)
		}
		err = &cp
	}
	return &AtomicWriteError{Index: i, Err: err}
}
