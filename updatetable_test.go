package tablekit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// recreating is a local engine whose UpdateTable first deletes the table
// and creates it again (a new incarnation), once, as another client may do
// between the Client's DescribeTable and its UpdateTable.
type recreating struct {
	*localengine.Engine
	name    string // the table
	deleted bool   // delete only, do not create again
	done    bool
	calls   int
}

func (r *recreating) UpdateTable(ctx context.Context, req *tablekit.UpdateTableRequest) (*tablekit.TableMeta, error) {
	r.calls++
	if !r.done {
		r.done = true
		cur, err := r.Engine.DescribeTable(ctx, r.name)
		if err != nil {
			return nil, err
		}
		if err := r.Engine.DeleteTable(ctx, r.name); err != nil {
			return nil, err
		}
		if !r.deleted {
			m := *cur
			m.Incarnation, m.Generation = "second", 1
			if err := r.Engine.CreateTable(ctx, &m); err != nil {
				return nil, err
			}
		}
	}
	return r.Engine.UpdateTable(ctx, req)
}

// TestUpdateTableAfterRecreate: a table deleted and created again while
// UpdateTable runs gets the options (the call is ordered after the new
// table's creation); a table deleted for good is ErrTableNotFound.
func TestUpdateTableAfterRecreate(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		ctx := context.Background()
		meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "k", Type: tablekit.TypeInteger}}}
		b := &recreating{Engine: localengine.New(), name: meta.Name, deleted: deleted}
		db := tablekit.NewClient(b)
		if err := db.CreateTable(ctx, meta); err != nil {
			t.Fatal(err)
		}
		err := db.UpdateTable(ctx, "t", tablekit.TableOptions{MaxVersions: 4})
		if deleted {
			if !errors.Is(err, tablekit.ErrTableNotFound) {
				t.Errorf("deleted table: UpdateTable = %v, want ErrTableNotFound", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("recreated table: UpdateTable = %v, want success on the new table", err)
		}
		m, err := db.DescribeTable(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if m.Incarnation != "second" || m.Options.MaxVersions != 4 {
			t.Errorf("after UpdateTable: incarnation %q, MaxVersions %d; want the new table (second) with 4", m.Incarnation, m.Options.MaxVersions)
		}
		if b.calls != 2 {
			t.Errorf("%d UpdateTable calls reached the backend, want 2 (the stale one, then the retry)", b.calls)
		}
		db.Close()
	}
}
