package driver_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

func TestCounterFloors(t *testing.T) {
	var f driver.CounterFloors
	if f.Covers("a", 1) {
		t.Fatal("an unknown counter is covered")
	}
	f.Saw("a", 10)
	f.Saw("a", 5) // a counter never goes back: the floor stays 10
	if !f.Covers("a", 10) || !f.Covers("a", 3) || f.Covers("a", 11) || f.Covers("b", 1) {
		t.Errorf("floors after 10 then 5: covers(10)=%v covers(3)=%v covers(11)=%v covers(b,1)=%v",
			f.Covers("a", 10), f.Covers("a", 3), f.Covers("a", 11), f.Covers("b", 1))
	}
}

func TestRealAutoIncrement(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}}
	key := func(v tablekit.Value) tablekit.PrimaryKey { return tablekit.Key("p", tablekit.String("a")).Add("s", v) }
	for _, tc := range []struct {
		kind tablekit.WriteKind
		s    tablekit.Value
		want int64
		ok   bool
	}{
		{tablekit.WritePut, tablekit.Integer(7), 7, true},
		{tablekit.WriteUpdate, tablekit.Integer(7), 7, true},
		{tablekit.WriteDelete, tablekit.Integer(7), 0, false},
		{tablekit.WritePut, tablekit.Integer(0), 0, false},
		{tablekit.WritePut, tablekit.Integer(-3), 0, false},
		{tablekit.WritePut, tablekit.AutoIncrement, 0, false},
	} {
		v, ok := driver.RealAutoIncrement(&tablekit.WriteRequest{Meta: meta, Kind: tc.kind, Key: key(tc.s)})
		if ok != tc.ok || (ok && v != tc.want) {
			t.Errorf("%v %v: %d, %v; want %d, %v", tc.kind, tc.s, v, ok, tc.want, tc.ok)
		}
	}
	err := driver.AutoIncrementExhausted("t", key(tablekit.Integer(1)))
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), `table "t"`) || !strings.Contains(err.Error(), "every auto-increment value") {
		t.Errorf("AutoIncrementExhausted: %v", err)
	}
}

func TestCounterFloorsRaise(t *testing.T) {
	meta := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "p", Type: tablekit.TypeString}, {Name: "s", Type: tablekit.TypeInteger, AutoIncrement: true}}}
	w := func(s int64) *tablekit.WriteRequest {
		return &tablekit.WriteRequest{Meta: meta, Kind: tablekit.WritePut, Key: tablekit.Key("p", tablekit.String("a")).Add("s", tablekit.Integer(s))}
	}
	var f driver.CounterFloors
	var calls []int64
	raise := func(v int64) error { calls = append(calls, v); return nil }
	for _, s := range []int64{5, 3, 5, 9} {
		if err := f.Raise(w(s), "a", raise); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(calls) != "[5 9]" {
		t.Errorf("raised %v, want [5 9]: a counter known to be at 5 needs no raise for 3 or 5", calls)
	}
	failed := errors.New("store down")
	if err := f.Raise(w(20), "a", func(int64) error { return failed }); err != failed || f.Covers("a", 20) {
		t.Errorf("a failed raise: %v, covers 20: %v; want the error and no floor", err, f.Covers("a", 20))
	}
}
