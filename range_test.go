package tablekit_test

import (
	"context"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

type countingBackend struct {
	*localengine.Engine
	ranges int
}

func (c *countingBackend) GetRange(ctx context.Context, req *tablekit.GetRangeRequest) (*tablekit.GetRangeResponse, error) {
	c.ranges++
	return c.Engine.GetRange(ctx, req)
}

// A resumed full page costs one backend call, not a page plus one row.
func TestResumedPageIsOneBackendCall(t *testing.T) {
	ctx := context.Background()
	b := &countingBackend{Engine: localengine.New()}
	db := tablekit.NewClient(b)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	tbl := db.Table("t")
	const n = 2*tablekit.MaxPageRows + 10
	for lo := 0; lo < n; lo += tablekit.MaxBatchWrite {
		var ws []tablekit.BatchWrite
		for i := lo; i < min(n, lo+tablekit.MaxBatchWrite); i++ {
			ws = append(ws, tablekit.BatchPut("t", tablekit.Key("id", tablekit.Integer(int64(i))), nil))
		}
		if _, err := db.BatchWriteRow(ctx, ws); err != nil {
			t.Fatal(err)
		}
	}
	start, end := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
	var token []byte
	total := 0
	for page := 0; ; page++ {
		b.ranges = 0
		opts := []tablekit.RangeOption{}
		if token != nil {
			opts = append(opts, tablekit.ResumeFrom(token))
		}
		res, err := tbl.GetRange(ctx, start, end, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if b.ranges != 1 {
			t.Errorf("page %d took %d backend calls, want 1", page, b.ranges)
		}
		if first := res.Rows[0].Key[0].Value; first != tablekit.Integer(int64(total)) {
			t.Fatalf("page %d starts at %v, want %d", page, first, total)
		}
		total += len(res.Rows)
		if res.Next == nil {
			break
		}
		token = res.Next
	}
	if total != n {
		t.Fatalf("read %d rows, want %d", total, n)
	}
}
