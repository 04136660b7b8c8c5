package gcpbigtable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// TestEmulatorHostReadsLargeRows opens the backend from
// BIGTABLE_EMULATOR_HOST alone and reads a row of more than 4 MiB, as a
// backend opened with the emulator's explicit endpoint does. The raw
// client, built from the variable the same way, cannot: its connection
// keeps gRPC's 4 MiB receive limit, which is what Open works around.
func TestEmulatorHostReadsLargeRows(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	cfg := gcpbigtable.Options{Project: "proj", Instance: "inst", GC: gcpbigtable.GCOff}
	cfg.ClientConfig.MetricsProvider = bigtable.NoopMetricsProvider{}
	b, err := gcpbigtable.Open(ctx, &cfg)
	if err != nil {
		t.Fatalf("Open from BIGTABLE_EMULATOR_HOST: %v", err)
	}
	db := tablekit.NewClient(b, tablekit.WithClock(tablekit.NewManualClock(base)))
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "big", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("big")
	k := key2("big", 1)
	val := func(c byte) tablekit.Value { return tablekit.String(strings.Repeat(string(c), 1900<<10)) }
	if err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "a", Value: val('a')}, {Name: "b", Value: val('b')}}); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Put("c", val('c'))}); err != nil {
		t.Fatal(err)
	}
	check := func(who string, db *tablekit.Client) {
		t.Helper()
		r, found, err := db.Table("big").GetRow(ctx, k)
		if err != nil || !found {
			t.Fatalf("%s: GetRow of a 5.6 MiB row: found %v, %v", who, found, err)
		}
		if r.Size() < 5<<20 || len(r.Columns) != 3 {
			t.Fatalf("%s: GetRow returned %d columns, %d bytes", who, len(r.Columns), r.Size())
		}
		for i, c := range r.Columns {
			if !c.Value.Equal(val(byte('a' + i))) {
				t.Errorf("%s: column %s differs", who, c.Name)
			}
		}
	}
	check("BIGTABLE_EMULATOR_HOST", db)
	explicit := tablekit.NewClient(openBackend(t, srv, gcpbigtable.Options{GC: gcpbigtable.GCOff}))
	check("explicit endpoint", explicit)

	// The premise: the raw client from the variable alone refuses the row.
	raw, err := bigtable.NewClientWithConfig(ctx, "proj", "inst", bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_, err = raw.Open(tableID(t, db, "big")).ReadRow(ctx, "big\x00\x01=0000000000000000001")
	if status.Code(err) != codes.ResourceExhausted {
		t.Logf("the raw client from BIGTABLE_EMULATOR_HOST read the row (%v): the workaround may no longer be needed", err)
	}
}

// TestAs checks the native clients Client.As offers.
func TestAs(t *testing.T) {
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	var c *bigtable.Client
	if !db.As(&c) || c != b.Client() || c == nil {
		t.Errorf("As(**bigtable.Client) = %p, want %p", c, b.Client())
	}
	var a *bigtable.AdminClient
	if !db.As(&a) || a != b.AdminClient() || a == nil {
		t.Errorf("As(**bigtable.AdminClient) = %p, want %p", a, b.AdminClient())
	}
	var s *string
	if db.As(&s) || db.As(nil) {
		t.Errorf("As offered something other than the two clients")
	}
	nb, err := gcpbigtable.New(b.Client(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	noAdmin := tablekit.NewClient(nb)
	if a = nil; noAdmin.As(&a) || a != nil {
		t.Errorf("As(**bigtable.AdminClient) without an admin client = %v", a)
	}
}

// staleClient returns a Client on b whose metadata cache never expires.
func staleClient(b *gcpbigtable.Backend, clock tablekit.Clock) *tablekit.Client {
	return tablekit.NewClient(b, tablekit.WithClock(clock), tablekit.WithMetaCacheTTL(0))
}

// TestStaleOptionsNeverTrim raises MaxVersions from 1 to 5 through one
// client, writes 5 versions of a column with blind writes (an UpdateRow of
// puts, a PutRow), and then has a client still caching MaxVersions 1 make
// optimistic writes to that very column: a DeleteVersion of the newest and
// an Increment. They must not trim the column back to one version (SPEC §3):
// the blind writes stamp the row with the new generation, the optimistic
// path refuses the stale request, and the Client retries it with the
// current options.
func TestStaleOptionsNeverTrim(t *testing.T) {
	ctx := context.Background()
	clock := tablekit.NewManualClock(base)
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, clock)
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "stale", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	stale := staleClient(b, clock)
	ks, kp := key2("update", 1), key2("put", 1)
	for _, k := range []tablekit.PrimaryKey{ks, kp} {
		if _, _, err := stale.Table("stale").GetRow(ctx, k); err != nil { // caches MaxVersions 1
			t.Fatal(err)
		}
	}
	if err := db.UpdateTable(ctx, "stale", tablekit.TableOptions{MaxVersions: 5}); err != nil {
		t.Fatal(err)
	}
	now := base.UnixMilli()
	var changes []tablekit.Change
	var cols []tablekit.Column
	for i := range 5 {
		v := now - int64(4-i)*1000
		changes = append(changes, tablekit.PutAt("c", tablekit.Integer(int64(i)), v))
		cols = append(cols, tablekit.Column{Name: "c", Value: tablekit.Integer(int64(i)), Version: v})
	}
	if _, err := db.Table("stale").UpdateRow(ctx, ks, changes); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("stale").PutRow(ctx, kp, cols); err != nil {
		t.Fatal(err)
	}
	versions := func(k tablekit.PrimaryKey) []int64 {
		t.Helper()
		r, _, err := db.Table("stale").GetRow(ctx, k, tablekit.MaxVersions(10))
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, c := range r.Versions("c") {
			out = append(out, (c.Version-now)/1000)
		}
		return out
	}
	for _, k := range []tablekit.PrimaryKey{ks, kp} {
		if got := versions(k); fmt.Sprint(got) != "[0 -1 -2 -3 -4]" {
			t.Fatalf("%v: versions of c %v, want 5", k, got)
		}
	}
	// The stamp: m:gen at timestamp 2 ms, holding "2".
	r, err := rawTable(t, b, "stale").ReadRow(ctx, "update\x00\x01=0000000000000000001", bigtable.RowFilter(bigtable.ColumnFilter("gen")))
	if err != nil || len(r["m"]) != 1 || string(r["m"][0].Value) != "2" || r["m"][0].Timestamp != 2000 {
		t.Errorf("m:gen after a blind write at generation 2 = %v, %v; want \"2\" at 2000 µs", r["m"], err)
	}

	if _, err := stale.Table("stale").UpdateRow(ctx, ks, []tablekit.Change{tablekit.DeleteVersion("c", now)}); err != nil {
		t.Fatalf("stale DeleteVersion: %v", err)
	}
	if got := versions(ks); fmt.Sprint(got) != "[-1 -2 -3 -4]" {
		t.Errorf("after a stale client's DeleteVersion of the newest: versions of c %v, want [-1 -2 -3 -4]", got)
	}
	clock.Advance(time.Second)
	res, err := stale.Table("stale").UpdateRow(ctx, kp, []tablekit.Change{tablekit.Increment("c", 10)})
	if err != nil {
		t.Fatalf("stale Increment: %v", err)
	}
	if len(res.Increments) != 1 || !res.Increments[0].Value.Equal(tablekit.Integer(14)) {
		t.Errorf("stale Increment returned %v, want c = 14", res.Increments)
	}
	if got := versions(kp); fmt.Sprint(got) != "[1 0 -1 -2 -3]" {
		t.Errorf("after a stale client's Increment: versions of c %v, want the 5 newest, [1 0 -1 -2 -3]", got)
	}
	// The stale client has caught up: it sees the 5 versions too.
	r2, _, err := stale.Table("stale").GetRow(ctx, kp, tablekit.MaxVersions(10))
	if err != nil || len(r2.Versions("c")) != 5 {
		t.Errorf("the refreshed client reads %v, %v; want 5 versions", r2.Columns, err)
	}
}

// TestUpdateTableConditions checks UpdateTable's check of the request's
// Incarnation and Generation on the backend itself, and the metadata row's
// cells.
func TestUpdateTableConditions(t *testing.T) {
	ctx := context.Background()
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "upd", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	m1, err := b.DescribeTable(ctx, "upd")
	if err != nil || len(m1.Incarnation) != 16 || m1.Generation != 1 {
		t.Fatalf("DescribeTable = %+v, %v; want an incarnation and generation 1", m1, err)
	}
	opts := m1.Options
	opts.MaxVersions = 4
	m2, err := b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: m1, Options: opts})
	if err != nil || m2.Generation != 2 || m2.Options != opts || m2.Incarnation != m1.Incarnation {
		t.Fatalf("UpdateTable = %+v, %v; want generation 2 and the new options", m2, err)
	}
	if m1.Generation != 1 || m1.Options.MaxVersions != 1 {
		t.Errorf("UpdateTable changed its request's Meta: %+v", m1)
	}
	if _, err := b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: m1, Options: opts}); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("UpdateTable at an old generation: %v, want ErrConditionFailed", err)
	}
	other := *m2
	other.Incarnation = "00000000000000ff"
	if _, err := b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: &other, Options: opts}); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Errorf("UpdateTable of another incarnation: %v, want ErrTableNotFound", err)
	}
	missing := *m2
	missing.Name = "nosuch"
	if _, err := b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: &missing, Options: opts}); !errors.Is(err, tablekit.ErrTableNotFound) {
		t.Errorf("UpdateTable of a missing table: %v, want ErrTableNotFound", err)
	}
	if names, err := b.ListTables(ctx); err != nil || fmt.Sprint(names) != "[upd]" {
		t.Errorf("ListTables = %q, %v: a refused UpdateTable made a metadata row", names, err)
	}
	row, err := b.Client().Open(gcpbigtable.DefaultMetaTable).ReadRow(ctx, "upd")
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]string{}
	for _, it := range row["t"] {
		cells[it.Column] = string(it.Value)
	}
	if cells["t:incarnation"] != m1.Incarnation || cells["t:generation"] != "2" || !strings.Contains(cells["t:schema"], gcpbigtable.TableID("upd", m1.Incarnation)) {
		t.Errorf("metadata row = %q", cells)
	}
	if m, err := b.DescribeTable(ctx, "upd"); err != nil || len(m.Key) != 2 || m.Generation != 2 || m.Options.MaxVersions != 4 {
		t.Errorf("DescribeTable after UpdateTable = %+v, %v", m, err)
	}
}

// TestLegacyTable runs a table made before incarnations and generations (a
// metadata row without t:incarnation and t:generation, the Bigtable table
// named after the table alone): it reports the empty Incarnation and
// Generation 1, keeps its Bigtable table, and takes writes, UpdateTable and
// DeleteTable.
func TestLegacyTable(t *testing.T) {
	ctx := context.Background()
	db, b := newDB(t, gcpbigtable.Options{GC: gcpbigtable.GCOff}, tablekit.NewManualClock(base))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "other", Key: schema2}); err != nil { // makes the metadata table
		t.Fatal(err)
	}
	admin := b.AdminClient()
	if err := admin.CreateTableFromConf(ctx, &bigtable.TableConf{TableID: "legacy", ColumnFamilies: map[string]bigtable.Family{"c": {}, "m": {}}}); err != nil {
		t.Fatal(err)
	}
	set := bigtable.NewMutation()
	set.Set("t", "schema", 0, []byte(`{"bigtable_table":"legacy","key":[{"name":"pk","type":"String"},{"name":"n","type":"Integer"}]}`))
	set.Set("t", "options", 0, []byte(`{"ttl":-1,"max_versions":1,"max_version_offset":86400}`))
	if err := b.Client().Open(gcpbigtable.DefaultMetaTable).Apply(ctx, "legacy", set); err != nil {
		t.Fatal(err)
	}
	m, err := db.DescribeTable(ctx, "legacy")
	if err != nil || m.Incarnation != "" || m.Generation != 1 {
		t.Fatalf("DescribeTable of a legacy table = %+v, %v; want no incarnation, generation 1", m, err)
	}
	tbl := db.Table("legacy")
	k := key2("a", 1)
	if err := tbl.PutRow(ctx, k, []tablekit.Column{{Name: "v", Value: tablekit.Integer(1)}}); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Client().Open("legacy").ReadRow(ctx, "a\x00\x01=0000000000000000001"); err != nil || len(r["c"]) != 1 {
		t.Fatalf("the legacy Bigtable table holds %v, %v; want the row", r, err)
	}
	if err := db.UpdateTable(ctx, "legacy", tablekit.TableOptions{MaxVersions: 3}); err != nil {
		t.Fatalf("UpdateTable of a legacy table: %v", err)
	}
	if m, err := db.DescribeTable(ctx, "legacy"); err != nil || m.Incarnation != "" || m.Generation != 2 || m.Options.MaxVersions != 3 {
		t.Fatalf("DescribeTable after UpdateTable = %+v, %v", m, err)
	}
	if _, err := b.UpdateTable(ctx, &tablekit.UpdateTableRequest{Meta: &m, Options: m.Options}); !errors.Is(err, tablekit.ErrConditionFailed) {
		t.Errorf("UpdateTable of a legacy table at generation 1 after it moved to 2: %v, want ErrConditionFailed", err)
	}
	if _, err := tbl.UpdateRow(ctx, k, []tablekit.Change{tablekit.Increment("cnt", 2)}); err != nil {
		t.Fatal(err)
	}
	if r, found, err := tbl.GetRow(ctx, k); err != nil || !found || len(r.Columns) != 2 {
		t.Fatalf("GetRow = %v, %v, %v", r, found, err)
	}
	if err := db.DeleteTable(ctx, "legacy"); err != nil {
		t.Fatalf("DeleteTable of a legacy table: %v", err)
	}
	if tables, err := admin.Tables(ctx); err != nil || containsAll(tables, "legacy") {
		t.Errorf("Bigtable tables after DeleteTable = %q, %v; want legacy gone", tables, err)
	}
}

// TestBackendAfterClose calls the backend directly after Close (the Client
// never does): every call fails with an error, none panics.
func TestBackendAfterClose(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	b := openBackend(t, srv, gcpbigtable.Options{GC: gcpbigtable.GCOff})
	db := tablekit.NewClient(b, tablekit.WithClock(tablekit.NewManualClock(base)))
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "after", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	m, err := b.DescribeTable(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	k := key2("a", 1)
	w := &tablekit.WriteRequest{Meta: m, Kind: tablekit.WritePut, Key: k, Now: base.UnixMilli()}
	u := &tablekit.WriteRequest{Meta: m, Kind: tablekit.WriteUpdate, Key: k, Changes: []tablekit.Change{tablekit.Increment("x", 1)}, Now: base.UnixMilli()}
	calls := map[string]func() error{
		"DescribeTable": func() error { _, err := b.DescribeTable(ctx, "after"); return err },
		"ListTables":    func() error { _, err := b.ListTables(ctx); return err },
		"Write":         func() error { _, err := b.Write(ctx, w); return err },
		"Write (optimistic)": func() error {
			_, err := b.Write(ctx, u)
			return err
		},
		"GetRow": func() error {
			_, err := b.GetRow(ctx, &tablekit.GetRowRequest{Meta: m, Key: k, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: base.UnixMilli()})
			return err
		},
		"BatchWriteRow": func() error {
			res, err := b.BatchWriteRow(ctx, []*tablekit.WriteRequest{w, u})
			if err == nil {
				err = errors.Join(res[0].Err, res[1].Err)
			}
			return err
		},
	}
	for name, call := range calls {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s after Close panicked: %v", name, p)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s after Close succeeded", name)
			}
		}()
	}
	if err := b.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}
