package conformance

import (
	"errors"
	"math"
	"math/rand/v2"

	tk "github.com/tablekit/tablekit"
)

// SPEC §4: primary keys and the order of rows. Every expected order is
// computed by the suite's own comparator (helpers.go), never by tablekit's.

func keyOrderCases() []testCase {
	return []testCase{
		{"NegativeIntegers", testOrderIntegers},
		{"Strings", testOrderStrings},
		{"Binary", testOrderBinary},
		{"MultiColumn", testOrderMultiColumn},
		{"InfBounds", testOrderInfBounds},
	}
}

func keySchemaCases() []testCase {
	return []testCase{
		{"Mismatch", testKeySchemaMismatch},
	}
}

// writeKeys writes one row per key, in a shuffled order, each with column
// "i" holding the key's index.
func (e *env) writeKeys(t tbl, keys []tk.PrimaryKey) {
	e.t.Helper()
	rows := make([]tk.Row, len(keys))
	for i, k := range keys {
		rows[i] = row(k, col("i", tk.Integer(int64(i)), 0))
	}
	r := rand.New(rand.NewPCG(uint64(len(keys)), 7))
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	e.seedBatch(t, rows)
}

// checkRange reads a range to its end and compares its keys with the
// suite's expectation.
func (e *env) checkRange(what string, t tbl, keys []tk.PrimaryKey, start, end tk.PrimaryKey, backward bool) {
	e.t.Helper()
	var opts []tk.RangeOption
	dir := "forward"
	if backward {
		opts = append(opts, tk.Backward())
		dir = "backward"
	}
	rows, ok := e.rangeAll(what, t, start, end, opts...)
	if !ok {
		return
	}
	want := viewKeys(expectedRange(keys, start, end, backward))
	e.diff(what+" "+dir+" from "+fmtKey(start)+" to "+fmtKey(end), want, rowKeys(rows))
}

// checkFull reads the whole table both ways.
func (e *env) checkFull(what string, t tbl, keys []tk.PrimaryKey) {
	e.t.Helper()
	e.checkRange(what, t, keys, t.lo(), t.hi(), false)
	e.checkRange(what, t, keys, t.hi(), t.lo(), true)
}

func testOrderIntegers(e *env) {
	t := e.create("ints", schemaI, tk.TableOptions{})
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 32, -256, -255, -2, -1, 0, 1, 2, 255, 256, 1 << 32,
		math.MaxInt64 - 1, math.MaxInt64}
	var keys []tk.PrimaryKey
	for _, v := range vals {
		keys = append(keys, intKey(v))
	}
	e.writeKeys(t, keys)
	e.checkFull("integers", t, keys)
	for _, r := range [][2]int64{{-1, 1}, {0, 2}, {math.MinInt64, math.MaxInt64}, {-256, 256}, {-3, -1}} {
		e.checkRange("integers", t, keys, intKey(r[0]), intKey(r[1]), false)
		e.checkRange("integers", t, keys, intKey(r[1]), intKey(r[0]), true)
	}
	e.checkRange("integers", t, keys, intKey(0), t.hi(), false)
	e.checkRange("integers", t, keys, intKey(0), t.lo(), true)
	e.checkRange("integers", t, keys, t.lo(), intKey(math.MinInt64+1), false)
	e.checkRange("integers", t, keys, t.hi(), intKey(math.MaxInt64-1), true)
}

func testOrderStrings(e *env) {
	t := e.create("strs", schemaS, tk.TableOptions{})
	vals := []string{"", "\x00", "\x01", "A", "Z", "_", "a", "a\x00", "a\x00\x00", "a\x01", "aa", "ab", "b",
		"\x7f", "é", "é\x00", "ÿ", "\u0800", "\uffff", "😀", "\U0010ffff", "a\x7f", "aé"}
	var keys []tk.PrimaryKey
	for _, v := range vals {
		keys = append(keys, strKey(v))
	}
	e.writeKeys(t, keys)
	e.checkFull("strings", t, keys)
	for _, r := range [][2]string{{"a", "b"}, {"", "a"}, {"a\x00", "a\x01"}, {"a", "a\x00"}, {"\x7f", "\U0010ffff"}, {"Z", "a"}} {
		e.checkRange("strings", t, keys, strKey(r[0]), strKey(r[1]), false)
		e.checkRange("strings", t, keys, strKey(r[1]), strKey(r[0]), true)
	}
	e.checkRange("strings", t, keys, strKey(""), t.hi(), false)
	e.checkRange("strings", t, keys, strKey("a"), t.lo(), true)
	e.checkRange("strings", t, keys, t.hi(), strKey("é"), true)
}

func binKey(b ...byte) tk.PrimaryKey { return tk.Key("pk", tk.Binary(b)) }

func testOrderBinary(e *env) {
	t := e.create("bins", tk.KeySchema{{Name: "pk", Type: tk.TypeBinary}}, tk.TableOptions{})
	keys := []tk.PrimaryKey{binKey(), binKey(0), binKey(0, 0), binKey(0, 0xff), binKey(0, 1), binKey(1), binKey(0x7f),
		binKey(0x80), binKey(0xfe, 0xff), binKey(0xff), binKey(0xff, 0), binKey(0xff, 0xff), binKey(0xff, 0xff, 0xff),
		binKey('a'), binKey('a', 0)}
	e.writeKeys(t, keys)
	e.checkFull("binary", t, keys)
	for _, r := range [][2]tk.PrimaryKey{{binKey(0xff), binKey(0xff, 0xff, 0xff)}, {binKey(), binKey(0, 1)}, {binKey(0), binKey(0x80)}} {
		e.checkRange("binary", t, keys, r[0], r[1], false)
		e.checkRange("binary", t, keys, r[1], r[0], true)
	}
	e.checkRange("binary", t, keys, binKey(0xff), t.hi(), false)
	e.checkRange("binary", t, keys, binKey(), t.lo(), true)
}

var schema3 = tk.KeySchema{{Name: "a", Type: tk.TypeString}, {Name: "b", Type: tk.TypeInteger}, {Name: "c", Type: tk.TypeBinary}}

func key3(a string, b int64, c []byte) tk.PrimaryKey {
	return tk.Key("a", tk.String(a)).Add("b", tk.Integer(b)).Add("c", tk.Binary(c))
}

// testOrderMultiColumn: order is lexicographic over the columns, so a
// String column's prefix rule must not leak into the next column.
func testOrderMultiColumn(e *env) {
	t := e.create("multi", schema3, tk.TableOptions{})
	var keys []tk.PrimaryKey
	for _, a := range []string{"", "a", "a\x00", "b"} {
		for _, b := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
			for _, c := range [][]byte{{}, {0}, {0xff}} {
				keys = append(keys, key3(a, b, c))
			}
		}
	}
	e.writeKeys(t, keys)
	e.checkFull("3 columns", t, keys)
	pairs := [][2]tk.PrimaryKey{
		{key3("a", 0, nil), key3("a\x00", -1, []byte{0xff})},
		{key3("", math.MaxInt64, []byte{0xff}), key3("a", math.MinInt64, []byte{0})},
		{key3("a", -1, []byte{0}), key3("a", 0, []byte{0})},
	}
	for _, p := range pairs {
		e.checkRange("3 columns", t, keys, p[0], p[1], false)
		e.checkRange("3 columns", t, keys, p[1], p[0], true)
	}
}

var schema4 = tk.KeySchema{{Name: "a", Type: tk.TypeString}, {Name: "b", Type: tk.TypeInteger}, {Name: "c", Type: tk.TypeBinary}, {Name: "d", Type: tk.TypeString}}

func key4(a string, b int64, c []byte, d string) tk.PrimaryKey {
	return key3(a, b, c).Add("d", tk.String(d))
}

// withInf returns k with column p set to inf and the columns after it set
// to fill (nil: keep k's values).
func withInf(k tk.PrimaryKey, p int, inf tk.Value, fill *tk.Value) tk.PrimaryKey {
	out := k.Clone()
	out[p].Value = inf
	if fill != nil {
		for i := p + 1; i < len(out); i++ {
			out[i].Value = *fill
		}
	}
	return out
}

// testOrderInfBounds: InfMin and InfMax in every position of a 4-column key,
// followed by values or by the other infinity, in both directions.
func testOrderInfBounds(e *env) {
	t := e.create("inf", schema4, tk.TableOptions{})
	var keys []tk.PrimaryKey
	for _, a := range []string{"", "a", "b"} {
		for _, b := range []int64{-1, 0, 1} {
			for _, c := range [][]byte{{}, {0xff}} {
				for _, d := range []string{"", "z"} {
					keys = append(keys, key4(a, b, c, d))
				}
			}
		}
	}
	e.writeKeys(t, keys)
	mid := key4("a", 0, []byte{0xff}, "")
	infMin, infMax := tk.InfMin, tk.InfMax
	for p := range len(schema4) {
		// The rows sharing mid's first p columns, with values after the infinity...
		e.checkRange("group", t, keys, withInf(mid, p, infMin, nil), withInf(mid, p, infMax, nil), false)
		e.checkRange("group", t, keys, withInf(mid, p, infMax, nil), withInf(mid, p, infMin, nil), true)
		// ...and with the opposite infinity after it, which must not matter.
		e.checkRange("group", t, keys, withInf(mid, p, infMin, &infMax), withInf(mid, p, infMax, &infMin), false)
		e.checkRange("group", t, keys, withInf(mid, p, infMax, &infMin), withInf(mid, p, infMin, &infMax), true)
		// From a stored key to the group's edge.
		e.checkRange("to the group's end", t, keys, key4("", 1, nil, "z"), withInf(mid, p, infMax, nil), false)
		e.checkRange("to the group's start", t, keys, key4("b", -1, nil, ""), withInf(mid, p, infMin, &infMax), true)
		if p == 0 {
			continue
		}
		// Everything after the group, and everything before it.
		e.checkRange("after the group", t, keys, withInf(mid, p, infMax, nil), t.hi(), false)
		e.checkRange("before the group", t, keys, withInf(mid, p, infMin, nil), t.lo(), true)
	}
}

// testKeySchemaMismatch: a key that does not match the schema (count, names,
// order, types, infinities) is refused on every operation with
// ErrInvalidArgument (tablekit's ErrInvalidPrimaryKey), naming the key, and
// nothing is written.
func testKeySchemaMismatch(e *env) {
	schema := tk.KeySchema{{Name: "pk", Type: tk.TypeString}, {Name: "sk", Type: tk.TypeInteger}}
	t := e.create("schema", schema, tk.TableOptions{})
	good := tk.Key("pk", tk.String("s")).Add("sk", tk.Integer(1))
	e.put(t, good, col("c", tk.Integer(1), 0))
	before := e.scan("before", t, allVersions)

	bad := []struct {
		what    string
		key     tk.PrimaryKey
		mention string
		inBound bool // also refused as a range bound
	}{
		{"too few columns", tk.Key("pk", tk.String("a")), "pk", true},
		{"too many columns", tk.Key("pk", tk.String("a")).Add("sk", tk.Integer(1)).Add("x", tk.Integer(1)), "x", true},
		{"no columns", tk.PrimaryKey{}, "", true},
		{"wrong name", tk.Key("pk", tk.String("a")).Add("SK", tk.Integer(1)), "SK", true},
		{"wrong order", tk.Key("sk", tk.Integer(1)).Add("pk", tk.String("a")), "sk", true},
		{"Integer for String", tk.Key("pk", tk.Integer(1)).Add("sk", tk.Integer(1)), "pk", true},
		{"String for Integer", tk.Key("pk", tk.String("a")).Add("sk", tk.String("1")), "sk", true},
		{"Binary for String", tk.Key("pk", tk.Binary([]byte("a"))).Add("sk", tk.Integer(1)), "pk", true},
		{"Double in key", tk.Key("pk", tk.String("a")).Add("sk", tk.Double(1)), "sk", true},
		{"zero Value", tk.Key("pk", tk.Value{}).Add("sk", tk.Integer(1)), "pk", true},
		{"InfMin stored", tk.Key("pk", tk.String("a")).Add("sk", tk.InfMin), "sk", false},
		{"InfMax stored", tk.Key("pk", tk.InfMax).Add("sk", tk.Integer(1)), "pk", false},
	}
	n := t.Name()
	for _, b := range bad {
		check := func(op string, err error) {
			e.t.Helper()
			what := b.what + ": " + op
			if e.wantErr(what, err, tk.ErrInvalidArgument, n, b.mention) && !errors.Is(err, tk.ErrInvalidPrimaryKey) {
				e.t.Errorf("%s: error %q does not match tablekit.ErrInvalidPrimaryKey", what, err)
			}
		}
		check("PutRow", e.safe(b.what, func() error { return t.PutRow(e.ctx, b.key, []tk.Column{col("c", tk.Integer(2), 0)}) }))
		check("PutRow key-only", e.safe(b.what, func() error { return t.PutRow(e.ctx, b.key, nil) }))
		check("UpdateRow", e.safe(b.what, func() error {
			_, err := t.UpdateRow(e.ctx, b.key, []tk.Change{tk.Put("c", tk.Integer(2))})
			return err
		}))
		check("DeleteRow", e.safe(b.what, func() error { return t.DeleteRow(e.ctx, b.key) }))
		check("GetRow", e.safe(b.what, func() error { _, _, err := t.GetRow(e.ctx, b.key); return err }))
		check("BatchGetRow", e.safe(b.what, func() error {
			res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: n, Key: b.key}, {Table: n, Key: good}})
			if err != nil {
				return err
			}
			if !res[1].Found || res[1].Err != nil {
				e.t.Errorf("%s: BatchGetRow of the good key beside it: found=%v err=%v", b.what, res[1].Found, res[1].Err)
			}
			return res[0].Err
		}))
		check("BatchWriteRow", e.safe(b.what, func() error {
			res, err := e.c.BatchWriteRow(e.ctx, []tk.BatchWrite{tk.BatchPut(n, b.key, []tk.Column{col("c", tk.Integer(3), 0)})})
			if err != nil {
				return err
			}
			return res[0].Err
		}))
		if b.inBound {
			check("GetRange start", e.safe(b.what, func() error { _, err := t.GetRange(e.ctx, b.key, t.hi()); return err }))
			check("GetRange end", e.safe(b.what, func() error { _, err := t.GetRange(e.ctx, t.lo(), b.key); return err }))
		}
	}
	e.diff("table after refused keys", before, e.scan("after", t, allVersions))
}
