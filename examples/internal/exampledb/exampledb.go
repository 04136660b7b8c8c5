// Package exampledb is for the example programs only: it opens the backend
// they run on and gives them a small way to check their own results.
//
// Every example takes the backend's URL from its -db flag, else from the
// TABLEKIT_URL environment variable, else mem:// (the in-memory engine):
//
//	go run ./examples/catalog
//	go run ./examples/catalog -db file:///tmp/catalog
//	TABLEKIT_URL='dynamodb://?region=us-east-1&endpoint=http://127.0.0.1:8000' go run ./examples/catalog
//
// An example drops the tables it created when it ends (unless -keep), so
// that it runs again on a backend that keeps its data.
package exampledb

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tablekit/tablekit"
	_ "github.com/tablekit/tablekit/all" // every URL scheme
)

// DefaultURL is the backend of an example given no -db and no TABLEKIT_URL.
const DefaultURL = "mem://"

// Open returns a client on the backend rawURL names (see tablekit.Open);
// "" means TABLEKIT_URL, or [DefaultURL] when that is unset.
func Open(ctx context.Context, rawURL string) (*tablekit.Client, error) {
	if rawURL == "" {
		rawURL = os.Getenv(tablekit.EnvURL)
	}
	if rawURL == "" {
		rawURL = DefaultURL
	}
	return tablekit.Open(ctx, rawURL)
}

// Checker collects failed expectations.
type Checker struct{ Failed []string }

// Expect records a failure when ok is false.
func (c *Checker) Expect(ok bool, format string, args ...any) {
	if !ok {
		c.Failed = append(c.Failed, fmt.Sprintf(format, args...))
	}
}

// Err returns an error listing the failures, or nil.
func (c *Checker) Err() error {
	if len(c.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d check(s) failed: %q", len(c.Failed), c.Failed)
}

// RunFunc is an example's body: it uses only db, so the same code runs on
// every backend.
type RunFunc func(ctx context.Context, db *tablekit.Client, out io.Writer) error

// Main runs an example program: parse -db and -keep, open the backend,
// run, drop the tables the run created, report. It exits with status 2 on
// a usage error and 1 when the backend cannot be opened or a check fails.
func Main(run RunFunc) {
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	dbURL := fs.String("db", "", "backend URL (default $"+tablekit.EnvURL+", else "+DefaultURL+"), e.g. file:///tmp/db, bigtable://PROJECT/INSTANCE, dynamodb://?region=R, tablestore://INSTANCE?endpoint=URL")
	keep := fs.Bool("keep", false, "keep the tables the example creates")
	fs.Parse(os.Args[1:])
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %q\n", fs.Args())
		fs.Usage()
		os.Exit(2)
	}
	if err := RunURL(context.Background(), *dbURL, *keep, run, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("OK: every check passed")
}

// RunURL opens the backend rawURL names (as [Open]), runs the example on
// it, and, unless keep, drops the tables that were not there before the
// run. A table that exists before the run makes the example fail rather
// than touch it; drop it by hand, or use a fresh backend.
func RunURL(ctx context.Context, rawURL string, keep bool, run RunFunc, out io.Writer) (err error) {
	db, err := Open(ctx, rawURL)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	before, err := db.ListTables(ctx)
	if err != nil {
		return fmt.Errorf("listing the tables before the run: %w", err)
	}
	if !keep {
		defer func() {
			after, lerr := db.ListTables(ctx)
			if lerr != nil {
				if err == nil {
					err = fmt.Errorf("listing the tables to drop: %w", lerr)
				}
				return
			}
			for _, name := range after {
				if slices.Contains(before, name) {
					continue
				}
				if derr := db.DeleteTable(ctx, name); derr != nil && err == nil {
					err = fmt.Errorf("dropping table %q: %w", name, derr)
				}
			}
		}()
	}
	return run(ctx, db, out)
}

// T is the part of *testing.T that [Run] uses.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Run is what each example's test does: run it on rawURL ("" means a fresh
// in-memory engine, whatever TABLEKIT_URL says) and fail with its output
// when a check fails or it prints nothing.
func Run(t T, rawURL string, run RunFunc) {
	t.Helper()
	if rawURL == "" {
		rawURL = DefaultURL
	}
	var out strings.Builder
	if err := RunURL(context.Background(), rawURL, false, run, &out); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	if out.Len() == 0 {
		t.Fatalf("the example printed nothing")
	}
}
