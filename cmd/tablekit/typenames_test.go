package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// The help says a cell is NAME=TYPE:VALUE: every command that parses a
// value (put --col, filters, keys) takes the type's full name, in any
// case, beside the short forms; an unknown type is still refused.
func TestValueTypeNames(t *testing.T) {
	for in, want := range map[string]tablekit.Value{
		"String:hat": tablekit.String("hat"), "string:hat": tablekit.String("hat"), "S:hat": tablekit.String("hat"),
		"Integer:42": tablekit.Integer(42), "INTEGER:-1": tablekit.Integer(-1), "I:7": tablekit.Integer(7),
		"Double:1.5": tablekit.Double(1.5), "Boolean:true": tablekit.Boolean(true), "BOOL:false": tablekit.Boolean(false),
		"Binary:00ff": tablekit.Binary([]byte{0, 0xff}), "B64:AP8=": tablekit.Binary([]byte{0, 0xff}),
		`String:"a:b"`: tablekit.String("a:b"),
	} {
		got, err := parseValue(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseValue(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"Str:hat", "hat", "Text:x"} {
		if _, err := parseValue(in); err == nil || !strings.Contains(err.Error(), "needs a type") {
			t.Errorf("parseValue(%q): %v, want a 'needs a type' error", in, err)
		}
	}
	c, err := parseColumn("name=String:hat@5")
	if err != nil || c.Name != "name" || !c.Value.Equal(tablekit.String("hat")) || c.Version != 5 {
		t.Errorf("parseColumn: %+v, %v", c, err)
	}
	m := &tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}, {Name: "n", Type: tablekit.TypeInteger}}}
	k, err := parseKey(m, "id=String:a,n=Integer:3", false, tablekit.Value{})
	if err != nil || !k.Equal(tablekit.Key("id", tablekit.String("a")).Add("n", tablekit.Integer(3))) {
		t.Errorf("parseKey with type names: %v, %v", k, err)
	}
	if _, err := parseKey(m, "id=Integer:1,n=3", false, tablekit.Value{}); err == nil || !strings.Contains(err.Error(), "is String, not Integer") {
		t.Errorf("parseKey with a disagreeing type name: %v", err)
	}
	if _, err := parseFilter("status == String:pending and total >= Integer:1000", nil); err != nil {
		t.Errorf("a filter with type names: %v", err)
	}
}

// put --col 'name=String:hat', as put --help shows a cell, is accepted.
func TestPutTypeNameCell(t *testing.T) {
	t.Parallel()
	u := fileURL(t)
	ok(t, u, "create", "t", "--key", "id:String")
	ok(t, u, "put", "t", "id=a", "--col", "name=String:hat", "--col", "n=integer:3")
	if got := ok(t, u, "get", "t", "id=a"); !strings.Contains(got, "hat") || !strings.Contains(got, "3") {
		t.Errorf("get after put with type names: %s", got)
	}
}

// A file:// store another process has open is refused with what to do:
// serve it with the emulator and use its URL.
func TestLockedFileStoreSaysServeIt(t *testing.T) {
	t.Parallel()
	u := fileURL(t)
	ok(t, u, "create", "t", "--key", "id:String")
	db, err := tablekit.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, args := range [][]string{{"ls"}, {"copy", u, fileURL(t)}} {
		r := tk(t, u, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "locked") || !strings.Contains(r.stderr, "tablestore-emulator -backend file://") {
			t.Errorf("tablekit %v on a store this process has open: %+v", args, r)
		}
	}
}
