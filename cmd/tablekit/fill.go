package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
)

// fillOptions tune fillTable.
type fillOptions struct {
	// existing allows writing into a table that exists already (its key
	// schema must match); otherwise such a table is an ErrAlreadyExists.
	existing bool
	// final are the options the table has when fillTable returns, read as
	// UpdateTable reads them: a zero field keeps the existing table's value
	// (a created table's default). nil keeps every option.
	final     *tablekit.TableOptions
	workers   int     // concurrent batch writes (default 4)
	batchRows int     // rows per batch (default and maximum tablekit.MaxBatchWrite)
	maxRate   float64 // rows per second, 0 for no limit
	// done, if set, is called in key order after every row up to and
	// including last is written, with the number of rows written so far.
	done func(last tablekit.PrimaryKey, rows int64)
	// feed, if above 0, is the retention of the change feed a table
	// fillTable creates is created with (the source's); a destination
	// without a feed creates the table without one and says so in note.
	feed time.Duration
	note func(string)
}

// fillStats is what fillTable did.
type fillStats struct {
	rows    int64
	created bool
	final   tablekit.TableOptions // the options the table was left with
}

// batchBytes bounds a batch's size, well under every backend's request limit.
const batchBytes = 2 << 20

// restoreTimeout bounds the setting of a table's options after its rows,
// which runs even when the command's context is cancelled (an interrupt).
const restoreTimeout = time.Minute

// fillTable writes the rows of src into table m.Name of db, creating it
// with m's key schema if needed. While it writes, the table accepts any
// version and expires nothing (see copyOptions), so every version of src
// is written as it is. Whatever happens then — success, a refused row, a
// failed write, an interrupt — fillTable sets the table's options to
// fo.final (or back to what they were) before it returns; only a process
// killed outright leaves them widened (see widened); a table it created
// and wrote no row into is deleted again. Each row is a PutRow
// with explicit versions, so writing a row again (after an interruption)
// leaves the same row: nothing is duplicated.
func fillTable(ctx context.Context, db *tablekit.Client, m *tablekit.TableMeta, src iter.Seq2[tablekit.Row, error], fo fillOptions) (fillStats, error) {
	var st fillStats
	final, err := prepareTable(ctx, db, m, fo, &st)
	st.final = final
	if err != nil {
		return st, err
	}
	werr := writeRows(ctx, db, m.Name, src, fo, &st)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
	defer cancel()
	if werr != nil && st.created && st.rows == 0 {
		// Nothing acknowledged in a table this run created: leave no table.
		if err := db.DeleteTable(rctx, m.Name); err == nil {
			st.created = false
			return st, werr
		}
	}
	if err := db.UpdateTable(rctx, m.Name, final); err != nil {
		err = fmt.Errorf("setting the options of %q after writing its rows: %w; until they are set it accepts any version and expires nothing: run %s", m.Name, err, alterCommand(m.Name, final))
		return st, errors.Join(werr, err)
	}
	return st, werr
}

// prepareTable creates or checks the destination table, opens its version
// window, and returns the options to set when the rows are in. It
// returns an error only with the table's options untouched.
func prepareTable(ctx context.Context, db *tablekit.Client, m *tablekit.TableMeta, fo fillOptions, st *fillStats) (tablekit.TableOptions, error) {
	cur, err := db.DescribeTable(ctx, m.Name)
	switch {
	case errors.Is(err, tablekit.ErrTableNotFound):
		final := overlay(defaultOptions, fo.final)
		nm := tablekit.TableMeta{Name: m.Name, Key: m.Key, Options: copyOptions(final)}
		fopts := feedOption(db, m.Name, fo)
		err := db.CreateTable(ctx, nm, fopts...)
		if err != nil && fopts != nil && fo.feed != tablekit.DefaultFeedRetention && errors.Is(err, tablekit.ErrInvalidArgument) {
			// A retention the destination does not offer (DynamoDB's is
			// 24h): its default, said.
			if fo.note != nil {
				fo.note(fmt.Sprintf("%s: the change feed is created with the destination's default retention, not the source's %v (%v)", m.Name, fo.feed, err))
			}
			err = db.CreateTable(ctx, nm, tablekit.WithChangeFeed(0))
		}
		if err != nil {
			return final, err
		}
		st.created = true
		return final, nil
	case err != nil:
		return tablekit.TableOptions{}, err
	}
	if !slices.Equal(cur.Key, m.Key) {
		return cur.Options, fmt.Errorf("table %q exists with key %s, not %s", m.Name, schemaString(cur.Key), schemaString(m.Key))
	}
	if !fo.existing {
		return cur.Options, fmt.Errorf("table %q: %w at the destination, nothing written: --existing writes into it and %s", m.Name, tablekit.ErrAlreadyExists, existingHelp)
	}
	final := overlay(cur.Options, fo.final)
	if widened(final) {
		return cur.Options, errors.New(widenedHelp(m.Name))
	}
	if err := db.UpdateTable(ctx, m.Name, copyOptions(final)); err != nil {
		return cur.Options, err
	}
	return final, nil
}

// feedOption is the CreateTable option that carries the source's change
// feed (fo.feed) to a table fillTable creates: its retention where the
// destination's Capabilities say ChangeFeed, none (said in fo.note) where
// they do not.
func feedOption(db *tablekit.Client, table string, fo fillOptions) []tablekit.CreateOption {
	if fo.feed <= 0 {
		return nil
	}
	if !db.Capabilities().ChangeFeed {
		if fo.note != nil {
			fo.note(fmt.Sprintf("%s: the source's change feed is not carried: the destination has no change feed", table))
		}
		return nil
	}
	return []tablekit.CreateOption{tablekit.WithChangeFeed(fo.feed)}
}

// existingHelp is what copy --existing does to a table that exists at the
// destination, said before it is done (the flag's help, the refusal).
const existingHelp = "replaces every row whose key the source has too with the source's row, whatever the destination's row holds; a row only the destination has stays (--verify then reports it)"

// batch is a run of consecutive rows written in one BatchWriteRow.
type batch struct {
	seq    int64
	writes []tablekit.BatchWrite
	last   tablekit.PrimaryKey
}

// writeRows writes src in batches with fo.workers concurrent writers and
// reports, in order, the rows that are safely written.
func writeRows(ctx context.Context, db *tablekit.Client, table string, src iter.Seq2[tablekit.Row, error], fo fillOptions, st *fillStats) error {
	workers := fo.workers
	if workers <= 0 {
		workers = 4
	}
	per := fo.batchRows
	if per <= 0 || per > tablekit.MaxBatchWrite {
		per = tablekit.MaxBatchWrite
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	todo := make(chan *batch, workers)
	finished := make(chan *batch, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range todo {
				if err := writeBatch(ctx, db, b.writes); err != nil {
					cancel(err)
					continue
				}
				finished <- b
			}
		})
	}
	// The tracker reports batches in order, whatever order they finish in.
	trackerDone := make(chan struct{})
	go func() {
		defer close(trackerDone)
		pending := map[int64]*batch{}
		next := int64(0)
		for b := range finished {
			pending[b.seq] = b
			for {
				p, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				st.rows += int64(len(p.writes))
				if fo.done != nil {
					fo.done(p.last, st.rows)
				}
			}
		}
	}()

	var srcErr error
	func() {
		defer close(todo)
		var cur *batch
		size, seq := 0, int64(0)
		start := time.Now()
		var sent int64
		send := func() bool {
			if cur == nil {
				return true
			}
			if fo.maxRate > 0 { // pace: sent rows may not run ahead of the rate
				sent += int64(len(cur.writes))
				ahead := time.Duration(float64(sent)/fo.maxRate*float64(time.Second)) - time.Since(start)
				if ahead > 0 {
					select {
					case <-time.After(ahead):
					case <-ctx.Done():
						return false
					}
				}
			}
			select {
			case todo <- cur:
			case <-ctx.Done():
				return false
			}
			cur, size = nil, 0
			return true
		}
		for row, err := range src {
			if err != nil {
				srcErr = err
				return
			}
			if ctx.Err() != nil {
				return
			}
			if cur == nil {
				cur = &batch{seq: seq, writes: make([]tablekit.BatchWrite, 0, per)}
				seq++
			}
			cur.writes = append(cur.writes, tablekit.BatchPut(table, row.Key, row.Columns))
			cur.last = row.Key
			size += row.Size()
			if len(cur.writes) >= per || size >= batchBytes {
				if !send() {
					return
				}
			}
		}
		send()
	}()
	wg.Wait()
	close(finished)
	<-trackerDone
	if srcErr != nil {
		return srcErr
	}
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// writeBatch writes one batch, writing again the rows that failed with a
// retryable error (ErrThrottled, ErrUnavailable), with backoff.
func writeBatch(ctx context.Context, db *tablekit.Client, writes []tablekit.BatchWrite) error {
	wait := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		res, err := db.BatchWriteRow(ctx, writes)
		var again []tablekit.BatchWrite
		if err != nil {
			if !retryable(err) || attempt >= 8 {
				return err
			}
			again = writes
		}
		for i, r := range res {
			if r.Err == nil {
				continue
			}
			if !retryable(r.Err) || attempt >= 8 {
				return fmt.Errorf("row %s: %w", formatKey(writes[i].Key), r.Err)
			}
			again = append(again, writes[i])
		}
		if len(again) == 0 {
			return nil
		}
		writes = again
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func retryable(err error) bool {
	return errors.Is(err, tablekit.ErrThrottled) || errors.Is(err, tablekit.ErrUnavailable)
}
