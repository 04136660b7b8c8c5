package main

// Benchmarks of the web console, in process:
//
//	go test -run '^$' -bench 'UIRowsPage' -count 6 ./cmd/tablekit/
//	go test -run '^$' -bench 'UIFeedTail' -benchtime 1x -count 3 ./cmd/tablekit/
//
// UIRowsPage renders the rows page of 100 rows × 10 columns on the local
// engine (console) and runs the CLI's scan of the same rows (cli-scan, the
// command's code with its table output discarded); interleaved does one of
// each per iteration and reports the median ratio console/scan and the
// page's weight in bytes. UIFeedTail writes 1,000 rows/s for 2 s while a
// client follows the console's feed stream, and reports how many records
// arrived and the lag from each write's acknowledgement to its event.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/benchstat"
)

// uiBenchTable is table b of 100 rows × 10 columns of every type.
func uiBenchTable(b *testing.B) (*console, *tablekit.Client) {
	ctx := context.Background()
	db, err := tablekit.Open(ctx, "mem://")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "b", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}, {Name: "n", Type: tablekit.TypeInteger}}}); err != nil {
		b.Fatal(err)
	}
	var writes []tablekit.BatchWrite
	for i := range 100 {
		var cols []tablekit.Column
		for c := range 10 {
			var v tablekit.Value
			switch c % 5 {
			case 0:
				v = tablekit.String(fmt.Sprintf("value %d of row %d", c, i))
			case 1:
				v = tablekit.Integer(int64(i*c) << 20)
			case 2:
				v = tablekit.Double(float64(i) / 7)
			case 3:
				v = tablekit.Boolean(i%2 == 0)
			case 4:
				v = tablekit.Binary([]byte{byte(i), byte(c), 0xff})
			}
			cols = append(cols, tablekit.Column{Name: fmt.Sprintf("c%d", c), Value: v})
		}
		writes = append(writes, tablekit.BatchPut("b", tablekit.Key("id", tablekit.String(fmt.Sprintf("user%04d", i))).Add("n", tablekit.Integer(int64(i))), cols))
	}
	if _, err := db.BatchWriteRow(ctx, writes); err != nil {
		b.Fatal(err)
	}
	c, err := newConsole(db, &env{url: "mem://"}, consoleConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return c, db
}

func BenchmarkUIRowsPage(b *testing.B) {
	c, db := uiBenchTable(b)
	ctx := context.Background()
	page := func(b *testing.B) int {
		w := serve(c, get("/t/b?n=100"))
		if w.Code != 200 || strings.Count(w.Body.String(), `<a class="open"`) != 100 {
			b.Fatalf("rows page: %d", w.Code)
		}
		return w.Body.Len()
	}
	scan := func(b *testing.B) {
		e := &env{client: db, stdout: io.Discard, stderr: io.Discard}
		if err := runCommand(ctx, e, lookup("scan"), []string{"b", "--limit", "100"}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("console", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n = page(b)
		}
		b.ReportMetric(float64(n), "page-bytes")
	})
	b.Run("cli-scan", func(b *testing.B) {
		for b.Loop() {
			scan(b)
		}
	})
	b.Run("interleaved", func(b *testing.B) {
		var ratios []float64
		n := 0
		for b.Loop() {
			t0 := time.Now()
			n = page(b)
			t1 := time.Now()
			scan(b)
			ratios = append(ratios, float64(t1.Sub(t0))/float64(time.Since(t1)))
		}
		b.ReportMetric(benchstat.Median(ratios), "console/scan")
		b.ReportMetric(float64(n), "page-bytes")
	})
}

func BenchmarkUIFeedTail(b *testing.B) {
	const rate, dur = 1000, 2 * time.Second
	ctx := context.Background()
	db, err := tablekit.Open(ctx, "mem://")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "f", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Table("f").EnableChangeFeed(ctx, 0); err != nil {
		b.Fatal(err)
	}
	c, err := newConsole(db, &env{url: "mem://"}, consoleConfig{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	next := 0
	for b.Loop() {
		sctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+"/t/f/feed/events?from=now", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var mu sync.Mutex
		acked := map[int64]time.Time{}
		var lags []time.Duration
		ready := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 1<<20)
			event := ""
			for sc.Scan() {
				line := sc.Text()
				if e, ok := strings.CutPrefix(line, "event: "); ok {
					event = e
					continue
				}
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				switch event {
				case "position":
					close(ready)
				case "rec":
					var l feedLine
					if err := json.Unmarshal([]byte(data), &l); err != nil || l.Key["id"].I == nil {
						continue
					}
					now := time.Now()
					mu.Lock()
					if at, ok := acked[*l.Key["id"].I]; ok {
						lags = append(lags, now.Sub(at))
					}
					mu.Unlock()
				}
			}
		}()
		<-ready
		start := time.Now()
		tbl := db.Table("f")
		writes := 0
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * time.Second / rate)
			if due.Sub(start) >= dur {
				break
			}
			time.Sleep(time.Until(due))
			id := int64(next)
			next++
			if err := tbl.PutRow(ctx, tablekit.Key("id", tablekit.Integer(id)), []tablekit.Column{{Name: "v", Value: tablekit.Integer(id)}}); err != nil {
				b.Fatal(err)
			}
			mu.Lock()
			acked[id] = time.Now()
			mu.Unlock()
			writes++
		}
		wrote := time.Since(start)
		// Wait for the stragglers, then stop.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			n := len(lags)
			mu.Unlock()
			if n >= writes {
				break
			}
		}
		cancel()
		resp.Body.Close()
		<-done
		slices.Sort(lags)
		if len(lags) < writes {
			b.Errorf("the tail delivered %d of %d writes", len(lags), writes)
		}
		b.ReportMetric(float64(writes)/wrote.Seconds(), "writes/s")
		b.ReportMetric(float64(len(lags))/float64(writes)*100, "delivered-%")
		if len(lags) > 0 {
			b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "lag-p50-ms")
			b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "lag-p99-ms")
			b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "lag-max-ms")
		}
	}
}
