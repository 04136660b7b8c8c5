package tablekit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// TTL and MaxVersionOffset are durations of whole seconds: a fraction is
// refused, naming the option, in CreateTable and UpdateTable alike.
func TestOptionsWholeSeconds(t *testing.T) {
	ctx := context.Background()
	db := tablekit.NewClient(localengine.New())
	defer db.Close()
	key := tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}
	for _, c := range []struct {
		opts tablekit.TableOptions
		name string
	}{
		{tablekit.TableOptions{TTL: 24*time.Hour + 500*time.Millisecond}, "TTL"},
		{tablekit.TableOptions{MaxVersionOffset: 90 * time.Minute / 7}, "MaxVersionOffset"},
	} {
		err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: key, Options: c.opts})
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), c.name+" ") || !strings.Contains(err.Error(), "whole number of seconds") {
			t.Errorf("CreateTable with %+v: %v, want ErrInvalidArgument naming %s and whole seconds", c.opts, err, c.name)
		}
	}
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: key, Options: tablekit.TableOptions{TTL: 48 * time.Hour}}); err != nil {
		t.Fatal(err)
	}
	err := db.UpdateTable(ctx, "t", tablekit.TableOptions{TTL: 72*time.Hour + time.Millisecond})
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "TTL") {
		t.Errorf("UpdateTable with a fractional TTL: %v", err)
	}
	m, err := db.DescribeTable(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := tablekit.TableOptions{TTL: 48 * time.Hour, MaxVersions: 1, MaxVersionOffset: tablekit.DefaultMaxVersionOffset}
	if m.Options != want {
		t.Errorf("options %+v, want %+v", m.Options, want)
	}
	if s := m.Options.TTLSeconds(); s != 172800 {
		t.Errorf("TTLSeconds = %d, want 172800", s)
	}
	if s := (tablekit.TableOptions{TTL: tablekit.NoExpiry}).TTLSeconds(); s != -1 {
		t.Errorf("NoExpiry is %d s, want -1", s)
	}
}

// PageSize bounds each backend call of GetRange; the answer is the same.
func TestGetRangePageSize(t *testing.T) {
	ctx := context.Background()
	b := &countingBackend{Engine: localengine.New()}
	db := tablekit.NewClient(b)
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}}); err != nil {
		t.Fatal(err)
	}
	var ws []tablekit.BatchWrite
	for i := range 25 {
		ws = append(ws, tablekit.BatchPut("t", tablekit.Key("id", tablekit.Integer(int64(i))), nil))
	}
	if _, err := db.BatchWriteRow(ctx, ws); err != nil {
		t.Fatal(err)
	}
	start, end := tablekit.Key("id", tablekit.InfMin), tablekit.Key("id", tablekit.InfMax)
	for _, c := range []struct {
		opts       []tablekit.RangeOption
		rows, most int
	}{
		{nil, 25, 1},
		{[]tablekit.RangeOption{tablekit.PageSize(10)}, 25, 3},
		{[]tablekit.RangeOption{tablekit.PageSize(10), tablekit.Limit(12)}, 12, 2},
	} {
		b.ranges = 0
		res, err := db.Table("t").GetRange(ctx, start, end, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != c.rows || b.ranges != c.most {
			t.Errorf("GetRange with %d options: %d rows in %d backend calls, want %d in %d", len(c.opts), len(res.Rows), b.ranges, c.rows, c.most)
		}
		for i, r := range res.Rows {
			if r.Key[0].Value != tablekit.Integer(int64(i)) {
				t.Fatalf("row %d has key %v", i, r.Key)
			}
		}
	}
	if _, err := db.Table("t").GetRange(ctx, start, end, tablekit.PageSize(tablekit.MaxPageRows+1)); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("PageSize above MaxPageRows: %v", err)
	}
}
