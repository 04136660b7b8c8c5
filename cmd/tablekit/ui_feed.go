package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
)

type feedPageData struct {
	Table     string
	Supported bool
	Enabled   bool
	Retention string
	Shards    int
	Events    string // the event stream's address
}

func (c *console) feedPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	d := feedPageData{Table: name, Supported: c.db.Capabilities().ChangeFeed, Events: "/t/" + url.PathEscape(name) + "/feed/events"}
	if d.Supported {
		st, err := c.db.Table(name).ChangeFeed(r.Context())
		if err != nil {
			c.fail(w, name, err)
			return
		}
		d.Enabled, d.Retention, d.Shards = st.Enabled, st.Retention.String(), len(st.Shards)
	}
	c.render(w, 0, "feed", name+" feed", name, d, "")
}

// setFeed enables (on=1) or disables a table's change feed.
func (c *console) setFeed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.db.Table(name)
	var err error
	if r.PostFormValue("on") == "1" {
		_, err = t.EnableChangeFeed(r.Context(), 0)
	} else {
		err = t.DisableChangeFeed(r.Context())
	}
	if err != nil {
		c.fail(w, name, err)
		return
	}
	seeOther(w, r, "/t/"+url.PathEscape(name)+"/feed", nil)
}

// feedStart is the position from=now|start|POSITION names: now is past
// every record retained so far (the feed read to its end once), start is
// the oldest retained, POSITION is the JSON of tail --checkpoint's file
// (shard: checkpoint), which the page shows as it goes.
func (c *console) feedStart(ctx context.Context, t *tablekit.Table, from string) (tablekit.FeedPosition, error) {
	pos := tablekit.FeedPosition{}
	switch from {
	case "", "now":
		var mu sync.Mutex
		err := t.FollowChangeFeed(ctx, tablekit.FeedPosition{}, tablekit.FollowOptions{UntilCaughtUp: true}, func(r tablekit.ChangeRecord) error {
			mu.Lock()
			pos[r.Shard] = r.Checkpoint
			mu.Unlock()
			return nil
		})
		return pos, err
	case "start":
		return pos, nil
	}
	if err := json.Unmarshal([]byte(from), &pos); err != nil {
		return nil, usagef("checkpoint: want the JSON object of a position ({\"SHARD\":\"CHECKPOINT\",…}), as this page shows it: %v", err)
	}
	return pos, nil
}

// feedEvents streams the feed as server-sent events: "rec" events, each a
// record as tail prints it; "error" when the feed fails. The page keeps
// each record's shard and checkpoint, so pausing (closing the stream) and
// resuming from there loses nothing.
func (c *console) feedEvents(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	ctx := r.Context()
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	bw := bufio.NewWriterSize(w, 32<<10)
	dirty := false
	send := func(event string, b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", event, b)
		dirty = true
		return nil
	}
	flush := func() {
		mu.Lock()
		defer mu.Unlock()
		if dirty {
			bw.Flush()
			fl.Flush()
			dirty = false
		}
	}
	fail := func(err error) {
		b, _ := json.Marshal(err.Error())
		send("failed", b)
		flush()
	}
	t := c.db.Table(name)
	st, err := t.ChangeFeed(ctx)
	if err != nil {
		fail(err)
		return
	}
	if !st.Enabled && len(st.Shards) == 0 {
		fail(fmt.Errorf("table %q has no change feed: enable it on this page (with --write) or with \"tablekit feed %s on\"", name, name))
		return
	}
	pos, err := c.feedStart(ctx, t, r.URL.Query().Get("from"))
	if err != nil {
		fail(err)
		return
	}
	b, _ := json.Marshal(pos)
	send("position", b)
	flush()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { // flush a few times a second; a comment now and then keeps proxies from closing the stream
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		idle := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if idle++; idle >= 150 {
				mu.Lock()
				bw.WriteString(": keep-alive\n\n")
				dirty = true
				mu.Unlock()
				idle = 0
			}
			flush()
		}
	})
	err = t.FollowChangeFeed(ctx, pos, tablekit.FollowOptions{Poll: 100 * time.Millisecond}, func(rec tablekit.ChangeRecord) error {
		b, err := json.Marshal(toFeedLine(rec))
		if err != nil {
			return err
		}
		return send("rec", b)
	})
	if err != nil && r.Context().Err() == nil {
		fail(err)
	}
	cancel()
	wg.Wait()
}
