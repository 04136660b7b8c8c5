package gcpbigtable_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/internal/testkit/urltest"
)

// TestURL opens bigtable:// on an in-process bttest through
// BIGTABLE_EMULATOR_HOST, as a program configured by TABLEKIT_URL would,
// and makes a round trip.
func TestURL(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	db, err := tablekit.Open(ctx, "bigtable://proj/inst?gc=off&meta_table=meta.url&concurrency=4")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var admin *bigtable.AdminClient
	if !db.As(&admin) {
		t.Fatal("the client offers no *bigtable.AdminClient")
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	k := key2("a", 1)
	if err := db.Table("t").PutRow(ctx, k, []tablekit.Column{{Name: "c", Value: tablekit.String("v")}}); err != nil {
		t.Fatal(err)
	}
	row, ok, err := db.Table("t").GetRow(ctx, k)
	if err != nil || !ok {
		t.Fatalf("GetRow = %v, %v", ok, err)
	}
	if v, _ := row.Get("c"); !v.Equal(tablekit.String("v")) {
		t.Errorf("c = %v, want \"v\"", v)
	}
	// The metadata went to the table the URL named.
	tables, err := admin.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(tables, " "), "meta.url") {
		t.Errorf("tables %q: no meta.url", tables)
	}
}

// TestURLDomainScopedProject: a project id with a colon (a domain-scoped
// one) cannot be a URL's host; the project parameter carries it.
func TestURLDomainScopedProject(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
	db, err := tablekit.Open(ctx, "bigtable:///inst?project=example.com:proj&gc=off")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: schema2}); err != nil {
		t.Fatal(err)
	}
	var admin *bigtable.AdminClient
	if !db.As(&admin) {
		t.Fatal("the client offers no *bigtable.AdminClient")
	}
	// The adapter's tables are in that project: the server lists them there.
	tables, err := admin.Tables(ctx)
	if err != nil || len(tables) == 0 {
		t.Fatalf("tables of project example.com:proj: %q, %v", tables, err)
	}
	k := key2("a", 1)
	if err := db.Table("t").PutRow(ctx, k, []tablekit.Column{{Name: "c", Value: tablekit.String("v")}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.Table("t").GetRow(ctx, k); err != nil || !ok {
		t.Fatalf("GetRow = %v, %v", ok, err)
	}
	other, err := bigtable.NewAdminClient(ctx, "proj", "inst", emulatorOptions(srv)...)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ts, err := other.Tables(ctx); err != nil || len(ts) != 0 {
		t.Fatalf("project proj (not the URL's) has tables %q (%v)", ts, err)
	}
}

func TestURLRefused(t *testing.T) {
	t.Setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1") // never dialled: every URL is refused first
	urltest.Refused(t, "s3cr3t",
		"bigtable://",
		"bigtable://proj",
		"bigtable://proj/",
		"bigtable:///inst",
		"bigtable:///inst?project=",
		"bigtable://proj/inst?project=example.com:proj",
		"bigtable://proj/inst/extra",
		"bigtable://proj:8086/inst",
		"bigtable://user:s3cr3t@proj/inst",
		"bigtable://proj/inst?token=s3cr3t",
		"bigtable://proj/inst?colour=blue",
		"bigtable://proj/inst?gc=sometimes",
		"bigtable://proj/inst?gc_margin=-1h",
		"bigtable://proj/inst?gc_margin=soon",
		"bigtable://proj/inst?concurrency=0",
		"bigtable://proj/inst?app_profile=a&app_profile=b",
		"bigtable://proj/inst#frag",
		"bigtable:proj/inst",
	)
}

// New refuses the options that configure the clients Open builds.
func TestNewRefusesOpenOnlyOptions(t *testing.T) {
	srv := newServer(t)
	b := openBackend(t, srv, gcpbigtable.Options{GC: gcpbigtable.GCOff})
	for name, o := range map[string]*gcpbigtable.Options{
		"Project":       {Project: "p"},
		"Instance":      {Instance: "i"},
		"AppProfile":    {AppProfile: "batch"},
		"ClientOptions": {ClientOptions: emulatorOptions(srv)},
	} {
		_, err := gcpbigtable.New(b.Client(), b.AdminClient(), o)
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), name) {
			t.Errorf("New with %s: err = %v, want ErrInvalidArgument naming it", name, err)
		}
	}
	if _, err := gcpbigtable.Open(context.Background(), &gcpbigtable.Options{Project: "p"}); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("Open without an instance: err = %v", err)
	}
	if _, err := gcpbigtable.New(nil, nil, nil); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("New(nil): err = %v", err)
	}
}
