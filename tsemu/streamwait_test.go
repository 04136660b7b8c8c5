package tsemu

import (
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

// newEnvWait is newEnv with the given Options.StreamWait.
func newEnvWait(t *testing.T, wait time.Duration) *env {
	t.Helper()
	clock := tablekit.NewManualClock(epoch)
	srv, err := NewServer(mem(Options{Clock: clock, StreamWait: wait}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, clock: clock, c: sdkClient(srv, srv.AccessKeySecret())}
}

// caughtUp creates stream table "s" and returns an iterator at its end
// (its start).
func (e *env) caughtUp() *tablestore.ShardIterator {
	e.t.Helper()
	if err := e.createStreamTable("s", 24); err != nil {
		e.t.Fatal(err)
	}
	stream, shards := e.streamShards("s")
	return e.iterator(stream, shards[0].SelfShard) // a new stream has no record
}

// putLater puts row pk1=a into "s" after d, sending PutRow's error.
func (e *env) putLater(d time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		time.Sleep(d)
		ch := &tablestore.PutRowChange{TableName: "s", PrimaryKey: pk("pk1", "a")}
		ch.AddColumn("x", int64(1))
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		_, err := e.c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		done <- err
	}()
	return done
}

// TestStreamRecordWaits: over a FeedWaiter Backend, a GetStreamRecord of a
// caught-up shard answers with the record committed while it waited.
func TestStreamRecordWaits(t *testing.T) {
	e := newEnvWait(t, 20*time.Second) // below the SDK's timeout
	it := e.caughtUp()
	put := e.putLater(50 * time.Millisecond)
	resp, err := e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: it})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	if len(resp.Records) != 1 || resp.Records[0].Type != tablestore.AT_Put || resp.NextShardIterator == nil {
		t.Fatalf("GetStreamRecord answered %d records (want the put made during its wait), next %v", len(resp.Records), resp.NextShardIterator)
	}
}

// TestStreamRecordNoWait: with StreamWait < 0 a caught-up GetStreamRecord
// answers at once, with no record, as the service does.
func TestStreamRecordNoWait(t *testing.T) {
	e := newEnvWait(t, -1)
	start := time.Now()
	it := e.caughtUp()
	put := e.putLater(2 * time.Second)
	resp, err := e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: it})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took >= 2*time.Second {
		t.Skip("the machine is too slow to tell an immediate answer (the put was due)") // never under the usual load
	}
	if len(resp.Records) != 0 || resp.NextShardIterator == nil {
		t.Fatalf("GetStreamRecord answered %d records, next %v: want none and a next iterator", len(resp.Records), resp.NextShardIterator)
	}
	if err := <-put; err != nil {
		t.Fatal(err)
	}
}

// TestStreamWaitEndsAtClose: Close does not wait for a waiting
// GetStreamRecord's StreamWait.
func TestStreamWaitEndsAtClose(t *testing.T) {
	e := newEnvWait(t, time.Hour)
	it := e.caughtUp()
	done := make(chan error, 1)
	go func() {
		_, err := e.c.GetStreamRecord(&tablestore.GetStreamRecordRequest{ShardIterator: it})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the call is waiting (or about to)
	closed := make(chan struct{})
	go func() { e.srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waits for a GetStreamRecord after 20 s (StreamWait 1 h)")
	}
	<-done // answered (empty) or cut off: either way it returned
}
