package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §15, the change feed. A backend that claims Capabilities.ChangeFeed
// must record every committed write as SPEC says; one that does not must
// refuse to enable a feed with ErrUnimplemented (the Client refuses before
// calling it), and its tables keep working.

func changeFeedCases() []testCase {
	return []testCase{
		{"Refused", testFeedRefused},
		{"NoFeedOnTheTable", testFeedNotEnabled},
		{"CreatedWithTheFeed", testFeedAtCreate},
		{"EveryKindOfWrite", testFeedKinds},
		{"AtomicWrite", testFeedAtomic},
		{"PerRowOrder16Writers", testFeedOrder},
		{"ResumeFromEveryCheckpoint", testFeedResume},
		{"ReaderDuringWrites", testFeedConcurrentReader},
		{"Retention", testFeedRetention},
		{"DisableEndsTheFeed", testFeedDisable},
	}
}

// feedTable makes a table with its feed enabled; on a backend without a
// feed it skips the case, saying so (Refused checks the refusal there).
func (e *env) feedTable(hint string) (tbl, bool) {
	e.t.Helper()
	if !tk.CapabilitiesOf(e.b).ChangeFeed {
		e.t.Skip("the backend has no change feed (Capabilities.ChangeFeed is false); S15_ChangeFeed/Refused checks that it refuses one")
		return tbl{}, false
	}
	t := e.create(hint, schemaI, tk.TableOptions{MaxVersions: 3})
	if _, err := t.EnableChangeFeed(e.ctx, 0); err != nil {
		e.t.Fatalf("EnableChangeFeed: %v", err)
	}
	return t, true
}

// fmtRecord formats a record exactly, without its shard and checkpoint.
func fmtRecord(r tk.ChangeRecord) string {
	ch := make([]string, len(r.Changes))
	for i, c := range r.Changes {
		ch[i] = c.String()
	}
	return fmt.Sprintf("%s %s @%d [%s]", r.Kind, fmtKey(r.Key), r.CommitTime.UnixMilli(), strings.Join(ch, " "))
}

// readAll reads every record of every shard, parents first.
func (e *env) readAll(t tbl) []tk.ChangeRecord {
	e.t.Helper()
	var (
		mu  sync.Mutex
		out []tk.ChangeRecord
	)
	err := t.FollowChangeFeed(e.ctx, nil, tk.FollowOptions{UntilCaughtUp: true, Parallelism: 1}, func(r tk.ChangeRecord) error {
		mu.Lock()
		out = append(out, r)
		mu.Unlock()
		return nil
	})
	e.must("FollowChangeFeed", err)
	return out
}

// testFeedRefused: a backend without a feed says so and refuses; one with
// a feed says so and enables it.
func testFeedRefused(e *env) {
	t := e.create("feedno", schemaI, tk.TableOptions{})
	_, err := t.EnableChangeFeed(e.ctx, 0)
	if tk.CapabilitiesOf(e.b).ChangeFeed {
		e.ok("EnableChangeFeed on a backend that claims a feed", err)
		st, err := t.ChangeFeed(e.ctx)
		if e.ok("ChangeFeed", err) && (!st.Enabled || len(st.Shards) != 1) {
			e.t.Errorf("after EnableChangeFeed the status is %+v, want enabled with one shard", st)
		}
		return
	}
	e.wantErr("EnableChangeFeed on a backend without a feed", err, tk.ErrUnimplemented)
	_, err = t.ChangeFeed(e.ctx)
	e.wantErr("ChangeFeed on a backend without a feed", err, tk.ErrUnimplemented)
	for range t.ReadShard(e.ctx, "x", "") {
		break
	}
	// The table still works.
	e.put(t, intKey(1), col("c", iv(1), 0))
	e.expectRow("row after the refusal", t, intKey(1), ptr(e.want(intKey(1), col("c", iv(1), 0))))
}

// testFeedNotEnabled: on a backend with a feed, reading the feed of a table
// that never had one enabled is an error naming the table (ErrNoChangeFeed,
// an ErrInvalidArgument): ListShards does not answer an empty list,
// FollowChangeFeed neither returns nil at once (UntilCaughtUp) nor waits
// silently for the context's end.
func testFeedNotEnabled(e *env) {
	if !tk.CapabilitiesOf(e.b).ChangeFeed {
		e.t.Skip("the backend has no change feed; S15_ChangeFeed/Refused checks that it refuses one")
		return
	}
	t := e.create("feednone", schemaI, tk.TableOptions{})
	e.put(t, intKey(1), col("c", iv(1), 0))
	shards, err := t.ListShards(e.ctx)
	if e.wantErr("ListShards of a table without a feed", err, tk.ErrNoChangeFeed, t.Name()) && shards != nil {
		e.t.Errorf("ListShards of a table without a feed: %v beside the error, want none", shards)
	}
	e.wantErr("ListShards of a table without a feed", err, tk.ErrInvalidArgument)
	called := 0
	fn := func(tk.ChangeRecord) error { called++; return nil }
	err = t.FollowChangeFeed(e.ctx, nil, tk.FollowOptions{UntilCaughtUp: true}, fn)
	e.wantErr("FollowChangeFeed(UntilCaughtUp) of a table without a feed", err, tk.ErrNoChangeFeed, t.Name())
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	err = t.FollowChangeFeed(ctx, nil, tk.FollowOptions{}, fn)
	if errors.Is(err, context.DeadlineExceeded) {
		e.t.Errorf("FollowChangeFeed of a table without a feed waited for the context's end")
	}
	e.wantErr("FollowChangeFeed of a table without a feed", err, tk.ErrNoChangeFeed, t.Name())
	if called != 0 {
		e.t.Errorf("FollowChangeFeed of a table without a feed called fn %d times", called)
	}
}

// testFeedKinds: put, update with each change kind, increment, delete and
// batch writes each make one record with the changes as applied.
func testFeedKinds(e *env) {
	t, ok := e.feedTable("feedkinds")
	if !ok {
		return
	}
	now := e.now()
	e.put(t, intKey(1), col("a", iv(1), 0), col("b", sv("x"), now-5))
	e.update(t, intKey(1), tk.PutAt("a", iv(2), now-1), tk.DeleteVersion("a", now), tk.DeleteColumn("b"), tk.Put("c", sv("y")))
	res, err := t.UpdateRow(e.ctx, intKey(1), []tk.Change{tk.Increment("n", 5)})
	e.must("UpdateRow increment", err)
	if len(res.Increments) != 1 {
		e.t.Fatalf("increment result %+v", res)
	}
	inc := res.Increments[0]
	e.must("DeleteRow", t.DeleteRow(e.ctx, intKey(1)))
	bres, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{
		tk.BatchPut(t.Name(), intKey(2), []tk.Column{col("a", iv(20), 0)}),
		tk.BatchUpdate(t.Name(), intKey(3), []tk.Change{tk.Put("a", iv(30))}),
		tk.BatchDelete(t.Name(), intKey(4)),
	})
	e.must("BatchWriteRow", err)
	for i, r := range bres {
		e.must(fmt.Sprintf("BatchWriteRow write %d", i), r.Err)
	}
	// A failed condition writes nothing and records nothing.
	err = t.PutRow(e.ctx, intKey(2), []tk.Column{col("a", iv(0), 0)}, tk.ExpectNotExist)
	e.wantErr("PutRow ExpectNotExist of an existing row", err, tk.ErrConditionFailed)

	k1 := fmtKey(intKey(1))
	want := []string{
		fmt.Sprintf("Put %s @%d [PutAt(\"a\", Integer(1), %d) PutAt(\"b\", String(\"x\"), %d)]", k1, now, now, now-5),
		fmt.Sprintf("Update %s @%d [PutAt(\"a\", Integer(2), %d) DeleteVersion(\"a\", %d) DeleteColumn(\"b\") PutAt(\"c\", String(\"y\"), %d)]", k1, now, now-1, now, now),
		fmt.Sprintf("Update %s @%d [PutAt(\"n\", Integer(5), %d)]", k1, now, inc.Version),
		fmt.Sprintf("Delete %s @%d []", k1, now),
	}
	batch := map[string]bool{
		fmt.Sprintf("Put %s @%d [PutAt(\"a\", Integer(20), %d)]", fmtKey(intKey(2)), now, now):    true,
		fmt.Sprintf("Update %s @%d [PutAt(\"a\", Integer(30), %d)]", fmtKey(intKey(3)), now, now): true,
		fmt.Sprintf("Delete %s @%d []", fmtKey(intKey(4)), now):                                   true,
	}
	recs := e.readAll(t)
	var got []string
	gotBatch := map[string]bool{}
	for _, r := range recs {
		if r.Key.Equal(intKey(1)) {
			got = append(got, fmtRecord(r))
		} else {
			gotBatch[fmtRecord(r)] = true
		}
	}
	e.diff("records of row 1 (put, update, increment, delete)", want, got)
	e.diff("records of the batch (one per row, any order)", batch, gotBatch)
	if len(recs) != 7 {
		e.t.Errorf("%d records, want 7 (a failed condition records nothing)", len(recs))
	}
	// A record applied to another table twice leaves it as the source.
	dst := e.create("feedkindsdst", schemaI, tk.TableOptions{MaxVersions: 3})
	for range 2 {
		for _, r := range recs {
			_, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{r.BatchWrite(dst.Name())})
			e.must("apply "+fmtRecord(r), err)
		}
	}
	e.diff("destination after applying the feed twice", e.scan("source", t), e.scan("destination", dst))
}

// testFeedOrder: 16 writers increment 4 rows concurrently; each row's
// records come in commit order (its increments' results ascend by one).
func testFeedOrder(e *env) {
	t, ok := e.feedTable("feedorder")
	if !ok {
		return
	}
	const writers, each, rows = 16, 10, 4
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := t.UpdateRow(e.ctx, intKey(int64((w+i)%rows)), []tk.Change{tk.Increment("n", 1)}); err != nil {
					e.t.Errorf("UpdateRow: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	last := map[string]int64{}
	n := 0
	for _, r := range e.readAll(t) {
		n++
		k := fmtKey(r.Key)
		if len(r.Changes) != 1 || r.Changes[0].Kind != tk.ChangePut {
			e.t.Errorf("record %s: want one put", fmtRecord(r))
			continue
		}
		v, _ := r.Changes[0].Value.Int()
		if v != last[k]+1 {
			e.t.Errorf("row %s: record with sum %d after %d: out of commit order, or lost", k, v, last[k])
		}
		last[k] = v
	}
	if n != writers*each {
		e.t.Errorf("%d records, want %d", n, writers*each)
	}
}

// testFeedResume: reading from the checkpoint of any record returns every
// record after it.
func testFeedResume(e *env) {
	t, ok := e.feedTable("feedresume")
	if !ok {
		return
	}
	const n = 25
	for i := range n {
		e.put(t, intKey(int64(i)), col("c", iv(int64(i)), 0))
	}
	shards, err := t.ListShards(e.ctx)
	e.must("ListShards", err)
	if len(shards) != 1 {
		e.t.Fatalf("%d shards, want 1", len(shards))
	}
	var all []tk.ChangeRecord
	for r, err := range t.ReadShard(e.ctx, shards[0].ID, "") {
		e.must("ReadShard", err)
		all = append(all, r)
	}
	if len(all) != n {
		e.t.Fatalf("%d records, want %d", len(all), n)
	}
	for i, from := range all {
		seen := map[string]bool{}
		for r, err := range t.ReadShard(e.ctx, shards[0].ID, tk.Checkpoint(string(from.Checkpoint))) {
			if !e.ok("ReadShard from a checkpoint", err) {
				return
			}
			seen[fmtRecord(r)] = true
		}
		for _, r := range all[i+1:] {
			if !seen[fmtRecord(r)] {
				e.t.Errorf("resuming after record %d missed %s", i, fmtRecord(r))
			}
		}
	}
	_, err = func() (int, error) {
		for _, err := range t.ReadShard(e.ctx, shards[0].ID, "not a checkpoint") {
			return 0, err
		}
		return 0, nil
	}()
	e.wantErr("ReadShard from a malformed checkpoint", err, tk.ErrInvalidArgument)
}

// testFeedRetention: the retention is reported (24 h by default, at least
// 24 h), can be set in whole hours (or, on a backend whose retention is
// fixed at the default, as DynamoDB Streams' is, refused with
// ErrInvalidArgument, changing nothing), is refused outside 24-168 h, and
// records stay readable within it.
func testFeedRetention(e *env) {
	t, ok := e.feedTable("feedret")
	if !ok {
		return
	}
	st, err := t.ChangeFeed(e.ctx)
	e.must("ChangeFeed", err)
	if st.Retention != tk.DefaultFeedRetention {
		e.t.Errorf("default retention %v, want %v", st.Retention, tk.DefaultFeedRetention)
	}
	retention := 48 * time.Hour
	st, err = t.EnableChangeFeed(e.ctx, retention)
	if errors.Is(err, tk.ErrInvalidArgument) {
		e.t.Logf("the backend's feed retention is fixed: %v", err)
		retention = tk.DefaultFeedRetention
		st, err = t.ChangeFeed(e.ctx)
		e.must("ChangeFeed", err)
	}
	if e.ok("EnableChangeFeed 48h", err) && (st.Retention != retention || len(st.Shards) != 1) {
		e.t.Errorf("after setting 48h: %+v, want retention %v and the same one shard", st, retention)
	}
	for _, bad := range []time.Duration{time.Hour, 169 * time.Hour, 24*time.Hour + time.Minute} {
		_, err := t.EnableChangeFeed(e.ctx, bad)
		e.wantErr(fmt.Sprintf("EnableChangeFeed %v", bad), err, tk.ErrInvalidArgument)
	}
	e.put(t, intKey(1), col("c", iv(1), 0))
	e.clock.Advance(retention - time.Hour)
	e.put(t, intKey(2), col("c", iv(2), 0))
	if got := len(e.readAll(t)); got != 2 {
		e.t.Errorf("%d records %v later under a %v retention, want 2", got, retention-time.Hour, retention)
	}
}

// testFeedDisable: disabling ends the shard (no more records; retained
// ones still readable); enabling again opens a child shard.
func testFeedDisable(e *env) {
	t, ok := e.feedTable("feedoff")
	if !ok {
		return
	}
	e.put(t, intKey(1), col("c", iv(1), 0))
	e.must("DisableChangeFeed", t.DisableChangeFeed(e.ctx))
	e.put(t, intKey(2), col("c", iv(2), 0))
	st, err := t.ChangeFeed(e.ctx)
	e.must("ChangeFeed", err)
	if st.Enabled || len(st.Shards) != 1 || !st.Shards[0].Ended {
		e.t.Errorf("after DisableChangeFeed: %+v, want disabled with one ended shard", st)
	}
	recs := e.readAll(t)
	if len(recs) != 1 || !recs[0].Key.Equal(intKey(1)) {
		e.t.Errorf("records after disabling: %d, want only row 1's put", len(recs))
	}
	_, err = t.EnableChangeFeed(e.ctx, 0)
	e.must("EnableChangeFeed again", err)
	e.put(t, intKey(3), col("c", iv(3), 0))
	st, err = t.ChangeFeed(e.ctx)
	e.must("ChangeFeed", err)
	if len(st.Shards) != 2 || len(st.Shards[1].Parents) != 1 || st.Shards[1].Parents[0] != st.Shards[0].ID {
		e.t.Errorf("after enabling again: %+v, want a second shard whose parent is the first", st)
	}
	var keys []string
	for _, r := range e.readAll(t) {
		keys = append(keys, fmtKey(r.Key))
	}
	e.diff("records of both shards, parent first", []string{fmtKey(intKey(1)), fmtKey(intKey(3))}, keys)
}

// testFeedConcurrentReader: a reader that follows the feed page by page
// from its checkpoints while 8 writers write misses no record, even of
// writes still committing when it read past them.
func testFeedConcurrentReader(e *env) {
	t, ok := e.feedTable("feedlive")
	if !ok {
		return
	}
	shards, err := t.ListShards(e.ctx)
	e.must("ListShards", err)
	const writers, each = 8, 25
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := t.PutRow(e.ctx, intKey(int64(w*1000+i)), []tk.Column{col("c", iv(1), 0)}); err != nil {
					e.t.Errorf("PutRow: %v", err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	seen := map[string]int{}
	var from tk.Checkpoint
	read := func() {
		for r, err := range t.ReadShard(e.ctx, shards[0].ID, from) {
			if !e.ok("ReadShard during writes", err) {
				return
			}
			seen[fmtKey(r.Key)]++
			from = r.Checkpoint
		}
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		read() // after done, one last read catches up
	}
	for w := range writers {
		for i := range each {
			if k := fmtKey(intKey(int64(w*1000 + i))); seen[k] == 0 {
				e.t.Errorf("the reader never saw the put of %s", k)
			}
		}
	}
}

// testFeedAtomic: an atomic write (SPEC §13) makes one record per row, and
// a failed one none.
func testFeedAtomic(e *env) {
	if !tk.CapabilitiesOf(e.b).AtomicWrite {
		e.t.Skip("the backend has no atomic writes (Capabilities.AtomicWrite is false)")
	}
	if !tk.CapabilitiesOf(e.b).ChangeFeed {
		e.t.Skip("the backend has no change feed (Capabilities.ChangeFeed is false)")
	}
	now := e.now()
	schema := tk.KeySchema{{Name: "pk", Type: tk.TypeInteger}, {Name: "sk", Type: tk.TypeInteger}}
	t := e.create("feedatomic", schema, tk.TableOptions{})
	if _, err := t.EnableChangeFeed(e.ctx, 0); err != nil {
		e.t.Fatalf("EnableChangeFeed: %v", err)
	}
	k := func(sk int64) tk.PrimaryKey { return tk.Key("pk", iv(1)).Add("sk", iv(sk)) }
	_, err := t.AtomicWrite(e.ctx, []tk.BatchWrite{
		tk.BatchPut(t.Name(), k(1), []tk.Column{col("a", iv(1), 0)}),
		tk.BatchUpdate(t.Name(), k(2), []tk.Change{tk.Increment("n", 3)}),
		tk.BatchDelete(t.Name(), k(3)),
	})
	e.must("AtomicWrite", err)
	_, err = t.AtomicWrite(e.ctx, []tk.BatchWrite{
		tk.BatchPut(t.Name(), k(4), []tk.Column{col("a", iv(4), 0)}),
		tk.BatchPut(t.Name(), k(1), []tk.Column{col("a", iv(9), 0)}, tk.ExpectNotExist),
	})
	e.wantErr("AtomicWrite whose second write's condition fails", err, tk.ErrConditionFailed)
	got := map[string]bool{}
	for _, r := range e.readAll(t) {
		got[fmtRecord(r)] = true
	}
	want := map[string]bool{
		fmt.Sprintf("Put %s @%d [PutAt(\"a\", Integer(1), %d)]", fmtKey(k(1)), now, now):    true,
		fmt.Sprintf("Update %s @%d [PutAt(\"n\", Integer(3), %d)]", fmtKey(k(2)), now, now): true,
		fmt.Sprintf("Delete %s @%d []", fmtKey(k(3)), now):                                  true,
	}
	e.diff("records of an atomic write of 3 rows, then of a failed one", want, got)
}
