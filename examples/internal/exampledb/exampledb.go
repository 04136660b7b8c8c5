// Package exampledb opens the backend the examples run on and gives them a
// small way to check their own results.
package exampledb

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// Open returns a client on the local engine. Every example takes the client
// as an argument, so the same code runs on any backend.
func Open(ctx context.Context) (*tablekit.Client, error) {
	return tablekit.NewClient(localengine.New()), nil
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

// Main runs an example program: open the backend, run, report.
func Main(run func(ctx context.Context, db *tablekit.Client, out io.Writer) error) {
	ctx := context.Background()
	db, err := Open(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer db.Close()
	if err := run(ctx, db, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("OK: every check passed")
}

// Run is what each example's test does: run it on a fresh local engine and
// fail with its output when a check fails or it prints nothing.
func Run(t interface {
	Helper()
	Fatalf(format string, args ...any)
}, run func(ctx context.Context, db *tablekit.Client, out io.Writer) error) {
	t.Helper()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	var out strings.Builder
	if err := run(context.Background(), db, &out); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	if out.Len() == 0 {
		t.Fatalf("the example printed nothing")
	}
}
