package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit"
)

// progress draws "table: rows, rows/s, ETA" on a terminal, a few times a
// second. The total for the ETA comes from counting the source alongside.
type progress struct {
	w      io.Writer
	rows   atomic.Int64
	total  atomic.Int64 // -1 until counted
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startProgress starts the progress line of table name; with w nil it
// returns a progress that draws nothing.
func startProgress(ctx context.Context, w io.Writer, db *tablekit.Client, m *tablekit.TableMeta, name string, already int64) *progress {
	p := &progress{w: w}
	p.rows.Store(already)
	p.total.Store(-1)
	if w == nil {
		return p
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Go(func() { // count the source's rows for the ETA
		var n int64
		for _, err := range allRows(ctx, db, m, tablekit.PageSize(tablekit.MaxPageRows)) {
			if err != nil {
				return
			}
			n++
		}
		p.total.Store(n)
	})
	p.wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		began, from := time.Now(), already
		for {
			select {
			case <-ctx.Done():
				fmt.Fprintf(w, "\r\033[K")
				return
			case <-t.C:
			}
			n := p.rows.Load()
			el := time.Since(began).Seconds()
			rate := float64(n-from) / el
			eta := "?"
			if tot := p.total.Load(); tot >= 0 && rate > 0 {
				eta = (time.Duration(float64(max(tot-n, 0))/rate) * time.Second).Round(time.Second).String()
				fmt.Fprintf(w, "\r\033[K%s: %d/%d rows  %.0f rows/s  ETA %s", name, n, tot, rate, eta)
				continue
			}
			fmt.Fprintf(w, "\r\033[K%s: %d rows  %.0f rows/s  ETA %s", name, n, rate, eta)
		}
	})
	return p
}

func (p *progress) set(n int64) { p.rows.Store(n) }

func (p *progress) stop() {
	if p.cancel != nil {
		p.cancel()
		p.wg.Wait()
	}
}
