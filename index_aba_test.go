package tablekit_test

import (
	"context"
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
// meanwhile a is put to x, then to p again. The guard (each index column's
// newest value is still what was read) passes, yet x is now a visible
// value of a (an older version) and (x, r) is a combination nobody
// planned: the writer of x read b = q. No entry may be missing.
func TestIndexGuardABA(t *testing.T) {
	ctx := context.Background()
	pb := &pausingBackend{Backend: localengine.New(), table: "t", paused: make(chan struct{}), release: make(chan struct{}), armed: make(chan struct{}, 1)}
	db := tablekit.NewClient(pb)
	defer db.Close()
	spec := tablekit.IndexSpec{Name: "by_ab", Columns: []tablekit.KeyColumn{{Name: "a", Type: tablekit.TypeString}, {Name: "b", Type: tablekit.TypeInteger}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}},
		Options: tablekit.TableOptions{MaxVersions: 3}, Indexes: []tablekit.IndexSpec{spec}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	key := tablekit.Key("id", tablekit.Integer(1))
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
	for _, v := range []string{"x", "p"} {
		tick()
		if _, err := tbl.UpdateRow(ctx, key, []tablekit.Change{tablekit.Put("a", tablekit.String(v))}); err != nil {
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
	if len(as) != 3 || as[1] != "x" {
		t.Fatalf("a's versions %v; the test needs x visible under p", as)
	}
	rep, err := db.Reindex(ctx, "t", "by_ab", true)
	if err != nil || rep.Missing != 0 {
		t.Fatalf("Reindex verify: %+v, %v; want no missing entry (the (x, 2) combination)", rep, err)
	}
}
