package typed_test

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/typed"
)

// widths has a field of every integer width and float size, at offsets
// that an embedded struct shifts.
type widths struct {
	I8  int8    `tablekit:"i8"`
	I16 int16   `tablekit:"i16"`
	I32 int32   `tablekit:"i32"`
	I   int     `tablekit:"i"`
	U8  uint8   `tablekit:"u8"`
	U16 uint16  `tablekit:"u16"`
	U32 uint32  `tablekit:"u32"`
	U64 uint64  `tablekit:"u64"`
	UP  uintptr `tablekit:"up"`
	F32 float32 `tablekit:"f32"`
}

type inner struct {
	Pad  [3]byte `tablekit:"-"`
	Deep int16   `tablekit:"deep"`
}

// bin is a BinaryMarshaler that records what it was unmarshaled into.
type bin struct{ b []byte }

func (x bin) MarshalBinary() ([]byte, error) { return x.b, nil }
func (x *bin) UnmarshalBinary(b []byte) error {
	if string(b) == "bad" {
		x.b = []byte("partial")
		return errors.New("bad bytes")
	}
	x.b = append(x.b, b...) // keeps what the field held
	return nil
}

type full struct {
	K1 int64  `tablekit:"k1,key"`
	K0 string `tablekit:"k0,key"` // not in schema order
	widths
	inner
	Ptr  *int16        `tablekit:"ptr"`
	PStr *string       `tablekit:"pstr"`
	PT   *time.Time    `tablekit:"pt"`
	PA   *netip.Addr   `tablekit:"pa"`
	T    time.Time     `tablekit:"t"`
	D    time.Duration `tablekit:"d"`
	A    netip.Addr    `tablekit:"a"`
	B    bin           `tablekit:"b"`
	Raw  []byte        `tablekit:"raw"`
	S    string        `tablekit:"s"`
	OK   bool          `tablekit:"ok"`
	F    float64       `tablekit:"f"`
}

func row(cols ...tablekit.Column) tablekit.Row {
	return tablekit.Row{Key: tablekit.Key("k0", tablekit.String("a")).Add("k1", tablekit.Integer(-4)), Columns: cols}
}

func col(name string, v tablekit.Value) tablekit.Column { return tablekit.Column{Name: name, Value: v} }

func TestDecodeEveryKind(t *testing.T) {
	var f full
	r := row( // columns in ascending name order, as a Row's are
		col("a", tablekit.String("10.1.2.3")),
		col("b", tablekit.Binary([]byte("xy"))),
		col("d", tablekit.Integer(1500)),
		col("deep", tablekit.Integer(-2)),
		col("f", tablekit.Double(-2.5)),
		col("f32", tablekit.Double(1.25)),
		col("i", tablekit.Integer(math.MinInt64)),
		col("i16", tablekit.Integer(math.MinInt16)),
		col("i32", tablekit.Integer(math.MaxInt32)),
		col("i8", tablekit.Integer(-128)),
		col("ok", tablekit.Boolean(true)),
		col("pa", tablekit.String("::1")),
		col("pstr", tablekit.String("p")),
		col("pt", tablekit.Integer(1700000000001)),
		col("ptr", tablekit.Integer(-7)),
		col("raw", tablekit.Binary([]byte{0, 1})),
		col("s", tablekit.String("str")),
		col("t", tablekit.Integer(1700000000123)),
		col("u16", tablekit.Integer(math.MaxUint16)),
		col("u32", tablekit.Integer(math.MaxUint32)),
		col("u64", tablekit.Integer(math.MaxInt64)),
		col("u8", tablekit.Integer(255)),
		col("up", tablekit.Integer(9)),
	)
	if err := typed.Unmarshal(r, &f); err != nil {
		t.Fatal(err)
	}
	want := full{inner: inner{Deep: -2}, K1: -4, K0: "a",
		widths: widths{I8: -128, I16: math.MinInt16, I32: math.MaxInt32, I: math.MinInt64, U8: 255, U16: math.MaxUint16, U32: math.MaxUint32, U64: math.MaxInt64, UP: 9, F32: 1.25},
		T:      time.UnixMilli(1700000000123), D: 1500 * time.Millisecond, A: netip.MustParseAddr("10.1.2.3"), B: bin{[]byte("xy")},
		Raw: []byte{0, 1}, S: "str", OK: true, F: -2.5}
	got := fmt.Sprintf("%v %v %v %v %v %v %v %v %v %v %v %v", f.K1, f.K0, f.widths, f.T.UnixMilli(), f.D, f.A, string(f.B.b), f.Raw, f.S, f.OK, f.F, f.inner)
	exp := fmt.Sprintf("%v %v %v %v %v %v %v %v %v %v %v %v", want.K1, want.K0, want.widths, want.T.UnixMilli(), want.D, want.A, string(want.B.b), want.Raw, want.S, want.OK, want.F, want.inner)
	if got != exp {
		t.Fatalf("decoded\n %s\nwant\n %s", got, exp)
	}
	if f.Ptr == nil || *f.Ptr != -7 || f.PStr == nil || *f.PStr != "p" || f.PT == nil || f.PT.UnixMilli() != 1700000000001 ||
		f.PA == nil || *f.PA != netip.MustParseAddr("::1") {
		t.Fatalf("pointer fields %v %v %v %v", f.Ptr, f.PStr, f.PT, f.PA)
	}

	// A second Unmarshal into the same struct: absent columns clear their
	// fields (pointers to nil), present ones overwrite, and the
	// BinaryUnmarshaler runs on the value the field held, as it would in
	// place.
	if err := typed.Unmarshal(row(col("b", tablekit.Binary([]byte("z"))), col("z", tablekit.Integer(1))), &f); err != nil {
		t.Fatal(err)
	}
	if string(f.B.b) != "xyz" {
		t.Errorf("BinaryUnmarshaler on the held value: %q", f.B.b)
	}
	var zero full
	zero.K1, zero.K0, zero.B = -4, "a", f.B
	if fmt.Sprintf("%#v", f) != fmt.Sprintf("%#v", zero) {
		t.Errorf("absent columns left\n %#v\nwant\n %#v", f, zero)
	}
}

func TestDecodeDeepEmbeddedOffset(t *testing.T) {
	type mid struct {
		X byte `tablekit:"x"`
		inner
	}
	type outer struct {
		K   string `tablekit:"k,key"`
		Pad int32  `tablekit:"-"`
		mid
	}
	var o outer
	r := tablekit.Row{Key: tablekit.Key("k", tablekit.String("q")), Columns: []tablekit.Column{col("deep", tablekit.Integer(-300)), col("x", tablekit.Integer(200))}}
	if err := typed.Unmarshal(r, &o); err != nil {
		t.Fatal(err)
	}
	if o.K != "q" || o.Deep != -300 || o.X != 200 || o.Pad != 0 {
		t.Fatalf("%+v", o)
	}
}

func TestDecodeOverflowAndErrors(t *testing.T) {
	for _, c := range []struct {
		col  string
		v    tablekit.Value
		want string // "" means no error
	}{
		{"i8", tablekit.Integer(127), ""},
		{"i8", tablekit.Integer(128), "128"},
		{"i8", tablekit.Integer(-129), "-129"},
		{"i16", tablekit.Integer(math.MaxInt16 + 1), "32768"},
		{"i32", tablekit.Integer(math.MinInt32 - 1), "-2147483649"},
		{"u8", tablekit.Integer(256), "256"},
		{"u8", tablekit.Integer(-1), "-1"},
		{"u16", tablekit.Integer(math.MaxUint16 + 1), "65536"},
		{"u32", tablekit.Integer(math.MaxUint32 + 1), "4294967296"},
		{"u64", tablekit.Integer(-1), "-1"},
		{"f32", tablekit.Integer(1), "Integer"},
		{"s", tablekit.Double(1), "Double"},
		{"b", tablekit.Binary([]byte("bad")), "bad bytes"},
		{"a", tablekit.String("not an address"), "UnmarshalText"},
	} {
		var f full
		f.widths = widths{I8: 1, I16: 1, I32: 1, U8: 1, U16: 1, U32: 1, U64: 1, F32: 1}
		err := typed.Unmarshal(row(col(c.col, c.v)), &f)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s = %v: %v", c.col, c.v, err)
			}
			continue
		}
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %v: error %v, want ErrInvalidArgument naming %s", c.col, c.v, err, c.want)
			continue
		}
		// A value that does not fit is not stored truncated: the field
		// keeps what it held.
		held := map[string]any{"i8": f.I8, "i16": f.I16, "i32": f.I32, "u8": f.U8, "u16": f.U16, "u32": f.U32, "u64": f.U64, "f32": f.F32}
		if h, ok := held[c.col]; ok && fmt.Sprint(h) != "1" {
			t.Errorf("%s = %v: the field holds %v after the error, want 1", c.col, c.v, h)
		}
		if c.col == "b" && string(f.B.b) != "partial" {
			t.Errorf("a failing UnmarshalBinary's effect on the field is kept, as in place: %q", f.B.b)
		}
	}
}

// TestDecodeNewestVersionAmongOthers: a read of several versions returns
// each column's versions newest first; a field gets its column's newest,
// whatever versions and unmapped columns sit around it, and a field whose
// column the row lacks is cleared.
func TestDecodeNewestVersionAmongOthers(t *testing.T) {
	type v struct {
		A string `tablekit:"a"`
		C int64  `tablekit:"c"`
		D string `tablekit:"d"`
		E int64  `tablekit:"e"`
	}
	col := func(name string, val tablekit.Value, version int64) tablekit.Column {
		return tablekit.Column{Name: name, Value: val, Version: version}
	}
	row := tablekit.Row{Columns: []tablekit.Column{
		col("a", tablekit.String("a3"), 3000), col("a", tablekit.String("a2"), 2000), col("a", tablekit.String("a1"), 1000),
		col("b", tablekit.String("unmapped"), 5000), col("b", tablekit.String("unmapped, older"), 4000),
		col("c", tablekit.Integer(7), 2000), col("c", tablekit.Integer(6), 1000),
		col("e", tablekit.Integer(9), 1000), col("e", tablekit.Integer(8), 500),
	}}
	got := v{D: "stale", E: -1}
	if err := typed.Unmarshal(row, &got); err != nil {
		t.Fatal(err)
	}
	if want := (v{A: "a3", C: 7, D: "", E: 9}); got != want {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}
