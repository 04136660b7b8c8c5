package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit"
)

// copy --follow: a live migration. Before the bulk copy of a table reads
// its first row, copy enables the source's change feed (if it is not) and
// keeps, in the checkpoint, the position at the start of the feed's
// shards; after the bulk copy it applies the feed's records to the
// destination, parents before children, until interrupted (or, with
// --catch-up, until it has applied every record committed so far). A
// record applied twice leaves the destination unchanged: each put carries
// its version, a delete of a version or a column or a row is idempotent,
// and records of one row are applied in commit order. The position is
// saved in the checkpoint as records are applied, so a follower killed
// and run again with the same command goes on (seeing some records
// again). When the lag is zero and the writers are stopped, the tables
// are identical: switch TABLEKIT_URL.

func followFlags(fs *flag.FlagSet) (follow, catchUp *bool) {
	follow = fs.Bool("follow", false, "after copying, apply the source's change feed to the destination until interrupted (enables the feed on the source)")
	catchUp = fs.Bool("catch-up", false, "like --follow, but stop once every record committed so far is applied")
	return follow, catchUp
}

// startFeed makes sure the source table's feed records, and records the
// position the follower will start from (the start of every shard).
func startFeed(ctx context.Context, src *tablekit.Client, name string, tc *tableCheckpoint, cp *checkpoint) error {
	t := src.Table(name)
	st, err := t.ChangeFeed(ctx)
	if err != nil {
		return fmt.Errorf("source: --follow needs a change feed: %w", err)
	}
	if !st.Enabled {
		if _, err := t.EnableChangeFeed(ctx, 0); err != nil {
			return fmt.Errorf("source: enabling the change feed: %w", err)
		}
	}
	cp.mu.Lock()
	if tc.Feed == nil {
		tc.Feed = tablekit.FeedPosition{}
	}
	cp.mu.Unlock()
	return cp.save()
}

// followTables follows every copied table's feed at once.
func followTables(ctx context.Context, src, dst *tablekit.Client, cp *checkpoint, cfg copyConfig, out io.Writer) error {
	names := cfg.tables
	if names == nil {
		cp.mu.Lock()
		for n := range cp.Tables {
			names = append(names, n)
		}
		cp.mu.Unlock()
	}
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		first   error
		applied atomic.Int64
		lagMs   atomic.Int64
	)
	stopProg := make(chan struct{})
	if cfg.progress != nil {
		go func() {
			tk := time.NewTicker(500 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-stopProg:
					fmt.Fprint(cfg.progress, "\r\033[K")
					return
				case <-tk.C:
					fmt.Fprintf(cfg.progress, "\r\033[Kfollowing: %d records applied, lag %v", applied.Load(), time.Duration(lagMs.Load())*time.Millisecond)
				}
			}
		}()
	}
	// The checkpoint file is written (and synced) by a saver of its own,
	// at most every 200 ms while records are applied (the first at once):
	// applying a record never waits for a save, which on a busy disk took
	// up to tens of ms, during which the rest of a page's records waited.
	// A save failing stops the followers and is the command's error.
	fctx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	saveReq := make(chan struct{}, 1)
	saverDone := make(chan error, 1)
	go func() {
		for range saveReq {
			if err := cp.save(); err != nil {
				stopFollowing()
				saverDone <- err
				for range saveReq { // the followers' last requests
				}
				return
			}
		}
		saverDone <- nil
	}()
	var saveMu sync.Mutex
	var lastSave time.Time // the first record applied is saved at once
	for _, name := range names {
		tc := cp.table(name)
		cp.mu.Lock()
		pos := tablekit.FeedPosition{}
		for k, v := range tc.Feed {
			pos[k] = v
		}
		cp.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			dt := dst.Table(name)
			n := int64(0)
			err := src.Table(name).FollowChangeFeed(fctx, pos, tablekit.FollowOptions{UntilCaughtUp: cfg.catchUp}, func(r tablekit.ChangeRecord) error {
				if err := applyRecord(fctx, dt, r); err != nil {
					return fmt.Errorf("applying %s of row %v (commit time %v): %w", kindNames[r.Kind], r.Key, r.CommitTime, err)
				}
				n++
				applied.Add(1)
				lagMs.Store(time.Since(r.CommitTime).Milliseconds())
				cp.mu.Lock()
				if tc.Feed == nil {
					tc.Feed = tablekit.FeedPosition{}
				}
				tc.Feed[r.Shard] = r.Checkpoint
				cp.mu.Unlock()
				saveMu.Lock()
				due := time.Since(lastSave) >= 200*time.Millisecond
				if due {
					lastSave = time.Now()
				}
				saveMu.Unlock()
				if due {
					select {
					case saveReq <- struct{}{}:
					default: // a save is asked for already
					}
				}
				return nil
			})
			if interrupted(fctx, err) {
				err = nil
			}
			if err != nil {
				errMu.Lock()
				if first == nil {
					first = fmt.Errorf("following table %q: %w", name, err)
				}
				errMu.Unlock()
				return
			}
			if !cfg.quiet {
				state := "interrupted"
				if cfg.catchUp && fctx.Err() == nil {
					state = "caught up"
				}
				fmt.Fprintf(out, "%s: followed %s, %s\n", name, plural(n, "change record"), state)
			}
		}()
	}
	wg.Wait()
	close(stopProg)
	close(saveReq)
	if err := <-saverDone; err != nil && first == nil {
		first = fmt.Errorf("saving the checkpoint: %w", err)
	}
	if err := cp.save(); err != nil && first == nil {
		first = err
	}
	return first
}

// applyRecord applies one change record to the destination table.
func applyRecord(ctx context.Context, t *tablekit.Table, r tablekit.ChangeRecord) error {
	switch r.Kind {
	case tablekit.WritePut:
		cols := make([]tablekit.Column, len(r.Changes))
		for i, c := range r.Changes {
			cols[i] = tablekit.Column{Name: c.Column, Value: c.Value, Version: c.Version}
		}
		return t.PutRow(ctx, r.Key, cols)
	case tablekit.WriteUpdate:
		_, err := t.UpdateRow(ctx, r.Key, r.Changes)
		return err
	case tablekit.WriteDelete:
		return t.DeleteRow(ctx, r.Key)
	}
	return errors.New("unknown kind of change record")
}
