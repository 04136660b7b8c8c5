package tablekit_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// Indexes of tables with an auto-increment key column (SPEC §14, §16):
// kept on a backend with IndexedWrite, refused elsewhere.

var (
	aiByV   = tablekit.IndexSpec{Name: "by_v", Columns: []tablekit.KeyColumn{{Name: "v", Type: tablekit.TypeString}}}
	aiBySeq = tablekit.IndexSpec{Name: "by_seq", Columns: []tablekit.KeyColumn{{Name: "seq"}}}
)

// aiRow is a row of an aiSchema table as the test knows it.
type aiRow struct {
	conv string
	seq  int64
	v    string // "": none, in no by_v entry
}

func (r aiRow) key() tablekit.PrimaryKey {
	return tablekit.Key("conv", tablekit.String(r.conv)).Add("seq", tablekit.Integer(r.seq)).Add("part", tablekit.Integer(1))
}

// aiIndexWant is what by_v and by_seq must return for rows, in index order.
func aiIndexWant(rows []aiRow, index string) []string {
	var out []aiRow
	for _, r := range rows {
		if index == "by_seq" || r.v != "" {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b aiRow) int {
		if index == "by_seq" {
			return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.conv, b.conv))
		}
		return cmp.Or(cmp.Compare(a.v, b.v), cmp.Compare(a.conv, b.conv), cmp.Compare(a.seq, b.seq))
	})
	s := make([]string, len(out))
	for i, r := range out {
		if index == "by_seq" {
			s[i] = fmt.Sprintf("%d/%s/1", r.seq, r.conv)
		} else {
			s[i] = fmt.Sprintf("%s/%s/%d/1", r.v, r.conv, r.seq)
		}
	}
	return s
}

// aiIndexRows reads a whole index of an aiSchema table as key strings.
func aiIndexRows(t *testing.T, tb *tablekit.Table, index string) []string {
	t.Helper()
	names := []string{"v", "conv", "seq", "part"}
	if index == "by_seq" {
		names = []string{"seq", "conv", "part"}
	}
	var lo, hi tablekit.PrimaryKey
	for _, n := range names {
		lo, hi = lo.Add(n, tablekit.InfMin), hi.Add(n, tablekit.InfMax)
	}
	var out []string
	for r, err := range tb.Index(index).Rows(context.Background(), lo, hi) {
		if err != nil {
			t.Fatalf("%s: %v", index, err)
		}
		var parts []string
		for _, p := range r.Key {
			parts = append(parts, p.Value.String())
		}
		out = append(out, strings.Join(parts, "/"))
	}
	return out
}

func checkAIIndexes(t *testing.T, tb *tablekit.Table, rows []aiRow, indexes ...string) {
	t.Helper()
	for _, ix := range indexes {
		if got, want := aiIndexRows(t, tb, ix), aiIndexWant(rows, ix); !slices.Equal(got, want) {
			t.Errorf("%s holds\n%v\nwant\n%v", ix, got, want)
		}
	}
}

// TestIndexAutoIncrementBackfill: AddIndex on a populated auto-increment
// table fills the index from the rows' stored keys (an index on an
// attribute column, and one on the auto-increment column itself); rows
// put with AutoIncrement afterwards are indexed under their assigned keys;
// Reindex finds the indexes exact and removes the entry an update left.
func TestIndexAutoIncrementBackfill(t *testing.T) {
	ctx := context.Background()
	eng := localengine.New()
	db := tablekit.NewClient(eng, tablekit.WithMetaCacheTTL(50*time.Millisecond))
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "msgs", Key: aiSchema}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table("msgs")
	var rows []aiRow
	put := func(conv string, v string) {
		t.Helper()
		var cols []tablekit.Column
		if v != "" {
			cols = append(cols, tablekit.Column{Name: "v", Value: tablekit.String(v)})
		}
		ph := tablekit.Key("conv", tablekit.String(conv)).Add("seq", tablekit.AutoIncrement).Add("part", tablekit.Integer(1))
		var k tablekit.PrimaryKey
		if err := tb.PutRow(ctx, ph, cols, tablekit.ReturnKey(&k)); err != nil {
			t.Fatal(err)
		}
		seq, ok := k[1].Value.Int()
		if !ok || k.AutoIncrementIndex() >= 0 {
			t.Fatalf("PutRow returned key %v", k)
		}
		rows = append(rows, aiRow{conv, seq, v})
	}
	for i := range 12 {
		v := []string{"x", "", "a", "m"}[i%4]
		put([]string{"c1", "c2"}[i%2], v)
	}
	// A migrated row keeps its real key.
	if err := tb.PutRow(ctx, aiRow{"c1", 1000, "a"}.key(), []tablekit.Column{{Name: "v", Value: tablekit.String("a")}}); err != nil {
		t.Fatal(err)
	}
	rows = append(rows, aiRow{"c1", 1000, "a"})

	for _, spec := range []tablekit.IndexSpec{aiByV, aiBySeq} {
		if err := db.AddIndex(ctx, "msgs", spec); err != nil {
			t.Fatalf("AddIndex %s: %v", spec.Name, err)
		}
	}
	checkAIIndexes(t, tb, rows, "by_v", "by_seq")
	for i := range 6 {
		put([]string{"c1", "c3"}[i%2], []string{"b", "z", ""}[i%3])
	}
	if last := rows[len(rows)-2]; last.conv != "c1" || last.seq <= 1000 {
		t.Errorf("c1's row put after the migrated key 1000 was assigned %d", last.seq)
	}
	checkAIIndexes(t, tb, rows, "by_v", "by_seq")

	// An update moves a row (by its real key), leaving an extra entry that
	// Reindex removes.
	if _, err := tb.UpdateRow(ctx, rows[0].key(), []tablekit.Change{tablekit.Put("v", tablekit.String("zz"))}); err != nil {
		t.Fatal(err)
	}
	rows[0].v = "zz"
	if err := tb.DeleteRow(ctx, rows[2].key()); err != nil {
		t.Fatal(err)
	}
	rows = slices.Delete(rows, 2, 3)
	checkAIIndexes(t, tb, rows, "by_v", "by_seq")
	rdb := tablekit.NewClient(eng, tablekit.WithIndexGrace(time.Nanosecond))
	defer rdb.Close()
	for _, ix := range []string{"by_v", "by_seq"} {
		rep, err := rdb.Reindex(ctx, "msgs", ix, false)
		if err != nil {
			t.Fatalf("Reindex %s: %v", ix, err)
		}
		if rep.Missing != 0 || rep.Removed != rep.Extra || rep.Rows != len(rows) {
			t.Errorf("Reindex %s: %+v; want no entry missing, every extra one removed, %d rows", ix, rep, len(rows))
		}
		if ix == "by_v" && rep.Extra < 2 {
			t.Errorf("Reindex by_v: %+v; the update and the delete left 2 extra entries", rep)
		}
		if rep, err := rdb.Reindex(ctx, "msgs", ix, true); err != nil || !rep.Exact() {
			t.Errorf("Reindex %s verify after the repair: %+v, %v; want exact", ix, rep, err)
		}
	}
	checkAIIndexes(t, tb, rows, "by_v", "by_seq")
}

// skipAutoIW is the local engine whose WriteIndexed answers ErrSkip for a
// write whose key holds AutoIncrement (a wrapper whose inside cannot),
// counting every write that reaches the engine.
type skipAutoIW struct {
	*localengine.Engine
	writes atomic.Int64
}

func (s *skipAutoIW) Write(ctx context.Context, req *tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	s.writes.Add(1)
	return s.Engine.Write(ctx, req)
}

func (s *skipAutoIW) WriteIndexed(ctx context.Context, req *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	if req.Key.AutoIncrementIndex() >= 0 {
		return nil, tablekit.ErrSkip
	}
	s.writes.Add(1)
	return s.Engine.WriteIndexed(ctx, req, entries)
}

func (s *skipAutoIW) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	s.writes.Add(1)
	return s.Engine.AtomicWrite(ctx, reqs)
}

// wantAIRefusal fails unless err is ErrUnimplemented naming the table,
// the auto-increment column seq and each of mention.
func wantAIRefusal(t *testing.T, what string, err error, table string, mention ...string) {
	t.Helper()
	var te *tablekit.Error
	if !errors.Is(err, tablekit.ErrUnimplemented) || !errors.As(err, &te) || te.Table != table || !strings.Contains(err.Error(), `"seq"`) {
		t.Errorf("%s: %v, want ErrUnimplemented naming table %q and column \"seq\"", what, err, table)
		return
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%s: %v, want it to say %q", what, err, m)
		}
	}
}

// TestIndexAutoIncrementSkipped: when WriteIndexed declines a write whose
// key holds AutoIncrement (ErrSkip), the write fails with ErrUnimplemented
// and nothing reaches the store (never the row without its entries), in a
// single write, a batch and an atomic write alike; writes of real keys
// go on as usual.
func TestIndexAutoIncrementSkipped(t *testing.T) {
	ctx := context.Background()
	b := &skipAutoIW{Engine: localengine.New()}
	db := tablekit.NewClient(b)
	defer db.Close()
	if c := db.Capabilities(); !c.IndexedWrite || !c.AutoIncrement {
		t.Fatalf("capabilities %+v: want IndexedWrite and AutoIncrement", c)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "msgs", Key: aiSchema, Indexes: []tablekit.IndexSpec{aiByV, aiBySeq}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table("msgs")
	ph := aiKey(tablekit.AutoIncrement)
	cols := []tablekit.Column{{Name: "v", Value: tablekit.String("x")}}
	before := b.writes.Load()
	wantAIRefusal(t, "PutRow", tb.PutRow(ctx, ph, cols), "msgs", "ErrSkip", "nothing was written")
	_, err := tb.UpdateRow(ctx, ph, []tablekit.Change{tablekit.Put("v", tablekit.String("x"))})
	wantAIRefusal(t, "UpdateRow", err, "msgs", "ErrSkip")
	res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{tablekit.BatchPut("msgs", ph, cols)})
	if err != nil || len(res) != 1 {
		t.Fatalf("BatchWriteRow: %v, %v", res, err)
	}
	wantAIRefusal(t, "BatchWriteRow's put", res[0].Err, "msgs", "ErrSkip")
	_, err = tb.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", ph, cols)})
	var ae *tablekit.AtomicWriteError
	if !errors.As(err, &ae) || ae.Index != 0 {
		t.Errorf("AtomicWrite: %v, want an *AtomicWriteError of write 0", err)
	}
	wantAIRefusal(t, "AtomicWrite", err, "msgs", "atomic write")
	if n := b.writes.Load() - before; n != 0 {
		t.Errorf("%d writes reached the engine from refused writes", n)
	}
	lo := tablekit.Key("conv", tablekit.InfMin).Add("seq", tablekit.InfMin).Add("part", tablekit.InfMin)
	hi := tablekit.Key("conv", tablekit.InfMax).Add("seq", tablekit.InfMax).Add("part", tablekit.InfMax)
	for r, err := range tb.Rows(ctx, lo, hi) {
		t.Errorf("row %v (%v) after refused writes", r.Key, err)
	}
	// A real key goes through WriteIndexed, indexed.
	real := aiRow{"c1", 7, "x"}
	if err := tb.PutRow(ctx, real.key(), cols); err != nil {
		t.Fatal(err)
	}
	checkAIIndexes(t, tb, []aiRow{real}, "by_v", "by_seq")
}

// TestIndexAutoIncrementRefusedWithoutIndexedWrite: a backend with
// auto-increment keys but no IndexedWrite refuses an index on such a
// table (CreateTable, AddIndex) before anything is stored; a Client over
// such a backend, meeting a table indexed by another one, refuses a write
// with AutoIncrement, nothing written.
func TestIndexAutoIncrementRefusedWithoutIndexedWrite(t *testing.T) {
	ctx := context.Background()
	eng := localengine.New()
	spy := &aiSpy{Backend: eng} // AutoIncrement, no IndexWriter
	db := tablekit.NewClient(spy)
	defer db.Close()
	if c := db.Capabilities(); c.IndexedWrite || !c.AutoIncrement {
		t.Fatalf("capabilities %+v: want AutoIncrement without IndexedWrite", c)
	}
	err := db.CreateTable(ctx, tablekit.TableMeta{Name: "ix", Key: aiSchema, Indexes: []tablekit.IndexSpec{aiByV}})
	wantAIRefusal(t, "CreateTable", err, "ix", "IndexedWrite", "auto-increment")
	if names, _ := db.ListTables(ctx); len(names) != 0 {
		t.Fatalf("refused CreateTable left %v", names)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "plain", Key: aiSchema}); err != nil {
		t.Fatal(err)
	}
	wantAIRefusal(t, "AddIndex", db.AddIndex(ctx, "plain", aiByV), "plain", "IndexedWrite")
	if m, err := db.DescribeTable(ctx, "plain"); err != nil || len(m.Indexes) != 0 {
		t.Fatalf("after the refused AddIndex: %+v, %v", m, err)
	}

	// Indexed by a Client with IndexedWrite, written by one without.
	full := tablekit.NewClient(eng)
	defer full.Close()
	if err := full.CreateTable(ctx, tablekit.TableMeta{Name: "both", Key: aiSchema, Indexes: []tablekit.IndexSpec{aiByV}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table("both")
	wantAIRefusal(t, "PutRow through a Client without IndexedWrite", tb.PutRow(ctx, aiKey(tablekit.AutoIncrement), []tablekit.Column{{Name: "v", Value: tablekit.String("x")}}), "both", "IndexedWrite", "nothing was written")
	lo := tablekit.Key("conv", tablekit.InfMin).Add("seq", tablekit.InfMin).Add("part", tablekit.InfMin)
	hi := tablekit.Key("conv", tablekit.InfMax).Add("seq", tablekit.InfMax).Add("part", tablekit.InfMax)
	for r, err := range tb.Rows(ctx, lo, hi) {
		t.Errorf("row %v (%v) after the refused write", r.Key, err)
	}
}

// TestIndexAutoIncrementConcurrent: writers put rows with AutoIncrement
// into two partition keys of an indexed table while another writes real
// keys in the range being assigned (an assigned value a real-key write
// took is assigned again). Every assigned key is distinct; afterwards the
// index returns every row exactly once, under its key and value, and a
// verifying Reindex finds no entry missing.
func TestIndexAutoIncrementConcurrent(t *testing.T) {
	for name, mk := range ixBackends(t) {
		t.Run(name, func(t *testing.T) { testIndexAutoIncrementConcurrent(t, mk()) })
	}
}

func testIndexAutoIncrementConcurrent(t *testing.T, b tablekit.Backend) {
	ctx := context.Background()
	db := tablekit.NewClient(b)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "msgs", Key: aiSchema, Indexes: []tablekit.IndexSpec{aiByV, aiBySeq}}); err != nil {
		t.Fatal(err)
	}
	tb := db.Table("msgs")
	const writers, each = 4, 25
	keys := make([][]tablekit.PrimaryKey, writers)
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				conv := []string{"c1", "c2"}[i%2]
				ph := tablekit.Key("conv", tablekit.String(conv)).Add("seq", tablekit.AutoIncrement).Add("part", tablekit.Integer(1))
				var k tablekit.PrimaryKey
				if err := tb.PutRow(ctx, ph, []tablekit.Column{{Name: "v", Value: tablekit.String(fmt.Sprintf("w%d", w))}}, tablekit.ReturnKey(&k)); err != nil {
					errs <- err
					return
				}
				keys[w] = append(keys[w], k)
			}
		})
	}
	wg.Go(func() {
		for seq := range int64(each) {
			if err := tb.PutRow(ctx, aiRow{"c1", seq + 1, "real"}.key(), []tablekit.Column{{Name: "v", Value: tablekit.String("real")}}); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ks := range keys {
		for _, k := range ks {
			if k.AutoIncrementIndex() >= 0 || seen[k.String()] {
				t.Fatalf("assigned key %v twice or not at all", k)
			}
			seen[k.String()] = true
		}
	}
	// The rows as stored (a real-key put may have replaced an assigned row).
	var rows []aiRow
	lo := tablekit.Key("conv", tablekit.InfMin).Add("seq", tablekit.InfMin).Add("part", tablekit.InfMin)
	hi := tablekit.Key("conv", tablekit.InfMax).Add("seq", tablekit.InfMax).Add("part", tablekit.InfMax)
	for r, err := range tb.Rows(ctx, lo, hi) {
		if err != nil {
			t.Fatal(err)
		}
		conv, _ := r.Key[0].Value.Str()
		seq, _ := r.Key[1].Value.Int()
		v, _ := r.Get("v")
		s, _ := v.Str()
		rows = append(rows, aiRow{conv, seq, s})
	}
	if len(rows) < writers*each {
		t.Fatalf("%d rows, want at least the %d assigned", len(rows), writers*each)
	}
	checkAIIndexes(t, tb, rows, "by_v", "by_seq")
	for _, ix := range []string{"by_v", "by_seq"} {
		if rep, err := db.Reindex(ctx, "msgs", ix, true); err != nil || rep.Missing != 0 {
			t.Errorf("Reindex %s verify: %+v, %v; want no entry missing", ix, rep, err)
		}
	}
}
