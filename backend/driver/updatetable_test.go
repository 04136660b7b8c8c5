package driver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

func TestCheckUpdateTable(t *testing.T) {
	stored := &tablekit.TableMeta{Name: "orders", Incarnation: "a1", Generation: 3}
	for _, c := range []struct {
		inc  string
		gen  int64
		want error
	}{
		{"a1", 3, nil},
		{"b2", 3, tablekit.ErrTableNotFound},
		{"b2", 2, tablekit.ErrTableNotFound}, // the incarnation first
		{"a1", 2, tablekit.ErrConditionFailed},
		{"a1", 4, tablekit.ErrConditionFailed},
	} {
		req := &tablekit.UpdateTableRequest{Meta: &tablekit.TableMeta{Name: "orders", Incarnation: c.inc, Generation: c.gen}}
		err := driver.CheckUpdateTable(stored, req)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("incarnation %s generation %d: %v, want nil", c.inc, c.gen, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("incarnation %s generation %d: %v, want %v", c.inc, c.gen, err, c.want)
		case c.want != nil && !strings.Contains(err.Error(), `"orders"`):
			t.Errorf("incarnation %s generation %d: %v does not name the table", c.inc, c.gen, err)
		}
	}
}
