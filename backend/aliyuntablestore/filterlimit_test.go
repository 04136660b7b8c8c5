package aliyuntablestore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// SPEC §10 sets no bound on a filter's size, the service does (32
// conditions on the emulator). A larger read filter is evaluated by the
// adapter alone, with the same answer; a larger write condition, which the
// service must check atomically, is refused before anything is sent.
func TestFiltersBeyondServiceLimits(t *testing.T) {
	ctx := context.Background()
	srv := newServer(t)
	createUsers(t, srv)
	db := tablekit.NewClient(openAt(t, srv, srv.Endpoint(), nil))
	users := db.Table("users")
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = string(rune('A'+i/26)) + string(rune('a'+i%26))
		if err := users.PutRow(ctx, userKey(ids[i]), []tablekit.Column{{Name: "n", Value: tablekit.Integer(int64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	wide := func(k int) tablekit.Filter {
		fs := make([]tablekit.Filter, k)
		for i := range fs {
			fs[i] = tablekit.SingleColumnValue("n", tablekit.Equal, tablekit.Integer(int64(2*i)))
		}
		return tablekit.Or(fs...)
	}
	for _, k := range []int{32, 40} {
		res, err := users.GetRange(ctx, tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax), tablekit.WithFilter(wide(k)))
		if err != nil {
			t.Fatalf("OR of %d conditions: %v", k, err)
		}
		if want := min(k, 25); len(res.Rows) != want {
			t.Fatalf("OR of %d conditions: %d rows, want %d", k, len(res.Rows), want)
		}
	}

	err := users.PutRow(ctx, userKey(ids[0]), []tablekit.Column{{Name: "n", Value: tablekit.Integer(-1)}}, tablekit.IfMatch(wide(33)))
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "at most 32") {
		t.Fatalf("write condition of 33 conditions: %v, want ErrInvalidArgument naming the limit", err)
	}
	row, _, err := users.GetRow(ctx, userKey(ids[0]))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := row.Get("n"); !v.Equal(tablekit.Integer(0)) {
		t.Fatalf("a refused write changed the row: n = %#v", v)
	}
	if err := users.PutRow(ctx, userKey(ids[0]), []tablekit.Column{{Name: "n", Value: tablekit.Integer(0)}}, tablekit.IfMatch(wide(32))); err != nil {
		t.Fatalf("write condition of 32 conditions: %v", err)
	}
}
