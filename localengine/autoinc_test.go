package localengine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/codec"
)

// TestAutoIncrementRowTakenMeanwhile: a write with AutoIncrement is
// assigned a value, then waits for its row's stripe; meanwhile a real-key
// write stores that very row. The assigned write must not overwrite it: it
// is assigned again, above, and both rows are there (for PutRow and for an
// AtomicWrite). The test holds the stripe itself, and stores the real row
// under it as a writer holding it would, so the interleaving is certain.
func TestAutoIncrementRowTakenMeanwhile(t *testing.T) {
	for _, via := range []string{"PutRow", "AtomicWrite"} {
		t.Run(via, func(t *testing.T) {
			ctx := context.Background()
			e := New()
			db := tablekit.NewClient(e)
			defer db.Close()
			schema := tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}
			if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema}); err != nil {
				t.Fatal(err)
			}
			tbl := db.Table("t")
			ph := tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.AutoIncrement)
			key := func(s int64) tablekit.PrimaryKey {
				return tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.Integer(s))
			}
			col := func(v string) []tablekit.Column { return []tablekit.Column{{Name: "v", Value: tablekit.String(v)}} }
			var first tablekit.PrimaryKey
			if err := tbl.PutRow(ctx, ph, col("first"), tablekit.ReturnKey(&first)); err != nil {
				t.Fatal(err)
			}
			if !first.Equal(key(1)) {
				t.Fatalf("the first put was assigned %v, want %v", first, key(1))
			}
			// The write is assigned want (the AtomicWrite's real key 100
			// raises the counter first), then waits for the stripe held here.
			want := int64(2)
			if via == "AtomicWrite" {
				want = 101
			}
			tb := e.tables["t"]
			k := codec.EncodeKey(key(want))
			st := &tb.stripes[stripeOf(k)]
			st.Lock()
			done := make(chan error, 1)
			var got tablekit.PrimaryKey
			go func() {
				if via == "PutRow" {
					done <- tbl.PutRow(ctx, ph, col("auto"), tablekit.ReturnKey(&got))
					return
				}
				_, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{
					tablekit.BatchPut("t", key(100), col("real in the atomic write")),
					tablekit.BatchPut("t", ph, col("auto"), tablekit.ReturnKey(&got)),
				})
				done <- err
			}()
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				tb.ai.mu.Lock()
				n := tb.ai.last[codec.EncodeKeyString(key(0)[:1])]
				tb.ai.mu.Unlock()
				if n == want {
					break
				}
				if n > want || time.Now().After(deadline) {
					st.Unlock()
					t.Fatalf("the counter is %d, want %d", n, want)
				}
			}
			tb.mu.RLock()
			meta := tb.meta
			tb.mu.RUnlock()
			rw := &tablekit.WriteRequest{Meta: &meta, Kind: tablekit.WritePut, Key: key(want),
				Columns: []tablekit.Column{{Name: "v", Value: tablekit.String("real"), Version: 1}}, Now: 1}
			if _, taken, err := tb.writeRow(rw, k, false); err != nil || taken {
				st.Unlock()
				t.Fatal(taken, err)
			}
			st.Unlock()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if !got.Equal(key(want + 1)) {
				t.Errorf("the write was assigned %v, want %v (the row of %d was taken)", got, key(want+1), want)
			}
			for s, v := range map[int64]string{1: "first", want: "real", want + 1: "auto"} {
				row, found, err := tbl.GetRow(ctx, key(s))
				if err != nil || !found {
					t.Fatalf("row %d: found %v, %v", s, found, err)
				}
				if got, _ := row.Columns[0].Value.Str(); got != v {
					t.Errorf("row %d holds %q, want %q", s, got, v)
				}
			}
		})
	}
}

// TestAutoIncrementStaleRefusedBeforeAssigning: a write with AutoIncrement
// built from a table since deleted and created again is refused as stale
// before a value of the new table is assigned, so the Client's retry gets
// the new table's first value (for PutRow and for an AtomicWrite).
func TestAutoIncrementStaleRefusedBeforeAssigning(t *testing.T) {
	ctx := context.Background()
	e := New()
	db, other := tablekit.NewClient(e), tablekit.NewClient(e)
	defer db.Close()
	defer other.Close()
	meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}}
	ph := tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.AutoIncrement)
	cols := []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}
	for _, via := range []string{"PutRow", "AtomicWrite"} {
		if err := db.CreateTable(ctx, meta); err != nil {
			t.Fatal(err)
		}
		if err := db.Table("t").PutRow(ctx, ph, cols); err != nil { // db caches the table's metadata
			t.Fatal(err)
		}
		if err := other.DeleteTable(ctx, "t"); err != nil {
			t.Fatal(err)
		}
		if err := other.CreateTable(ctx, meta); err != nil {
			t.Fatal(err)
		}
		var got tablekit.PrimaryKey
		var err error
		if via == "PutRow" {
			err = db.Table("t").PutRow(ctx, ph, cols, tablekit.ReturnKey(&got))
		} else {
			_, err = db.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("t", ph, cols, tablekit.ReturnKey(&got))})
		}
		if err != nil {
			t.Fatalf("%s: %v", via, err)
		}
		if s, _ := got[1].Value.Int(); s != 1 {
			t.Errorf("%s through a stale cached table was assigned %d in the new table, want 1", via, s)
		}
		if err := other.DeleteTable(ctx, "t"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAutoIncrementConcurrentRealKeys: writers with AutoIncrement race
// writers of real keys that aim at the next value to be assigned. No
// value is assigned twice, each writer's values increase, and no assigned
// write overwrites a row a real-key write stored: every real-key row ends
// up with its real value (a real-key write after an assigned one may
// overwrite it; the other way round is the bug), every other assigned
// row with its writer's.
func TestAutoIncrementConcurrentRealKeys(t *testing.T) {
	ctx := context.Background()
	e := New()
	db := tablekit.NewClient(e)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	key := func(s int64) tablekit.PrimaryKey {
		return tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.Integer(s))
	}
	ph := tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.AutoIncrement)
	const autoWriters, realWriters, each = 4, 2, 150
	var (
		mu       sync.Mutex
		maxSeen  int64
		assigned = map[int64]string{}
		reals    = map[int64]string{}
		wg       sync.WaitGroup
	)
	for w := range autoWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(0)
			for i := range each {
				v := fmt.Sprintf("auto %d.%d", w, i)
				var k tablekit.PrimaryKey
				if err := tbl.PutRow(ctx, ph, []tablekit.Column{{Name: "v", Value: tablekit.String(v)}}, tablekit.ReturnKey(&k)); err != nil {
					t.Error(err)
					return
				}
				s, _ := k[1].Value.Int()
				if s <= last {
					t.Errorf("writer %d was assigned %d after %d", w, s, last)
				}
				last = s
				mu.Lock()
				if prev, dup := assigned[s]; dup {
					t.Errorf("%d was assigned to %q and %q", s, prev, v)
				}
				assigned[s] = v
				maxSeen = max(maxSeen, s)
				mu.Unlock()
			}
		}()
	}
	for w := range realWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				mu.Lock()
				s := maxSeen + 1 + int64(i%2) // the next value, or the one after
				mu.Unlock()
				v := fmt.Sprintf("real %d.%d", w, i)
				if err := tbl.PutRow(ctx, key(s), []tablekit.Column{{Name: "v", Value: tablekit.String(v)}}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				reals[s] = v
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rows := map[int64]string{}
	for r, err := range tbl.Rows(ctx, key(0), tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		s, _ := r.Key[1].Value.Int()
		rows[s], _ = r.Columns[0].Value.Str()
	}
	for s, v := range assigned {
		if _, ok := reals[s]; !ok && rows[s] != v {
			t.Errorf("row %d holds %q, want %q as assigned", s, rows[s], v)
		}
	}
	for s := range reals {
		if got := rows[s]; len(got) < 5 || got[:5] != "real " {
			t.Errorf("row %d, put with a real key, holds %q: an assigned write overwrote it", s, got)
		}
	}
}

// TestAutoIncrementIndexedTaken: in WriteIndexed, a row written with a
// real key equal to the value just assigned (after the entries were stored
// under it, before the row) is kept and indexed; the put takes the next
// value and stores its entries again, and those of the first value are
// extra entries: no read returns them and Reindex removes them.
func TestAutoIncrementIndexedTaken(t *testing.T) {
	ctx := context.Background()
	eng := New()
	db := tablekit.NewClient(eng)
	defer db.Close()
	schema := tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}
	byV := tablekit.IndexSpec{Name: "by_v", Columns: []tablekit.KeyColumn{{Name: "v", Type: tablekit.TypeString}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema, Indexes: []tablekit.IndexSpec{byV}}); err != nil {
		t.Fatal(err)
	}
	tab := db.Table("t")
	var raced tablekit.PrimaryKey
	SetAfterAssign(func(k tablekit.PrimaryKey) {
		if raced != nil {
			return
		}
		raced = k
		if err := tab.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.String("real")}}); err != nil {
			t.Error(err)
		}
	})
	var got tablekit.PrimaryKey
	err := tab.PutRow(ctx, tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.AutoIncrement), []tablekit.Column{{Name: "v", Value: tablekit.String("assigned")}}, tablekit.ReturnKey(&got))
	SetAfterAssign(nil)
	if err != nil {
		t.Fatal(err)
	}
	if raced == nil || got.Equal(raced) {
		t.Fatalf("assigned %v, the real-key write took %v: want another key", got, raced)
	}
	var rows []string
	lo := tablekit.Key("v", tablekit.InfMin).Add("p", tablekit.InfMin).Add("s", tablekit.InfMin)
	hi := tablekit.Key("v", tablekit.InfMax).Add("p", tablekit.InfMax).Add("s", tablekit.InfMax)
	for r, err := range tab.Index("by_v").Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r.Key.String())
	}
	want := []string{
		tablekit.Key("v", tablekit.String("assigned")).Add("p", tablekit.String("a")).Add("s", got[1].Value).String(),
		tablekit.Key("v", tablekit.String("real")).Add("p", tablekit.String("a")).Add("s", raced[1].Value).String(),
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("by_v holds %v, want %v", rows, want)
	}
	rdb := tablekit.NewClient(eng, tablekit.WithIndexGrace(time.Nanosecond))
	rep, err := rdb.Reindex(ctx, "t", "by_v", false)
	if err != nil || rep.Missing != 0 || rep.Extra != 1 || rep.Removed != 1 {
		t.Errorf("Reindex: %+v, %v; want none missing, the first value's entry extra and removed", rep, err)
	}
}
