package exampledb_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
)

func createT(ctx context.Context, db *tablekit.Client, out io.Writer) error {
	fmt.Fprintln(out, "creating t")
	return db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeString}}})
}

func tables(t *testing.T, u string) []string {
	t.Helper()
	db, err := exampledb.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names, err := db.ListTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// RunURL drops the tables the run created unless keep, so an example runs
// again on a backend that keeps its data; TABLEKIT_URL is the default URL.
func TestRunURL(t *testing.T) {
	ctx := context.Background()
	t.Setenv(tablekit.EnvURL, "mem://exampledb-test")
	if err := exampledb.RunURL(ctx, "", false, createT, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := tables(t, ""); len(got) != 0 {
		t.Errorf("tables left after the run: %q", got)
	}
	if err := exampledb.RunURL(ctx, "", true, createT, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := tables(t, "mem://exampledb-test"); !slices.Equal(got, []string{"t"}) {
		t.Errorf("tables after a -keep run = %q, want [t]", got)
	}
	// The kept table is not the run's: a second run fails and leaves it.
	if err := exampledb.RunURL(ctx, "", false, createT, io.Discard); !errors.Is(err, tablekit.ErrAlreadyExists) {
		t.Errorf("run over an existing table: err = %v, want ErrAlreadyExists", err)
	}
	if got := tables(t, ""); !slices.Equal(got, []string{"t"}) {
		t.Errorf("tables after the failed run = %q, want [t]", got)
	}
	t.Setenv(tablekit.EnvURL, "")
	if got := tables(t, ""); len(got) != 0 {
		t.Errorf("the default mem:// is not fresh: %q", got)
	}
	if err := exampledb.RunURL(ctx, "nosuch://x", false, createT, io.Discard); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("unknown scheme: err = %v", err)
	}
}
