package awsdynamodb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/internal/testkit/mototest"
)

// streamsCounter counts DynamoDB Streams requests per operation.
type streamsCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *streamsCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "DynamoDBStreams_20120810."); ok {
		c.mu.Lock()
		c.n[op]++
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (c *streamsCounter) get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// feedTable opens the adapter on moto with a counter of its Streams
// calls, and creates a table (pk Integer) with its feed on.
func feedTable(t testing.TB) (*streamsCounter, *awsdynamodb.Backend, *tablekit.Table) {
	t.Helper()
	ep := needMoto(t)
	sc := &streamsCounter{n: map[string]int{}}
	cfg := awsConfig(&http.Client{Transport: sc})
	b, err := awsdynamodb.Open(context.Background(), &awsdynamodb.Options{AWS: &cfg, Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(b)
	t.Cleanup(func() { db.Close() })
	name := uniqueName("feedpoll")
	ctx := context.Background()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table(name)
	if _, err := tb.EnableChangeFeed(ctx, 0); err != nil {
		t.Fatal(err)
	}
	return sc, b, tb
}

// follow follows tb's feed from pos for d, polling every poll, and
// returns the keys' pk values in the order seen and the position after.
func follow(t testing.TB, tb *tablekit.Table, pos tablekit.FeedPosition, d, poll time.Duration) ([]int64, tablekit.FeedPosition) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	next := tablekit.FeedPosition{}
	for k, v := range pos {
		next[k] = v
	}
	var got []int64
	var mu sync.Mutex
	err := tb.FollowChangeFeed(ctx, pos, tablekit.FollowOptions{Poll: poll}, func(r tablekit.ChangeRecord) error {
		mu.Lock()
		defer mu.Unlock()
		v, _ := r.Key[0].Value.Int()
		got = append(got, v)
		next[r.Shard] = r.Checkpoint
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("FollowChangeFeed: %v", err)
	}
	return got, next
}

func putRows(t testing.TB, tb *tablekit.Table, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := tb.PutRow(context.Background(), tablekit.Key("pk", tablekit.Integer(int64(i))), []tablekit.Column{{Name: "v", Value: tablekit.Integer(int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFeedPollingWithinLimits: a follower polling a caught-up shard as
// fast as it is let reuses its shard iterator (one GetShardIterator for
// the whole run, not one per poll) and makes at most 5 GetRecords calls a
// second on the shard (DynamoDB Streams' limit), and sees every record
// once; a follower starting again from its position goes on.
func TestFeedPollingWithinLimits(t *testing.T) {
	sc, b, tb := feedTable(t)
	putRows(t, tb, 0, 3)
	const run = 2 * time.Second
	start := time.Now()
	got, pos := follow(t, tb, nil, run, time.Millisecond)
	elapsed := time.Since(start)
	if fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("records %v, want [0 1 2]", got)
	}
	its, recs := sc.get("GetShardIterator"), sc.get("GetRecords")
	t.Logf("%v of following with a 1 ms poll: %d GetShardIterator, %d GetRecords", elapsed.Round(time.Millisecond), its, recs)
	if its != 1 {
		t.Errorf("%d GetShardIterator calls, want 1 (the iterator reused)", its)
	}
	if limit := int(elapsed/(200*time.Millisecond)) + 1; recs > limit {
		t.Errorf("%d GetRecords calls in %v: more than 5 a second (%d)", recs, elapsed, limit)
	}
	if recs < 5 {
		t.Errorf("%d GetRecords calls in %v: the follower did not poll", recs, elapsed)
	}
	putRows(t, tb, 3, 5)
	got, _ = follow(t, tb, pos, time.Second, time.Millisecond)
	if fmt.Sprint(got) != "[3 4]" {
		t.Errorf("following again from the position: records %v, want [3 4]", got)
	}
	if n := awsdynamodb.KeptShardPolls(b); n != 1 {
		t.Errorf("state kept for %d shards, want 1", n)
	}
}

// TestFeedPollingIteratorExpiry: a kept iterator older than the age
// DynamoDB lets one live is not used: the read asks for a new one after
// the checkpoint, and misses no record.
func TestFeedPollingIteratorExpiry(t *testing.T) {
	defer awsdynamodb.SetIterMaxAge(0)()
	sc, _, tb := feedTable(t)
	putRows(t, tb, 0, 2)
	got, pos := follow(t, tb, nil, time.Second, 50*time.Millisecond)
	putRows(t, tb, 2, 4)
	got2, _ := follow(t, tb, pos, time.Second, 50*time.Millisecond)
	if fmt.Sprint(got, got2) != "[0 1] [2 3]" {
		t.Errorf("records %v then %v, want [0 1] then [2 3]", got, got2)
	}
	if its, recs := sc.get("GetShardIterator"), sc.get("GetRecords"); its < recs/maxEmptyPollsInTest {
		t.Errorf("%d GetShardIterator for %d GetRecords: expired iterators were used", its, recs)
	}
}

// maxEmptyPollsInTest is awsdynamodb's maxEmptyPolls.
const maxEmptyPollsInTest = 3

// TestFeedPollingSoak is a measured run, not a test of a bound: set
// TABLEKIT_FEED_SOAK to a duration to follow a caught-up feed on moto for
// that long with the default poll, and log the Streams calls made, the Go
// heap, and moto's resident memory before and after.
func TestFeedPollingSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("TABLEKIT_FEED_SOAK"))
	if err != nil {
		t.Skip("set TABLEKIT_FEED_SOAK=<duration> to run")
	}
	sc, _, tb := feedTable(t)
	putRows(t, tb, 0, 10)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	_, pos := follow(t, tb, nil, time.Second, 0)
	h0, r0 := heap(), motoRSS(t)
	its0, recs0 := sc.get("GetShardIterator"), sc.get("GetRecords")
	got, _ := follow(t, tb, pos, d, 0)
	h1, r1 := heap(), motoRSS(t)
	t.Logf("following a caught-up shard for %v (default poll): %d records, %d GetShardIterator, %d GetRecords; Go heap %d -> %d KB; moto RSS %d -> %d KB",
		d, len(got), sc.get("GetShardIterator")-its0, sc.get("GetRecords")-recs0, h0>>10, h1>>10, r0, r1)
}

// motoRSS returns the resident memory (KB) of the moto server the tests
// share, found by its port in /proc (Linux), or 0.
func motoRSS(t testing.TB) int64 {
	port := needMoto(t)[strings.LastIndex(needMoto(t), ":")+1:]
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		cmd, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || !bytes.HasSuffix(cmd, []byte("\x00127.0.0.1\x00"+port+"\x00")) {
			continue
		}
		st, _ := os.ReadFile("/proc/" + d.Name() + "/status")
		for _, line := range strings.Split(string(st), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return 0
}

// TestFeedOnMotoAsShipped: on moto 5.2.1 with none of the harness's
// patches, whose stream records carry Binary values base64-encoded twice,
// the feed reads every put (before, every record was dropped as "not a
// row of the table" and the feed looked empty).
func TestFeedOnMotoAsShipped(t *testing.T) {
	ctx := context.Background()
	ep := mototest.StartWith(t, &mototest.Options{Without: mototest.Patches})
	cfg := awsConfig(nil)
	b, err := awsdynamodb.Open(ctx, &awsdynamodb.Options{AWS: &cfg, Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	db := tablekit.NewClient(b)
	defer db.Close()
	name := uniqueName("asshipped")
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: name, Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table(name)
	if _, err := tb.EnableChangeFeed(ctx, 0); err != nil {
		t.Fatal(err)
	}
	putRows(t, tb, 0, 3)
	var got []string
	if err := tb.FollowChangeFeed(ctx, nil, tablekit.FollowOptions{UntilCaughtUp: true}, func(r tablekit.ChangeRecord) error {
		got = append(got, fmt.Sprintf("%s %v %v", r.Kind, r.Key, r.Changes))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !strings.HasPrefix(got[0], `Put (pk=Integer(0)) [PutAt("v", Integer(0), `) || !strings.HasPrefix(got[2], "Put (pk=Integer(2))") {
		t.Errorf("records %v, want the puts of pk 0, 1 and 2", got)
	}
}
