package tablekit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// pausingBackend is a real engine whose first conditional write of table
// (a guarded row write, after its entries are put) waits until release is
// closed, so that a test can run other writes in between.
type pausingBackend struct {
	tablekit.Backend
	table   string
	paused  chan struct{} // closed when the write waits
	release chan struct{}
	armed   chan struct{} // holds one token: the write to pause
}

func (p *pausingBackend) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if req.Meta.Name == p.table && req.Condition.Column != nil {
		select {
		case <-p.armed:
			close(p.paused)
			<-p.release
		default:
		}
	}
	return p.Backend.Write(ctx, req)
}

// TestIndexGuardABA pins the race behind the once-failing
// TestIndexConsistencyTwoColumns: a writer of b reads the row (a = p),
// puts its entries (p, r) and is paused before its guarded row write;
// meanwhile a is put to x, then to p again ("aba"), or x is put at a
// version older than p's ("older"). The guard (each index column's newest
// value is still what was read) passes, yet x is a visible value of a
// (under p) and (x, r) is a combination nobody planned: the writer of x
// read b = q. No entry may be missing once the writes return.
func TestIndexGuardABA(t *testing.T) {
	for name, meanwhile := range map[string][]func(start int64) tablekit.Change{
		"aba": {
			func(int64) tablekit.Change { return tablekit.Put("a", tablekit.String("x")) },
			func(int64) tablekit.Change { return tablekit.Put("a", tablekit.String("p")) },
		},
		"older": {
			func(start int64) tablekit.Change { return tablekit.PutAt("a", tablekit.String("x"), start-1000) },
		},
	} {
		t.Run(name, func(t *testing.T) { testIndexGuardABA(t, meanwhile) })
	}
}

func testIndexGuardABA(t *testing.T, meanwhile []func(start int64) tablekit.Change) {
	ctx := context.Background()
	pb := &pausingBackend{Backend: localengine.New(), table: "t", paused: make(chan struct{}), release: make(chan struct{}), armed: make(chan struct{}, 1)}
	db := twoColumnIndexClient(t, pb)
	tbl := db.Table("t")
	key := tablekit.Key("id", tablekit.Integer(1))
	start := time.Now().UnixMilli()
	if err := tbl.PutRow(ctx, key, []tablekit.Column{{Name: "a", Value: tablekit.String("p")}, {Name: "b", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	// Versions are the client's clock in ms: keep each write in its own.
	tick := func() { time.Sleep(3 * time.Millisecond) }
	tick()
	pb.armed <- struct{}{}
	done := make(chan error, 1)
	go func() {
		_, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("b", tablekit.Integer(2))})
		done <- err
	}()
	<-pb.paused
	for _, ch := range meanwhile {
		tick()
		if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{ch(start)}); err != nil {
			t.Fatal(err)
		}
	}
	tick()
	close(pb.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r, _, err := tbl.GetRow(ctx, key, tablekit.MaxVersions(3))
	if err != nil {
		t.Fatal(err)
	}
	var as []string
	for _, c := range r.Versions("a") {
		s, _ := c.Value.Str()
		as = append(as, s)
	}
	if len(as) < 2 || as[0] != "p" || !slices.Contains(as, "x") {
		t.Fatalf("a's versions %v; the test needs x visible under p", as)
	}
	if bv, _ := r.Get("b"); bv != tablekit.Integer(2) {
		t.Fatalf("b is %v; the paused write should have passed its guard", bv)
	}
	rep, err := db.Reindex(ctx, "t", "by_ab", true)
	if err != nil || rep.Missing != 0 {
		t.Fatalf("Reindex verify: %+v, %v; want no missing entry (the (x, 2) combination)", rep, err)
	}
	// Deleting p's versions shows the row at (x, 2): the index finds it.
	for _, c := range r.Versions("a") {
		if s, _ := c.Value.Str(); s == "p" {
			if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.DeleteVersion("a", c.Version)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	lo := tablekit.Key("a", tablekit.String("x")).Add("b", tablekit.Integer(2)).Add("id", tablekit.InfMin)
	hi := tablekit.Key("a", tablekit.String("x")).Add("b", tablekit.Integer(2)).Add("id", tablekit.InfMax)
	n := 0
	for _, err := range tbl.Index("by_ab").Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("index read of (x, 2) after deleting p: %d rows; want the row", n)
	}
}
