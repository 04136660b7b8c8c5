package tablekit_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// withholding is the file engine (which has BatchWriteRow, ScanRange,
// AtomicWrite, a change feed and WriteIndexed) declaring less than its methods show, as
// a backend whose store lacks a feature at run time does, and claiming
// BatchRead, which it has no method for. It counts the calls of its
// optional methods.
type withholding struct {
	*fileengine.Engine
	optionalCalls atomic.Int64
	// BatchGetRow hides the engine's method of that name: the backend has
	// none, though it claims BatchRead.
	BatchGetRow struct{}
}

func (w *withholding) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.BatchRead = true // no BatchGetRow: presence wins
	shown.BatchWrite, shown.LendingScan, shown.AtomicWrite, shown.ChangeFeed = false, false, false, false
	shown.IndexedWrite = false
	return shown
}

func (w *withholding) BatchWriteRow(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	w.optionalCalls.Add(1)
	return w.Engine.BatchWriteRow(ctx, reqs)
}

func (w *withholding) ScanRange(ctx context.Context, req *tablekit.GetRangeRequest, fn func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	w.optionalCalls.Add(1)
	return w.Engine.ScanRange(ctx, req, fn)
}

func (w *withholding) AtomicWrite(ctx context.Context, reqs []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	w.optionalCalls.Add(1)
	return w.Engine.AtomicWrite(ctx, reqs)
}

func (w *withholding) CreateTableWithFeed(ctx context.Context, meta *tablekit.TableMeta, feed *tablekit.SetChangeFeedRequest) error {
	w.optionalCalls.Add(1)
	return w.Engine.CreateTableWithFeed(ctx, meta, feed)
}

func (w *withholding) WriteIndexed(ctx context.Context, req *tablekit.WriteRequest, entries []*tablekit.WriteRequest) (*tablekit.UpdateResult, error) {
	w.optionalCalls.Add(1)
	return w.Engine.WriteIndexed(ctx, req, entries)
}

func (w *withholding) SetChangeFeed(ctx context.Context, req *tablekit.SetChangeFeedRequest) (*tablekit.ChangeFeedStatus, error) {
	w.optionalCalls.Add(1)
	return w.Engine.SetChangeFeed(ctx, req)
}

// The Client's one rule: an optional method whose capability the backend
// does not claim is never called, batches included; the Client falls back
// (batches, Scan) or refuses with ErrUnimplemented (AtomicWrite, the
// feed); a declaration cannot claim a method the backend lacks.
func TestCapabilitiesWithheldAreNotUsed(t *testing.T) {
	ctx := context.Background()
	e, err := fileengine.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &withholding{Engine: e}
	// SecondaryIndex stays: the Client keeps indexes over the required calls.
	if got, want := tablekit.CapabilitiesOf(b), (tablekit.Capabilities{SecondaryIndex: true}); got != want {
		t.Fatalf("CapabilitiesOf = %+v, want %+v", got, want)
	}
	db := tablekit.NewClient(b)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	k := func(i int64) tablekit.PrimaryKey { return tablekit.Key("k", tablekit.Integer(i)) }
	res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{
		tablekit.BatchPut("t", k(1), []tablekit.Column{{Name: "c", Value: tablekit.Integer(1)}}),
		tablekit.BatchPut("t", k(2), []tablekit.Column{{Name: "c", Value: tablekit.Integer(2)}}),
	})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("BatchWriteRow through the fallback: %v %+v", err, res)
	}
	got, err := db.BatchGetRow(ctx, []tablekit.BatchGet{{Table: "t", Key: k(2)}, {Table: "t", Key: k(1)}})
	if err != nil || !got[0].Found || !got[1].Found {
		t.Fatalf("BatchGetRow through the fallback: %v %+v", err, got)
	}
	if n := scanAll(t, tbl); n != 2 {
		t.Errorf("Scan through pages read %d rows, want 2", n)
	}
	if _, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", k(3), nil)}); !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Errorf("AtomicWrite withheld = %v, want ErrUnimplemented", err)
	}
	if _, err := tbl.EnableChangeFeed(ctx, 0); !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Errorf("EnableChangeFeed withheld = %v, want ErrUnimplemented", err)
	}
	// CreateWithFeed goes with ChangeFeed: withheld too, though the
	// engine has CreateTableWithFeed.
	err = db.CreateTable(ctx, tablekit.TableMeta{Name: "f", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}, tablekit.WithChangeFeed(0))
	if !errors.Is(err, tablekit.ErrUnimplemented) {
		t.Errorf("CreateTable WithChangeFeed, the feed withheld = %v, want ErrUnimplemented", err)
	}
	if _, err := db.DescribeTable(ctx, "f"); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Errorf("DescribeTable of the refused table = %v, want ErrTableNotFound", err)
	}
	// An indexed table's writes take the ordered path (entries, then row).
	ix := tablekit.IndexSpec{Name: "by_c", Columns: []tablekit.KeyColumn{{Name: "c", Type: tablekit.TypeInteger}}}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "x", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}, Indexes: []tablekit.IndexSpec{ix}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("x").PutRow(ctx, k(1), []tablekit.Column{{Name: "c", Value: tablekit.Integer(7)}}); err != nil {
		t.Fatal(err)
	}
	if _, found, err := db.Table("x").Index("by_c").GetRow(ctx, tablekit.Key("c", tablekit.Integer(7)).Add("k", tablekit.Integer(1))); err != nil || !found {
		t.Errorf("index read after the ordered write: found %v, %v", found, err)
	}
	if c := b.optionalCalls.Load(); c != 0 {
		t.Errorf("the Client called a withheld optional method %d times", c)
	}
	if _, found, _ := tbl.GetRow(ctx, k(3)); found {
		t.Error("the refused AtomicWrite wrote row 3")
	}
}

// skipping is the local engine whose AtomicWrite and ScanRange answer
// ErrSkip at run time although claimed: Scan falls back to pages, and
// AtomicWrite, which has no fallback, fails with ErrUnimplemented.
type skipping struct{ *localengine.Engine }

func (s skipping) AtomicWrite(context.Context, []*tablekit.WriteRequest) ([]tablekit.WriteResponse, error) {
	return nil, tablekit.ErrSkip
}

func (s skipping) ScanRange(context.Context, *tablekit.GetRangeRequest, func(tablekit.Row) bool) (tablekit.PrimaryKey, error) {
	return nil, tablekit.ErrSkip
}

func TestErrSkipAtRunTime(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(skipping{localengine.New()})
	defer db.Close()
	if c := db.Capabilities(); !c.AtomicWrite || !c.LendingScan {
		t.Fatalf("capabilities %+v, want AtomicWrite and LendingScan", c)
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	if err := tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(1)), nil); err != nil {
		t.Fatal(err)
	}
	if n := scanAll(t, tbl); n != 1 {
		t.Errorf("Scan after ErrSkip read %d rows, want 1", n)
	}
	// Several pages read after ErrSkip, and the same iterator ranged twice.
	for k := int64(2); k <= 5; k++ {
		if err := tbl.PutRow(ctx, tablekit.Key("k", tablekit.Integer(k)), nil); err != nil {
			t.Fatal(err)
		}
	}
	rows := tbl.Scan(ctx, tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax), tablekit.PageSize(2), tablekit.Limit(4))
	for pass := range 2 {
		var got []int64
		for r, err := range rows {
			if err != nil {
				t.Fatal(err)
			}
			k, _ := r.Key[0].Value.Int()
			got = append(got, k)
		}
		if !slices.Equal(got, []int64{1, 2, 3, 4}) {
			t.Errorf("pass %d: Scan after ErrSkip, pages of 2, Limit 4: keys %v, want [1 2 3 4]", pass, got)
		}
	}
	_, err := tbl.AtomicWrite(ctx, []tablekit.BatchWrite{tablekit.BatchPut("", tablekit.Key("k", tablekit.Integer(2)), nil)})
	var te *tablekit.Error
	if !errors.Is(err, tablekit.ErrUnimplemented) || !errors.As(err, &te) || te.Op != "AtomicWrite" || te.Table != "t" {
		t.Errorf("AtomicWrite answering ErrSkip = %v, want ErrUnimplemented of AtomicWrite on table t", err)
	}
}

// scanAll counts the rows Table.Scan yields over the whole of tbl (key k).
func scanAll(t *testing.T, tbl *tablekit.Table) int {
	t.Helper()
	n := 0
	for _, err := range tbl.Scan(context.Background(), tablekit.Key("k", tablekit.InfMin), tablekit.Key("k", tablekit.InfMax)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// A method Capabilities() Capabilities, the declaration's former form,
// declares nothing now (CapabilityDeclarer takes what presence shows): a
// backend or test double still written so would silently lose what it
// declared, AutoIncrement first. None is left in the module.
func TestNoFormerCapabilityDeclarations(t *testing.T) {
	former := regexp.MustCompile(`func \((\w+ )?\*?(\w+)\) Capabilities\(\) (\w+\.)?Capabilities\b`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range former.FindAllSubmatch(src, -1) {
			if string(m[2]) != "Client" {
				t.Errorf("%s: %s: declare with Capabilities(shown tablekit.Capabilities) tablekit.Capabilities", path, m[0])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
