package fileengine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/localengine"
)

// TestIncarnationAsGiven: as the Backend contract says, CreateTable stores
// the Incarnation it is given and DescribeTable reports it, an empty one
// too (a caller other than the Client may give none), on the file engine
// (before and after it is opened again) as on the local engine. Tables
// without an Incarnation keep their rows apart, and one created again
// starts empty.
func TestIncarnationAsGiven(t *testing.T) {
	dir := t.TempDir()
	opts := tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}
	schema := tablekit.KeySchema{{Name: "id", Type: tablekit.TypeInteger}}
	meta := func(name, inc string) *tablekit.TableMeta {
		return &tablekit.TableMeta{Name: name, Key: schema, Options: opts, Incarnation: inc, Generation: 1}
	}
	describe := func(b tablekit.Backend, name, want string) *tablekit.TableMeta {
		t.Helper()
		m, err := b.DescribeTable(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Incarnation != want || m.Generation != 1 {
			t.Fatalf("%T: table %q reports Incarnation %q, Generation %d; want %q, 1", b, name, m.Incarnation, m.Generation, want)
		}
		return m
	}
	// rows returns the values of column v of the table's rows.
	rows := func(b tablekit.Backend, m *tablekit.TableMeta) []string {
		t.Helper()
		p, err := b.GetRange(ctx, &tablekit.GetRangeRequest{Meta: m, Start: tablekit.Key("id", tablekit.InfMin), End: tablekit.Key("id", tablekit.InfMax),
			Limit: 10, Read: tablekit.ReadSpec{MaxVersions: 1}, Now: 1})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range p.Rows {
			s, _ := r.Columns[0].Value.Str()
			out = append(out, s)
		}
		return out
	}
	check := func(b tablekit.Backend, name string, want ...string) {
		t.Helper()
		if got := rows(b, describe(b, name, "")); len(got) != len(want) || len(got) == 1 && got[0] != want[0] {
			t.Fatalf("%T: table %q holds %q, want %q", b, name, got, want)
		}
	}
	file, err := fileengine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []tablekit.Backend{localengine.New(), file} {
		for _, m := range []*tablekit.TableMeta{meta("given", "0123456789abcdef"), meta("e1", ""), meta("e2", "")} {
			if err := b.CreateTable(ctx, m); err != nil {
				t.Fatalf("%T: CreateTable %q: %v", b, m.Name, err)
			}
			describe(b, m.Name, m.Incarnation)
		}
		for _, name := range []string{"e1", "e2"} {
			w := &tablekit.WriteRequest{Meta: describe(b, name, ""), Kind: tablekit.WritePut, Key: tablekit.Key("id", tablekit.Integer(1)),
				Columns: []tablekit.Column{{Name: "v", Value: tablekit.String(name), Version: 1}}, Now: 1}
			if _, err := b.Write(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		check(b, "e1", "e1")
		check(b, "e2", "e2")
		if err := b.DeleteTable(ctx, "e1"); err != nil {
			t.Fatal(err)
		}
		if err := b.CreateTable(ctx, meta("e1", "")); err != nil {
			t.Fatal(err)
		}
		check(b, "e1")
		check(b, "e2", "e2")
	}
	// The file engine keeps all of it.
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	file, err = fileengine.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	describe(file, "given", "0123456789abcdef")
	check(file, "e1")
	check(file, "e2", "e2")
	// It refuses an Incarnation another table has: its rows would be the
	// other table's.
	err = file.CreateTable(ctx, meta("again", "0123456789abcdef"))
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("CreateTable with table %q's Incarnation: %v; want ErrInvalidArgument", "given", err)
	}
}
