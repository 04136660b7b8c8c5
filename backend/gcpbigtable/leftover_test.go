package gcpbigtable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// rawRows reads every raw row of tbl with the bigtable client and fails t
// for each one that holds bookkeeping but neither a c cell nor m:keyonly.
// It returns the row keys.
func rawRows(t *testing.T, tbl *bigtable.Table) []string {
	t.Helper()
	var keys []string
	err := tbl.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		keys = append(keys, r.Key())
		hasC, hasMarker := len(r["c"]) > 0, false
		for _, it := range r["m"] {
			if it.Column == "m:keyonly" {
				hasMarker = true
			}
		}
		if !hasC && !hasMarker {
			t.Errorf("raw row %q holds only bookkeeping: %v", r.Key(), r)
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestNoBookkeepingOnlyRows runs every kind of write that can leave a row
// without data and checks, with the raw client, that none leaves a row
// made of m:rev alone, and that rows which keep data are not touched.
func TestNoBookkeepingOnlyRows(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(base)
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, clock)
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "lo", Key: schema2, Options: tablekit.TableOptions{MaxVersions: 2}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("lo")
	iv := tablekit.Integer
	put := func(k tablekit.PrimaryKey, cols ...string) {
		t.Helper()
		var cs []tablekit.Column
		for _, c := range cols {
			cs = append(cs, tablekit.Column{Name: c, Value: iv(1)})
		}
		if err := tbl.PutRow(ctx, k, cs); err != nil {
			t.Fatal(err)
		}
	}
	update := func(k tablekit.PrimaryKey, changes []tablekit.Change, opts ...tablekit.WriteOption) {
		t.Helper()
		if _, err := tbl.UpdateRow(ctx, k, changes, opts...); err != nil && !errors.Is(err, tablekit.ErrConditionFailed) {
			t.Fatal(err)
		}
	}
	del := tablekit.DeleteColumn
	v := base.UnixMilli()

	// Blind deletes on absent rows.
	update(key2("absent_delcol", 1), []tablekit.Change{del("a")})
	update(key2("absent_delcols", 1), []tablekit.Change{del("a"), del("b")})
	update(key2("absent_put_then_del", 1), []tablekit.Change{tablekit.Put("a", iv(1)), del("a")})
	update(key2("absent_delver", 1), []tablekit.Change{tablekit.DeleteVersion("a", v)})
	// Conditional deletes on absent rows.
	update(key2("absent_notexist", 1), []tablekit.Change{del("a")}, tablekit.ExpectNotExist)
	update(key2("absent_exist", 1), []tablekit.Change{del("a")}, tablekit.ExpectExist)
	// Deleting a row's last columns.
	put(key2("last_delcol", 1), "a", "b")
	update(key2("last_delcol", 1), []tablekit.Change{del("a"), del("b")})
	put(key2("last_exist", 1), "a")
	update(key2("last_exist", 1), []tablekit.Change{del("a")}, tablekit.ExpectExist)
	if _, err := tbl.UpdateRow(ctx, key2("last_delver", 1), []tablekit.Change{tablekit.PutAt("a", iv(1), v)}); err != nil {
		t.Fatal(err)
	}
	update(key2("last_delver", 1), []tablekit.Change{tablekit.DeleteVersion("a", v)})
	// The same in a batch (the blind ones would go through ApplyBulk).
	put(key2("batch_last", 1), "a")
	res, err := db.BatchWriteRow(ctx, []tablekit.BatchWrite{
		tablekit.BatchUpdate("lo", key2("batch_absent", 1), []tablekit.Change{del("a")}),
		tablekit.BatchUpdate("lo", key2("batch_last", 1), []tablekit.Change{del("a")}),
		tablekit.BatchUpdate("lo", key2("batch_keep", 1), []tablekit.Change{tablekit.Put("a", iv(1))}),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("batch write %d: %v", i, r.Err)
		}
	}
	// Rows that keep data: another column, or the key-only marker.
	put(key2("keep_other", 1), "a", "b")
	update(key2("keep_other", 1), []tablekit.Change{del("a")})
	put(key2("keep_keyonly", 1))
	update(key2("keep_keyonly", 1), []tablekit.Change{del("a")})

	keys := rawRows(t, rawTable(t, b, "lo"))
	want := []string{rowKeyOf(key2("batch_keep", 1)), rowKeyOf(key2("keep_keyonly", 1)), rowKeyOf(key2("keep_other", 1))}
	if len(keys) != len(want) {
		t.Fatalf("raw rows %q, want %q", keys, want)
	}
	for i := range keys {
		if keys[i] != want[i] {
			t.Fatalf("raw rows %q, want %q", keys, want)
		}
	}
	for _, k := range []tablekit.PrimaryKey{key2("keep_other", 1), key2("keep_keyonly", 1)} {
		if _, ok, err := tbl.GetRow(ctx, k); err != nil || !ok {
			t.Errorf("GetRow(%v) = %v, %v; want the row", k, ok, err)
		}
	}
}

// TestInterruptedDeleteTable simulates DeleteTable stopping half way: the
// Bigtable table is gone but the metadata row is not (this version's
// order), or the metadata row is gone but the Bigtable table is not (the
// order of earlier versions). tablekit finishes the first (DeleteTable
// succeeds, the name can be created again, empty) and leaves the second's
// Bigtable table alone: the name is free, and a new table of it is another
// Bigtable table (another incarnation), empty.
func TestInterruptedDeleteTable(t *testing.T) {
	ctx := context.Background()
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	meta := tablekit.TableMeta{Name: "half", Key: schema2}
	k := key2("a", 1)
	create := func() string {
		t.Helper()
		if err := db.CreateTable(ctx, meta); err != nil {
			t.Fatalf("CreateTable: %v", err)
		}
		if err := db.Table("half").PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
			t.Fatal(err)
		}
		return tableID(t, db, "half")
	}

	// The native table deleted, the metadata row left.
	id := create()
	if err := b.AdminClient().DeleteTable(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateTable(ctx, meta); !errors.Is(err, tablekit.ErrAlreadyExists) {
		t.Fatalf("CreateTable while the metadata row is left: %v, want ErrAlreadyExists", err)
	}
	if err := db.DeleteTable(ctx, "half"); err != nil {
		t.Fatalf("DeleteTable with the Bigtable table gone: %v", err)
	}
	if names, err := db.ListTables(ctx); err != nil || len(names) != 0 {
		t.Fatalf("ListTables = %q, %v; want none", names, err)
	}
	if err := db.DeleteTable(ctx, "half"); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Fatalf("second DeleteTable: %v, want ErrTableNotFound", err)
	}
	create()
	if err := db.DeleteTable(ctx, "half"); err != nil {
		t.Fatal(err)
	}

	// The metadata row deleted, the native table left.
	old := create()
	del := bigtable.NewMutation()
	del.DeleteRow()
	if err := b.Client().Open(gcpbigtable.DefaultMetaTable).Apply(ctx, "half", del); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteTable(ctx, "half"); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Fatalf("DeleteTable without metadata: %v, want ErrTableNotFound", err)
	}
	if err := db.CreateTable(ctx, meta); err != nil {
		t.Fatalf("CreateTable after the metadata row was lost: %v", err)
	}
	if id := tableID(t, db, "half"); id == old {
		t.Fatalf("the table created again has the lost one's Bigtable table %q", id)
	}
	if _, found, err := db.Table("half").GetRow(ctx, k); err != nil || found {
		t.Fatalf("GetRow in the table created again = %v, %v; want no row (the lost table's rows stay in %q)", found, err, old)
	}
	if err := db.DeleteTable(ctx, "half"); err != nil {
		t.Fatal(err)
	}
	if tables, err := b.AdminClient().Tables(ctx); err != nil || !containsAll(tables, old) {
		t.Fatalf("Bigtable tables = %q, %v; want the lost table %q kept", tables, err, old)
	}

	// A Bigtable table tablekit did not make is never taken over, even
	// when it has the very id (a fixed incarnation, through the backend).
	const inc = "00000000000000aa"
	foreign := gcpbigtable.TableID("half", inc)
	if err := b.AdminClient().CreateTable(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := b.AdminClient().CreateColumnFamily(ctx, foreign, "other"); err != nil {
		t.Fatal(err)
	}
	err := b.CreateTable(ctx, &tablekit.TableMeta{Name: "half", Key: schema2, Options: tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}, Incarnation: inc, Generation: 1})
	if !errors.Is(err, tablekit.ErrAlreadyExists) {
		t.Fatalf("CreateTable over a foreign Bigtable table: %v, want ErrAlreadyExists", err)
	}
	if names, err := db.ListTables(ctx); err != nil || len(names) != 0 {
		t.Fatalf("ListTables after the refused CreateTable = %q, %v; want none", names, err)
	}
	if tables, err := b.AdminClient().Tables(ctx); err != nil || !containsAll(tables, foreign) {
		t.Fatalf("Bigtable tables = %q, %v; want the foreign %q kept", tables, err, foreign)
	}
}
