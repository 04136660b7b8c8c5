package conformance

import (
	"errors"
	"slices"
	"strings"

	tk "github.com/tablekit/tablekit"
)

// SPEC §1: names.

func namesCases() []testCase {
	return []testCase{
		{"ValidTableNames", testValidTableNames},
		{"ValidColumnNames", testValidColumnNames},
		{"InvalidNames", testInvalidNames},
		{"AttributeNamedLikeKeyColumn", testAttrNamedLikeKey},
		{"CaseSensitive", testCaseSensitive},
		{"LongNamesDistinct", testLongNamesDistinct},
	}
}

// pad extends s with c to n bytes.
func pad(s string, n int, c byte) string { return s + strings.Repeat(string(c), n-len(s)) }

// testValidTableNames: a 255-byte name and 1- and 2-byte names (narrower
// than DynamoDB's minimum) are accepted and reported back exactly.
func testValidTableNames(e *env) {
	// Short names are shared by everyone using the store: take the first
	// candidate that does not exist yet.
	createFree := func(cands ...string) string {
		for _, c := range cands {
			err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: c, Key: schemaS})
			if errors.Is(err, tk.ErrAlreadyExists) {
				continue
			}
			e.must("CreateTable "+c, err)
			e.cleanupTable(c)
			return c
		}
		e.t.Fatalf("all of %q exist already", cands)
		return ""
	}
	long := pad(e.name("max"), 255, 'x')
	e.createNamed(long, schemaS, tk.TableOptions{})
	names := []string{long, createFree("Q", "_", "q", "Z", "z", "X"), createFree("Q_", "_9", "q9", "Zz", "x_")}
	for i, name := range names {
		m, err := e.c.DescribeTable(e.ctx, name)
		if e.ok("DescribeTable "+name, err) {
			e.diff("DescribeTable name", name, m.Name)
		}
		t := tbl{Table: e.c.Table(name), schema: schemaS}
		e.put(t, strKey("r"), col("n", tk.Integer(int64(i)), 0))
		w := e.want(strKey("r"), col("n", tk.Integer(int64(i)), 0))
		e.expectRow("table "+name, t, strKey("r"), &w)
	}
	listed, err := e.c.ListTables(e.ctx)
	e.must("ListTables", err)
	for _, name := range names {
		if !slices.Contains(listed, name) {
			e.t.Errorf("ListTables does not list %q", name)
		}
	}
	for _, name := range names {
		e.ok("DeleteTable "+name, e.c.DeleteTable(e.ctx, name))
		_, err := e.c.DescribeTable(e.ctx, name)
		e.wantErr("DescribeTable after DeleteTable", err, tk.ErrTableNotFound, name)
	}
}

// testValidColumnNames: 255-byte key and attribute names, and attribute
// names a backend might use for itself, all work and come back exactly.
func testValidColumnNames(e *env) {
	k1 := pad("K", 255, 'k')
	schema := tk.KeySchema{{Name: k1, Type: tk.TypeString}, {Name: "_k9", Type: tk.TypeInteger}}
	t := e.create("cols", schema, tk.TableOptions{})
	m, err := e.c.DescribeTable(e.ctx, t.Name())
	if e.ok("DescribeTable", err) {
		e.diff("DescribeTable key schema", schema, m.Key)
	}
	long := pad("A", 255, 'a')
	attrs := []string{long, "_", "__", "Z", "a1", "k", "K", "pk", "sk", "id", "key", "name", "size",
		"ttl", "TTL", "version", "ver", "v", "ts", "timestamp", "rev", "data", "value", "cells",
		"row", "shard", "expires", "select", "_marker", "_v"}
	key := tk.Key(k1, tk.String("r")).Add("_k9", tk.Integer(1))
	var cols []tk.Column
	for i, a := range attrs {
		cols = append(cols, col(a, tk.Integer(int64(i)), 0))
	}
	e.ok("PutRow with many names", t.PutRow(e.ctx, key, cols))
	w := e.want(key, cols...)
	e.expectRow("every attribute name", t, key, &w)

	_, err = t.UpdateRow(e.ctx, key, []tk.Change{tk.Put(long, tk.String("long")), tk.Put("ttl", tk.String("ttl"))})
	e.ok("UpdateRow", err)
	w = e.want(key, col(long, tk.String("long"), 0), col("ttl", tk.String("ttl"), 0))
	e.expectRow("projection of a 255-byte name", t, key, &w, tk.Columns("ttl", long))
	e.expectRow("filter on a 255-byte name", t, key, &w, tk.Columns("ttl", long),
		tk.WithFilter(tk.SingleColumnValue(long, tk.Equal, tk.String("long"))))
}

var invalidNames = []string{"", "1a", "9", "a-b", "a b", "a.b", "é", "aé", "a\x00", "-", " a", "a\n", "a$", "a/b",
	strings.Repeat("a", 256)}

// testInvalidNames: every kind of invalid name is refused wherever a name
// goes, with ErrInvalidArgument naming it, and nothing is created.
func testInvalidNames(e *env) {
	t := e.create("inv", schemaS, tk.TableOptions{})
	var badPK []string
	for _, bad := range invalidNames {
		what := "name " + truncName(bad) + ": "
		err := e.c.CreateTable(e.ctx, tk.TableMeta{Name: bad, Key: schemaS})
		e.wantErr(what+"CreateTable", err, tk.ErrInvalidArgument, bad)

		name := e.name("badpk")
		badPK = append(badPK, name)
		err = e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: tk.KeySchema{{Name: bad, Type: tk.TypeString}}})
		e.wantErr(what+"CreateTable key column", err, tk.ErrInvalidArgument, name, bad)

		err = t.PutRow(e.ctx, strKey("r"), []tk.Column{col(bad, tk.Integer(1), 0)})
		e.wantErr(what+"PutRow", err, tk.ErrInvalidArgument, t.Name(), bad)
		_, err = t.UpdateRow(e.ctx, strKey("r"), []tk.Change{tk.Put(bad, tk.Integer(1))})
		e.wantErr(what+"UpdateRow", err, tk.ErrInvalidArgument, t.Name(), bad)
		_, _, err = t.GetRow(e.ctx, strKey("r"), tk.Columns(bad))
		e.wantErr(what+"GetRow projection", err, tk.ErrInvalidArgument, t.Name(), bad)
		_, _, err = t.GetRow(e.ctx, strKey("r"), tk.WithFilter(tk.SingleColumnValue(bad, tk.Equal, tk.Integer(1))))
		e.wantErr(what+"GetRow filter", err, tk.ErrInvalidArgument, t.Name(), bad)
		_, _, err = e.c.Table(bad).GetRow(e.ctx, strKey("r"))
		e.wantErr(what+"GetRow on the table", err, tk.ErrInvalidArgument, bad)
		_, err = e.c.DescribeTable(e.ctx, bad)
		e.wantErr(what+"DescribeTable", err, tk.ErrInvalidArgument, bad)
	}
	e.expectScan("after invalid names", t, nil)
	listed, err := e.c.ListTables(e.ctx)
	e.must("ListTables", err)
	for _, n := range append(badPK, invalidNames...) {
		if slices.Contains(listed, n) {
			e.t.Errorf("ListTables lists %q, which was refused", n)
		}
	}
}

func truncName(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return "\"" + s + "\""
}

// testAttrNamedLikeKey: an attribute may not carry a key column's name.
func testAttrNamedLikeKey(e *env) {
	schema := tk.KeySchema{{Name: "pk", Type: tk.TypeString}, {Name: "sk", Type: tk.TypeInteger}}
	t := e.create("likekey", schema, tk.TableOptions{})
	key := tk.Key("pk", tk.String("r")).Add("sk", tk.Integer(1))
	n := t.Name()
	e.wantErr("PutRow column pk", t.PutRow(e.ctx, key, []tk.Column{col("pk", tk.String("x"), 0)}), tk.ErrInvalidArgument, n, "pk")
	e.wantErr("PutRow column sk", t.PutRow(e.ctx, key, []tk.Column{col("a", tk.Integer(1), 0), col("sk", tk.Integer(1), 0)}), tk.ErrInvalidArgument, n, "sk")
	for _, ch := range []tk.Change{tk.Put("sk", tk.Integer(1)), tk.Increment("pk", 1), tk.DeleteColumn("sk"), tk.DeleteVersion("pk", e.now())} {
		_, err := t.UpdateRow(e.ctx, key, []tk.Change{ch})
		e.wantErr("UpdateRow "+ch.Kind.String()+" "+ch.Column, err, tk.ErrInvalidArgument, n, ch.Column)
	}
	_, _, err := t.GetRow(e.ctx, key, tk.WithFilter(tk.SingleColumnValue("pk", tk.Equal, tk.String("r"))))
	e.wantErr("filter on pk", err, tk.ErrInvalidArgument, n, "pk")
	_, err = t.UpdateRow(e.ctx, key, []tk.Change{tk.Put("a", tk.Integer(1))}, tk.IfMatch(tk.SingleColumnValue("sk", tk.Equal, tk.Integer(1))))
	e.wantErr("condition on sk", err, tk.ErrInvalidArgument, n, "sk")
	res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchPut(n, key, []tk.Column{col("pk", tk.String("x"), 0)})})
	if e.ok("BatchWriteRow", err) && len(res) == 1 {
		e.wantErr("BatchWriteRow column pk", res[0].Err, tk.ErrInvalidArgument, n, "pk")
	}
	e.expectScan("after refused writes", t, nil)

	// Names differing from a key column only by case are other names.
	cols := []tk.Column{col("PK", tk.Integer(1), 0), col("Sk", tk.Integer(2), 0), col("sk_", tk.Integer(3), 0)}
	e.ok("PutRow PK, Sk, sk_", t.PutRow(e.ctx, key, cols))
	w := e.want(key, cols...)
	e.expectRow("case-different names", t, key, &w)
}

// testCaseSensitive: table and column names are case-sensitive, and columns
// come back in ascending byte order of their names.
func testCaseSensitive(e *env) {
	base := e.name("cs")
	n1, n2 := base+"_Ab", base+"_aB"
	e.createNamed(n1, schemaS, tk.TableOptions{})
	e.createNamed(n2, schemaS, tk.TableOptions{MaxVersions: 2})
	t1 := tbl{Table: e.c.Table(n1), schema: schemaS}
	t2 := tbl{Table: e.c.Table(n2), schema: schemaS}
	e.put(t1, strKey("r"), col("v", tk.Integer(1), 0))
	e.put(t2, strKey("r"), col("v", tk.Integer(2), 0))
	w1 := e.want(strKey("r"), col("v", tk.Integer(1), 0))
	w2 := e.want(strKey("r"), col("v", tk.Integer(2), 0))
	e.expectRow(n1, t1, strKey("r"), &w1)
	e.expectRow(n2, t2, strKey("r"), &w2)
	for _, n := range []string{n1, n2} {
		m, err := e.fresh().DescribeTable(e.ctx, n)
		if e.ok("DescribeTable "+n, err) {
			e.diff("DescribeTable name", n, m.Name)
		}
	}
	m2, err := e.c.DescribeTable(e.ctx, n2)
	if e.ok("DescribeTable", err) {
		e.diff("options of "+n2, 2, m2.Options.MaxVersions)
	}

	var cols []tk.Column
	for i, name := range []string{"b", "B", "_", "a1", "a", "A", "Z", "z", "a_", "aA"} {
		cols = append(cols, col(name, tk.Integer(int64(i)), 0))
	}
	e.put(t1, strKey("c"), cols...)
	w := e.want(strKey("c"), cols...) // sorted by byte order: A B Z _ a aA a1 a_ b z
	e.expectRow("columns in ascending byte order", t1, strKey("c"), &w)
}

// testLongNamesDistinct: names that differ only late (beyond any native
// length limit) or only by case are different tables.
func testLongNamesDistinct(e *env) {
	base := e.name("ld")
	names := []string{
		pad(base, 254, 'x') + "a",
		pad(base, 254, 'x') + "b",
		pad(base, 59, 'y') + "A",
		pad(base, 59, 'y') + "a",
	}
	for i, n := range names {
		e.createNamed(n, schemaS, tk.TableOptions{})
		e.put(tbl{Table: e.c.Table(n), schema: schemaS}, strKey("r"), col("i", tk.Integer(int64(i)), 0))
	}
	listed, err := e.c.ListTables(e.ctx)
	e.must("ListTables", err)
	for i, n := range names {
		if !slices.Contains(listed, n) {
			e.t.Errorf("ListTables does not list table %d (%d bytes)", i, len(n))
		}
		w := e.want(strKey("r"), col("i", tk.Integer(int64(i)), 0))
		e.expectRow("table "+n, tbl{Table: e.c.Table(n), schema: schemaS}, strKey("r"), &w)
		m, err := e.fresh().DescribeTable(e.ctx, n)
		if e.ok("DescribeTable", err) {
			e.diff("DescribeTable name", n, m.Name)
		}
	}
}
