package tkotel_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/backend/awsdynamodb"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
	"github.com/tablekit/tablekit/faults"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// Every backend has its db.system.name, also behind a faults wrapper. The
// operation fails validation before it reaches the (zero, unusable)
// backend, but it is observed.
func TestSystemNames(t *testing.T) {
	for _, tc := range []struct {
		b    tablekit.Backend
		want string
	}{
		{&awsdynamodb.Backend{}, "aws.dynamodb"},
		{&gcpbigtable.Backend{}, "tablekit.bigtable"},
		{&aliyuntablestore.Backend{}, "tablekit.tablestore"},
		{localengine.New(), "tablekit.local"},
		{&fileengine.Engine{}, "tablekit.file"},
		{faults.New(1).Wrap(&gcpbigtable.Backend{}), "tablekit.bigtable"},
	} {
		tel := newTelemetry(t)
		db := tablekit.NewClient(tc.b, tablekit.WithObserver(tel.observer()))
		if err := db.CreateTable(context.Background(), tablekit.TableMeta{Name: "bad name!"}); err == nil {
			t.Fatalf("%T: CreateTable of a bad name succeeded", tc.b)
		}
		wantAttrs(t, tel.span(t, "CreateTable bad name!"), map[string]any{"db.system.name": tc.want, "error.type": "invalid_argument"})
	}
}
