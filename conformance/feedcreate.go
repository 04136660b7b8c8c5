package conformance

import (
	"errors"
	"sync"
	"time"

	tk "github.com/tablekit/tablekit"
)

// testFeedAtCreate: a table created WithChangeFeed has its feed on from
// the start (SPEC §15: "a table created ... with a change feed"): status
// enabled with one shard, the first write recorded. A bad retention is
// ErrInvalidArgument and a backend without a feed ErrUnimplemented, both
// before anything is created. On a backend that creates the table and its
// feed in one step (Capabilities.CreateWithFeed), a writer in another client that
// writes as soon as the table exists has every acknowledged write
// recorded.
func testFeedAtCreate(e *env) {
	bad := e.name("feedbad")
	err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: bad, Key: schemaI}, tk.WithChangeFeed(time.Hour))
	e.cleanupTable(bad)
	if !tk.CapabilitiesOf(e.b).ChangeFeed {
		e.wantErr("CreateTable WithChangeFeed on a backend without a feed", err, tk.ErrUnimplemented, bad)
		name := e.name("feednone")
		err = e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schemaI}, tk.WithChangeFeed(0))
		e.cleanupTable(name)
		e.wantErr("CreateTable WithChangeFeed on a backend without a feed", err, tk.ErrUnimplemented, name)
		_, err = e.c.DescribeTable(e.ctx, name)
		e.wantErr("DescribeTable of the refused table", err, tk.ErrTableNotFound)
		return
	}
	e.wantErr("CreateTable WithChangeFeed(1h)", err, tk.ErrInvalidArgument, bad, "retention")
	_, err = e.c.DescribeTable(e.ctx, bad)
	e.wantErr("DescribeTable of the table refused for its retention", err, tk.ErrTableNotFound)

	name := e.name("feedcreate")
	other := e.fresh().Table(name)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked []int64
		stop  = make(chan struct{})
	)
	caps := tk.CapabilitiesOf(e.b)
	if caps.CreateWithFeed {
		wg.Add(1)
		go func() { // writes from another client as soon as the table exists
			defer wg.Done()
			for i := int64(1); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				err := other.PutRow(e.ctx, intKey(i), []tk.Column{col("c", iv(i), 0)})
				switch {
				case err == nil:
					mu.Lock()
					acked = append(acked, i)
					n := len(acked)
					mu.Unlock()
					if n >= 20 {
						return
					}
				case !errors.Is(err, tk.ErrTableNotFound):
					e.t.Errorf("writer: PutRow %d: %v", i, err)
					return
				}
			}
		}()
	}
	err = e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schemaI}, tk.WithChangeFeed(0))
	e.cleanupTable(name)
	if err != nil {
		close(stop)
		wg.Wait()
		e.t.Fatalf("CreateTable WithChangeFeed: %v", err)
	}
	t := tbl{Table: e.c.Table(name), schema: schemaI}
	st, err := t.ChangeFeed(e.ctx)
	if e.ok("ChangeFeed", err) && (!st.Enabled || len(st.Shards) != 1 || st.Retention < tk.MinFeedRetention) {
		e.t.Errorf("a table created WithChangeFeed(0) has the feed %+v, want enabled with one shard and a retention of at least 24h", st)
	}
	e.put(t, intKey(0), col("c", iv(0), 0))
	wg.Wait()
	close(stop)
	got := map[int64]bool{}
	for _, r := range e.readAll(t) {
		if v, ok := r.Key[0].Value.Int(); ok {
			got[v] = true
		}
	}
	if !got[0] {
		e.t.Errorf("the first write after CreateTable WithChangeFeed is not in the feed")
	}
	for _, i := range acked {
		if !got[i] {
			e.t.Errorf("row %d, written by another client as soon as the table existed, is not in the feed", i)
		}
	}
}
