package conformance

import (
	"math"
	"math/rand/v2"

	tk "github.com/tablekit/tablekit"
)

// SPEC §2: types and values. A value keeps its type and its exact contents.

func typesCases() []testCase {
	return []testCase{
		{"AttributeRoundTrip", testAttrRoundTrip},
		{"KeyRoundTrip", testKeyRoundTrip},
		{"NegativeZero", testNegativeZero},
		{"LargeValues", testLargeValues},
	}
}

type namedValue struct {
	name string
	v    tk.Value
}

func roundTripValues() []namedValue {
	return []namedValue{
		{"int7", tk.Integer(7)},
		{"int0", tk.Integer(0)},
		{"int_neg1", tk.Integer(-1)},
		{"int_min", tk.Integer(math.MinInt64)},
		{"int_max", tk.Integer(math.MaxInt64)},
		{"int_2p53p1", tk.Integer(1<<53 + 1)}, // not exact as a float64
		{"dbl7", tk.Double(7)},
		{"dbl0", tk.Double(0)},
		{"dbl_tenth", tk.Double(0.1)},
		{"dbl_neg", tk.Double(-2.5e-300)},
		{"dbl_max", tk.Double(math.MaxFloat64)},
		{"dbl_minsub", tk.Double(math.SmallestNonzeroFloat64)},
		{"dbl_2p53", tk.Double(1 << 53)},
		{"dbl_third", tk.Double(1.0 / 3)},
		{"bool_t", tk.Boolean(true)},
		{"bool_f", tk.Boolean(false)},
		{"str_empty", tk.String("")},
		{"str7", tk.String("7")},
		{"str_true", tk.String("true")},
		{"str_uni", tk.String("héllo, 世界 😀")},
		{"str_nul", tk.String("a\x00b")},
		{"str_ctl", tk.String("\x01\t\n\x7f")},
		{"bin_empty", tk.Binary(nil)},
		{"bin_edges", tk.Binary([]byte{0x00, 0xff, 0x80, 0x7f, 0x00})},
		{"bin7", tk.Binary([]byte("7"))},
		{"bin_notutf8", tk.Binary([]byte{0xc3, 0x28, 0xff, 0xfe})},
	}
}

// testAttrRoundTrip: every type reads back as written, through PutRow and
// UpdateRow, by GetRow, GetRange and BatchGetRow.
func testAttrRoundTrip(e *env) {
	t := e.create("types", schemaS, tk.TableOptions{})
	vals := roundTripValues()
	var cols []tk.Column
	var changes []tk.Change
	for _, nv := range vals {
		cols = append(cols, col(nv.name, nv.v, 0))
		changes = append(changes, tk.Put(nv.name, nv.v))
	}
	e.ok("PutRow", t.PutRow(e.ctx, strKey("put"), cols))
	_, err := t.UpdateRow(e.ctx, strKey("upd"), changes)
	e.ok("UpdateRow", err)
	wPut, wUpd := e.want(strKey("put"), cols...), e.want(strKey("upd"), cols...)
	e.expectRow("written by PutRow", t, strKey("put"), &wPut)
	e.expectRow("written by UpdateRow", t, strKey("upd"), &wUpd)
	rows, _ := e.rangeAll("GetRange", t, t.lo(), t.hi())
	e.diff("GetRange", []rowView{wPut, wUpd}, viewRows(rows))
	res, err := e.c.BatchGetRow(e.ctx, []tk.BatchGet{{Table: t.Name(), Key: strKey("upd")}, {Table: t.Name(), Key: strKey("put")}})
	if e.ok("BatchGetRow", err) && len(res) == 2 {
		for i, w := range []rowView{wUpd, wPut} {
			e.ok("BatchGetRow result", res[i].Err)
			if !res[i].Found {
				e.t.Errorf("BatchGetRow result %d: not found", i)
				continue
			}
			e.diff("BatchGetRow", w, viewRow(res[i].Row))
		}
	}
	// Spelled out, for the message: Integer 7 is never Double 7 or String "7".
	r, found, err := t.GetRow(e.ctx, strKey("put"), tk.Columns("int7", "dbl7", "str7"))
	if e.ok("GetRow", err) && found {
		for name, typ := range map[string]tk.Type{"int7": tk.TypeInteger, "dbl7": tk.TypeDouble, "str7": tk.TypeString} {
			if v, ok := r.Get(name); !ok || v.Type() != typ {
				e.t.Errorf("column %s read back as %v, want a %v", name, fmtValue(v), typ)
			}
		}
	}
}

// testKeyRoundTrip: key values of every key type come back with their type
// and bytes, including the empty String and Binary and the int64 extremes.
func testKeyRoundTrip(e *env) {
	schema := tk.KeySchema{{Name: "s", Type: tk.TypeString}, {Name: "i", Type: tk.TypeInteger}, {Name: "b", Type: tk.TypeBinary}}
	t := e.create("keytypes", schema, tk.TableOptions{})
	mk := func(s string, i int64, b []byte) tk.PrimaryKey {
		return tk.Key("s", tk.String(s)).Add("i", tk.Integer(i)).Add("b", tk.Binary(b))
	}
	keys := []tk.PrimaryKey{
		mk("", math.MinInt64, nil),
		mk("7", 7, []byte("7")),
		mk("é\x00😀", math.MaxInt64, []byte{0x00, 0xff}),
		mk("a", -1, []byte{0xff}),
		mk("a", -1, []byte{}),
	}
	var want []rowView
	for i, k := range keys {
		e.put(t, k, col("n", tk.Integer(int64(i)), 0))
		w := e.want(k, col("n", tk.Integer(int64(i)), 0))
		want = append(want, w)
		e.expectRow("key round trip", t, k, &w)
	}
	rows, _ := e.rangeAll("GetRange", t, t.lo(), t.hi())
	e.diff("GetRange keys", viewKeys(expectedRange(keys, t.lo(), t.hi(), false)), rowKeys(rows))
	var gets []tk.BatchGet
	for _, k := range keys {
		gets = append(gets, tk.BatchGet{Table: t.Name(), Key: k})
	}
	res, err := e.c.BatchGetRow(e.ctx, gets)
	if e.ok("BatchGetRow", err) {
		var got []rowView
		for _, r := range res {
			e.ok("BatchGetRow result", r.Err)
			got = append(got, viewRow(r.Row))
		}
		e.diff("BatchGetRow", want, got)
	}
}

// testNegativeZero: Double -0 is stored as -0 (tablekit.Value documents
// that Double(0) and Double(-0) differ when stored), and compares equal to
// 0 in a filter, since Doubles compare numerically.
func testNegativeZero(e *env) {
	t := e.create("negzero", schemaS, tk.TableOptions{})
	negZero := tk.Double(math.Copysign(0, -1))
	cols := []tk.Column{col("n", negZero, 0), col("z", tk.Double(0), 0)}
	e.put(t, strKey("r"), cols...)
	w := e.want(strKey("r"), cols...)
	e.expectRow("-0 and 0", t, strKey("r"), &w)
	e.expectRow("filter -0 == 0", t, strKey("r"), &w, tk.WithFilter(tk.SingleColumnValue("n", tk.Equal, tk.Double(0))))
}

// testLargeValues: large String and Binary values come back byte for byte.
func testLargeValues(e *env) {
	t := e.create("large", schemaS, tk.TableOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	bin := make([]byte, 64<<10)
	for i := range bin {
		bin[i] = byte(r.Uint32())
	}
	runes := []rune("aé世😀\x00")
	str := make([]rune, 0, 32<<10)
	for len(str) < cap(str) {
		str = append(str, runes[r.IntN(len(runes))])
	}
	cols := []tk.Column{col("b", tk.Binary(bin), 0), col("s", tk.String(string(str)), 0)}
	e.put(t, strKey("r"), cols...)
	w := e.want(strKey("r"), cols...)
	e.expectRow("large values", t, strKey("r"), &w)
}
