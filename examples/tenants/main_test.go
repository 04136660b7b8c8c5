package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

func TestRun(t *testing.T) {
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	var out strings.Builder
	if err := run(context.Background(), db, &out); err != nil {
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	if out.Len() == 0 {
		t.Fatal("the example printed nothing")
	}
}
