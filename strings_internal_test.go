package tablekit

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSameRowWaves(t *testing.T) {
	m1 := &TableMeta{Name: "a"}
	m2 := &TableMeta{Name: "b"}
	k := func(i int64) PrimaryKey { return Key("k", Integer(i)) }
	reqs := []*WriteRequest{
		{Meta: m1, Key: k(1)}, {Meta: m1, Key: k(2)}, {Meta: m1, Key: k(1)},
		{Meta: m2, Key: k(1)}, {Meta: m1, Key: k(1)}, {Meta: m1, Key: k(2)},
	}
	got := sameRowWaves(reqs)
	want := [][]int{{0, 1, 3}, {2, 5}, {4}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("sameRowWaves = %v, want %v", got, want)
	}
	if got := sameRowWaves(reqs[:2]); len(got) != 1 || got[0] != nil {
		t.Fatalf("distinct rows: got %v, want one whole wave", got)
	}
}

func TestMessagesQuoteShortPrefixes(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes, two per rune
	for _, v := range []Value{String(long), Binary([]byte(long))} {
		s := v.GoString()
		if len(s) > 160 || !strings.Contains(s, "1200 bytes") {
			t.Errorf("%v.GoString() = %q (%d bytes): want a short prefix and the full length", v.Type(), s, len(s))
		}
		if s := v.String(); len(s) > 140 || !strings.HasSuffix(s, "…") {
			t.Errorf("%v.String() = %q (%d bytes): want a short prefix and an ellipsis", v.Type(), s, len(s))
		}
	}
	if s := String(long).GoString(); !strings.HasSuffix(strings.TrimSuffix(s, "…, 1200 bytes)"), `é"`) {
		t.Errorf("a String is cut inside a rune: %q", s)
	}
	if s := String(long).String(); !utf8.ValidString(s) {
		t.Errorf("a String is cut inside a rune: %q", s)
	}
	for _, tc := range []struct {
		v          Value
		str, typed string
	}{
		{String("click"), "click", `String("click")`},
		{Integer(-7), "-7", "Integer(-7)"},
		{Double(1.5), "1.5", "Double(1.5)"},
		{Boolean(true), "true", "Boolean(true)"},
		{Binary([]byte{0, 0xff}), "0x00ff", "Binary(0x00ff)"},
		{InfMin, "InfMin", "InfMin"},
	} {
		if got := fmt.Sprint(tc.v); got != tc.str {
			t.Errorf("%%v of %#v = %q, want %q", tc.v, got, tc.str)
		}
		if got := fmt.Sprintf("%#v", tc.v); got != tc.typed {
			t.Errorf("%%#v = %q, want %q", got, tc.typed)
		}
	}
	if s := Key("k", String(long)).String(); len(s) > 170 {
		t.Errorf("key String() is %d bytes", len(s))
	}
}

func TestReadableStrings(t *testing.T) {
	f := And(SingleColumnValue("price", GreaterEqual, Integer(10)),
		Not(ColumnFilter{Column: "tag", Op: Equal, Value: String("x"), FilterIfMissing: true}))
	cases := []struct {
		got, want string
	}{
		{f.String(), `AND(price >= Integer(10), NOT(tag == String("x") (column required)))`},
		{Condition{Row: ExpectExist, Column: f.Filters[0]}.String(), `ExpectExist && price >= Integer(10)`},
		{Condition{}.String(), `Ignore`},
		{PutAt("n", Integer(1), 17).String(), `PutAt("n", Integer(1), 17)`},
		{Increment("n", -2).String(), `Increment("n", -2)`},
		{DeleteColumn("n").String(), `DeleteColumn("n")`},
		{(&WriteRequest{Meta: &TableMeta{Name: "t"}, Kind: WriteUpdate, Key: Key("k", Integer(1)),
			Changes: []Change{Put("a", Integer(1))}, Condition: Condition{Row: ExpectNotExist}}).String(),
			`Update table "t" (k=Integer(1)) 1 changes if ExpectNotExist`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}
