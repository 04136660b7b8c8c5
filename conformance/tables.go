package conformance

import (
	"errors"
	"slices"
	"strings"
	"time"

	tk "github.com/tablekit/tablekit"
)

// SPEC §3: tables, their options, and the admin operations.

func tablesCases() []testCase {
	return []testCase{
		{"CreateDescribeDefaults", testCreateDescribeDefaults},
		{"CreateDescribeOptions", testCreateDescribeOptions},
		{"UpdateTable", testUpdateTable},
		{"ListTablesSorted", testListTablesSorted},
		{"DeleteTable", testDeleteTable},
		{"AlreadyExists", testAlreadyExists},
		{"MissingTable", testMissingTable},
		{"InvalidOptions", testInvalidOptions},
	}
}

var defaultOptions = tk.TableOptions{TTL: tk.NoExpiry, MaxVersions: 1, MaxVersionOffset: 86400 * time.Second}

// describeBoth checks DescribeTable through the case's client and through a
// client with an empty cache (so the backend itself must know the answer).
func (e *env) describeBoth(what string, want tk.TableMeta) {
	e.t.Helper()
	for _, c := range []*tk.Client{e.c, e.fresh()} {
		got, err := c.DescribeTable(e.ctx, want.Name)
		if e.ok(what+": DescribeTable", err) {
			// Which incarnation and generation: see testIncarnation.
			got.Incarnation, got.Generation = "", 0
			e.diff(what+": DescribeTable", want, got)
		}
	}
}

// testCreateDescribeDefaults: zero options take SPEC's defaults, and
// DescribeTable reports them.
func testCreateDescribeDefaults(e *env) {
	name := e.name("defaults")
	e.createNamed(name, schemaS, tk.TableOptions{})
	e.describeBoth("defaults", tk.TableMeta{Name: name, Key: schemaS, Options: defaultOptions})
}

// testCreateDescribeOptions: a 4-column key of every key type in a
// non-alphabetical order and explicit options come back exactly.
func testCreateDescribeOptions(e *env) {
	schema := tk.KeySchema{
		{Name: "z", Type: tk.TypeString},
		{Name: "a", Type: tk.TypeInteger},
		{Name: "m", Type: tk.TypeBinary},
		{Name: "b", Type: tk.TypeString},
	}
	for _, o := range []tk.TableOptions{
		{TTL: 86400 * time.Second, MaxVersions: 3, MaxVersionOffset: 100 * time.Second},
		{TTL: 10 * 365 * 86400 * time.Second, MaxVersions: 100, MaxVersionOffset: 1 * time.Second},
		{TTL: tk.NoExpiry, MaxVersions: 1, MaxVersionOffset: 7 * 86400 * time.Second},
	} {
		name := e.name("opts")
		e.createNamed(name, schema, o)
		e.describeBoth("options", tk.TableMeta{Name: name, Key: schema, Options: o})
	}
	name := e.name("onekey")
	e.createNamed(name, schemaI, tk.TableOptions{MaxVersions: 2})
	e.describeBoth("one option set", tk.TableMeta{Name: name, Key: schemaI,
		Options: tk.TableOptions{TTL: tk.NoExpiry, MaxVersions: 2, MaxVersionOffset: 86400 * time.Second}})
}

// testUpdateTable: each option changes alone; the others and the key stay.
func testUpdateTable(e *env) {
	schema := tk.KeySchema{{Name: "pk", Type: tk.TypeString}, {Name: "n", Type: tk.TypeInteger}}
	name := e.name("update")
	e.createNamed(name, schema, tk.TableOptions{})
	want := tk.TableMeta{Name: name, Key: schema, Options: defaultOptions}
	steps := []struct {
		what   string
		update tk.TableOptions
		apply  func(*tk.TableOptions)
	}{
		{"TTL", tk.TableOptions{TTL: 86400 * time.Second}, func(o *tk.TableOptions) { o.TTL = 86400 * time.Second }},
		{"MaxVersions", tk.TableOptions{MaxVersions: 5}, func(o *tk.TableOptions) { o.MaxVersions = 5 }},
		{"MaxVersionOffset", tk.TableOptions{MaxVersionOffset: 3600 * time.Second}, func(o *tk.TableOptions) { o.MaxVersionOffset = 3600 * time.Second }},
		{"TTL back to -1", tk.TableOptions{TTL: tk.NoExpiry}, func(o *tk.TableOptions) { o.TTL = tk.NoExpiry }},
		{"all three", tk.TableOptions{TTL: 2 * 86400 * time.Second, MaxVersions: 1, MaxVersionOffset: 1 * time.Second},
			func(o *tk.TableOptions) {
				*o = tk.TableOptions{TTL: 2 * 86400 * time.Second, MaxVersions: 1, MaxVersionOffset: 1 * time.Second}
			}},
	}
	for _, s := range steps {
		if !e.ok("UpdateTable "+s.what, e.c.UpdateTable(e.ctx, name, s.update)) {
			continue
		}
		s.apply(&want.Options)
		e.describeBoth("after UpdateTable "+s.what, want)
	}
}

// testListTablesSorted: ListTables lists every table once, sorted ascending
// by bytes.
func testListTablesSorted(e *env) {
	base := e.name("ls")
	var want []string
	for _, s := range []string{"b", "A", "_", "a", "a0", "B_"} {
		e.createNamed(base+"_"+s, schemaS, tk.TableOptions{})
		want = append(want, base+"_"+s)
	}
	slices.Sort(want) // base_A, base_B_, base__, base_a, base_a0, base_b
	for _, c := range []*tk.Client{e.c, e.fresh()} {
		listed, err := c.ListTables(e.ctx)
		if !e.ok("ListTables", err) {
			continue
		}
		if !slices.IsSorted(listed) {
			e.t.Errorf("ListTables is not sorted: %q", listed)
		}
		if len(slices.Compact(slices.Clone(listed))) != len(listed) {
			e.t.Errorf("ListTables lists a name twice: %q", listed)
		}
		var mine []string
		for _, n := range listed {
			if strings.HasPrefix(n, base+"_") {
				mine = append(mine, n)
			}
		}
		e.diff("ListTables (this case's tables)", want, mine)
	}
}

// testDeleteTable: a deleted table is gone for every client and operation,
// and a new table of that name starts empty with its own schema.
func testDeleteTable(e *env) {
	name := e.name("del")
	e.createNamed(name, schemaS, tk.TableOptions{})
	t := tbl{Table: e.c.Table(name), schema: schemaS}
	e.put(t, strKey("r"), col("a", tk.Integer(1), 0))
	// Clients that cached the table's schema before it was deleted must hear
	// of the deletion from the backend, and their writes must not bring the
	// table back.
	staleR, staleW := e.fresh(), e.fresh()
	for _, c := range []*tk.Client{staleR, staleW} {
		if _, found, err := c.Table(name).GetRow(e.ctx, strKey("r")); !e.ok("GetRow", err) || !found {
			e.t.Fatalf("GetRow before DeleteTable: found=%v", found)
		}
	}

	e.ok("DeleteTable", e.c.DeleteTable(e.ctx, name))
	_, err := e.c.DescribeTable(e.ctx, name)
	e.wantErr("DescribeTable after delete", err, tk.ErrTableNotFound, name)
	listed, err := e.c.ListTables(e.ctx)
	if e.ok("ListTables", err) && slices.Contains(listed, name) {
		e.t.Errorf("ListTables still lists deleted table %q", name)
	}
	_, _, err = t.GetRow(e.ctx, strKey("r"))
	e.wantErr("GetRow after delete", err, tk.ErrTableNotFound, name)
	_, _, err = staleR.Table(name).GetRow(e.ctx, strKey("r"))
	e.wantErr("GetRow through a client with a stale cache", err, tk.ErrTableNotFound, name)
	_, err = staleR.Table(name).GetRange(e.ctx, tk.Key("pk", tk.InfMin), tk.Key("pk", tk.InfMax))
	e.wantErr("GetRange through a client with a stale cache", err, tk.ErrTableNotFound, name)
	err = staleW.Table(name).PutRow(e.ctx, strKey("r"), []tk.Column{col("a", tk.Integer(1), 0)})
	e.wantErr("PutRow through a client with a stale cache", err, tk.ErrTableNotFound, name)
	e.wantErr("DeleteTable again", e.c.DeleteTable(e.ctx, name), tk.ErrTableNotFound, name)
	_, err = e.c.DescribeTable(e.ctx, name)
	e.wantErr("DescribeTable after the stale writes", err, tk.ErrTableNotFound, name)

	// Recreate with another schema: empty, new schema.
	schema2 := tk.KeySchema{{Name: "id", Type: tk.TypeInteger}}
	e.must("CreateTable again", e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: schema2, Options: tk.TableOptions{MaxVersions: 2}}))
	e.describeBoth("recreated", tk.TableMeta{Name: name, Key: schema2,
		Options: tk.TableOptions{TTL: tk.NoExpiry, MaxVersions: 2, MaxVersionOffset: 86400 * time.Second}})
	t2 := tbl{Table: e.c.Table(name), schema: schema2}
	e.expectScan("recreated table", t2, nil)
	k := tk.Key("id", tk.Integer(1))
	e.ok("PutRow in recreated table", t2.PutRow(e.ctx, k, []tk.Column{col("a", tk.Integer(2), 0)}))
	w := e.want(k, col("a", tk.Integer(2), 0))
	e.expectScan("recreated table", t2, []rowView{w})
}

// testAlreadyExists: creating an existing name fails and changes nothing.
func testAlreadyExists(e *env) {
	name := e.name("exists")
	e.createNamed(name, schemaS, tk.TableOptions{MaxVersions: 2})
	t := tbl{Table: e.c.Table(name), schema: schemaS}
	e.put(t, strKey("r"), col("a", tk.Integer(1), 0))
	for _, m := range []tk.TableMeta{
		{Name: name, Key: schemaS, Options: tk.TableOptions{MaxVersions: 2}},
		{Name: name, Key: schemaI, Options: tk.TableOptions{TTL: 86400 * time.Second, MaxVersions: 5}},
	} {
		e.wantErr("CreateTable of an existing name", e.c.CreateTable(e.ctx, m), tk.ErrAlreadyExists, name)
		e.wantErr("CreateTable of an existing name (fresh client)", e.fresh().CreateTable(e.ctx, m), tk.ErrAlreadyExists, name)
	}
	e.describeBoth("after refused CreateTable", tk.TableMeta{Name: name, Key: schemaS,
		Options: tk.TableOptions{TTL: tk.NoExpiry, MaxVersions: 2, MaxVersionOffset: 86400 * time.Second}})
	w := e.want(strKey("r"), col("a", tk.Integer(1), 0))
	e.expectScan("rows after refused CreateTable", t, []rowView{w})
}

// testMissingTable: every operation on a table that does not exist fails
// with ErrTableNotFound naming it, and creates nothing.
func testMissingTable(e *env) {
	name := e.name("missing")
	other := e.create("present", schemaS, tk.TableOptions{})
	e.put(other, strKey("r"), col("a", tk.Integer(1), 0))
	t := e.c.Table(name)
	k := strKey("r")
	nf := func(what string, err error) { e.t.Helper(); e.wantErr(what, err, tk.ErrTableNotFound, name) }

	_, err := e.c.DescribeTable(e.ctx, name)
	nf("DescribeTable", err)
	nf("UpdateTable", e.c.UpdateTable(e.ctx, name, tk.TableOptions{TTL: 86400 * time.Second}))
	nf("DeleteTable", e.c.DeleteTable(e.ctx, name))
	nf("PutRow", t.PutRow(e.ctx, k, []tk.Column{col("a", tk.Integer(1), 0)}))
	nf("PutRow key-only", t.PutRow(e.ctx, k, nil))
	_, err = t.UpdateRow(e.ctx, k, []tk.Change{tk.Increment("a", 1)})
	nf("UpdateRow", err)
	nf("DeleteRow", t.DeleteRow(e.ctx, k))
	_, _, err = t.GetRow(e.ctx, k)
	nf("GetRow", err)
	_, err = t.GetRange(e.ctx, tk.Key("pk", tk.InfMin), tk.Key("pk", tk.InfMax))
	nf("GetRange", err)
	var rowsErr error
	for _, err := range t.Rows(e.ctx, tk.Key("pk", tk.InfMin), tk.Key("pk", tk.InfMax)) {
		rowsErr = err
		break
	}
	nf("Rows", rowsErr)

	gets, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: other.Name(), Key: k}, {Table: name, Key: k}})
	if e.ok("BatchGetRow", err) && len(gets) == 2 {
		e.ok("BatchGetRow on the present table", gets[0].Err)
		if !gets[0].Found {
			e.t.Errorf("BatchGetRow on the present table: row not found")
		}
		nf("BatchGetRow on the missing table", gets[1].Err)
	}
	writes, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{
		tk.BatchPut(name, k, nil),
		tk.BatchUpdate(other.Name(), k, []tk.Change{tk.Put("b", tk.Integer(2))}),
		tk.BatchUpdate(name, strKey("s"), []tk.Change{tk.Put("b", tk.Integer(2))}),
		tk.BatchDelete(name, strKey("t")),
	})
	if e.ok("BatchWriteRow", err) && len(writes) == 4 {
		nf("BatchWriteRow put", writes[0].Err)
		e.ok("BatchWriteRow on the present table", writes[1].Err)
		nf("BatchWriteRow update", writes[2].Err)
		nf("BatchWriteRow delete", writes[3].Err)
	}
	w := e.want(k, col("a", tk.Integer(1), 0), col("b", tk.Integer(2), 0))
	e.expectRow("present table", other, k, &w)

	_, err = e.c.DescribeTable(e.ctx, name)
	nf("DescribeTable at the end (nothing created it)", err)
	listed, err := e.c.ListTables(e.ctx)
	if e.ok("ListTables", err) && slices.Contains(listed, name) {
		e.t.Errorf("ListTables lists %q, which was never created", name)
	}
}

// testInvalidOptions: bad schemas and option values are refused with
// ErrInvalidArgument, and nothing is created or changed.
func testInvalidOptions(e *env) {
	cases := []struct {
		what    string
		key     tk.KeySchema
		opts    tk.TableOptions
		mention string
	}{
		{"TTL 86399", schemaS, tk.TableOptions{TTL: 86399 * time.Second}, "86400"},
		{"TTL 1", schemaS, tk.TableOptions{TTL: 1 * time.Second}, "TTL"},
		{"TTL -2", schemaS, tk.TableOptions{TTL: -2 * time.Second}, "TTL"},
		{"MaxVersions -1", schemaS, tk.TableOptions{MaxVersions: -1}, "MaxVersions"},
		{"MaxVersionOffset -1", schemaS, tk.TableOptions{MaxVersionOffset: -1 * time.Second}, "MaxVersionOffset"},
		{"no key", nil, tk.TableOptions{}, ""},
		{"5 key columns", tk.KeySchema{{Name: "a", Type: tk.TypeString}, {Name: "b", Type: tk.TypeString}, {Name: "c", Type: tk.TypeString}, {Name: "d", Type: tk.TypeString}, {Name: "e", Type: tk.TypeString}}, tk.TableOptions{}, "4"},
		{"Double key", tk.KeySchema{{Name: "dk", Type: tk.TypeDouble}}, tk.TableOptions{}, "dk"},
		{"Boolean key", tk.KeySchema{{Name: "pk", Type: tk.TypeString}, {Name: "bk", Type: tk.TypeBoolean}}, tk.TableOptions{}, "bk"},
		{"zero type", tk.KeySchema{{Name: "zk", Type: 0}}, tk.TableOptions{}, "zk"},
		{"unknown type", tk.KeySchema{{Name: "uk", Type: 99}}, tk.TableOptions{}, "uk"},
		{"duplicate key names", tk.KeySchema{{Name: "dup", Type: tk.TypeString}, {Name: "dup", Type: tk.TypeInteger}}, tk.TableOptions{}, "dup"},
	}
	var names []string
	for _, c := range cases {
		name := e.name("badopt")
		names = append(names, name)
		err := e.safe(c.what, func() error {
			return e.c.CreateTable(e.ctx, tk.TableMeta{Name: name, Key: c.key, Options: c.opts})
		})
		e.wantErr("CreateTable with "+c.what, err, tk.ErrInvalidArgument, name, c.mention)
	}
	for _, name := range names {
		if _, err := e.c.DescribeTable(e.ctx, name); !errors.Is(err, tk.ErrTableNotFound) {
			e.t.Errorf("DescribeTable of refused table %q: got %v, want ErrTableNotFound", name, err)
		}
	}

	name := e.name("upd")
	e.createNamed(name, schemaS, tk.TableOptions{TTL: 86400 * time.Second, MaxVersions: 2})
	for _, c := range []struct {
		what    string
		opts    tk.TableOptions
		mention string
	}{
		{"TTL 86399", tk.TableOptions{TTL: 86399 * time.Second}, "86400"},
		{"TTL -2", tk.TableOptions{TTL: -2 * time.Second}, "TTL"},
		{"MaxVersions -1", tk.TableOptions{MaxVersions: -1}, "MaxVersions"},
		{"MaxVersionOffset -5", tk.TableOptions{MaxVersionOffset: -5 * time.Second}, "MaxVersionOffset"},
	} {
		e.wantErr("UpdateTable with "+c.what, e.c.UpdateTable(e.ctx, name, c.opts), tk.ErrInvalidArgument, name, c.mention)
	}
	e.describeBoth("after refused UpdateTable", tk.TableMeta{Name: name, Key: schemaS,
		Options: tk.TableOptions{TTL: 86400 * time.Second, MaxVersions: 2, MaxVersionOffset: 86400 * time.Second}})
}
