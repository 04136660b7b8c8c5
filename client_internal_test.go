package tablekit

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

func TestTokenRoundTrip(t *testing.T) {
	keys := []PrimaryKey{
		Key("a", String("")),
		Key("a", String("x\x00y")).Add("b", Integer(math.MinInt64)).Add("c", Binary([]byte{0, 0xff})).Add("d", Integer(math.MaxInt64)),
	}
	for _, k := range keys {
		for _, back := range []bool{false, true} {
			in := token{table: "t_1", backward: back, exclusive: true, key: k}
			out, err := decodeToken(encodeToken(in))
			if err != nil {
				t.Fatal(err)
			}
			if out.table != in.table || out.backward != back || !out.exclusive || !out.key.Equal(k) {
				t.Fatalf("round trip of %+v gave %+v", in, out)
			}
		}
	}
}

// FuzzDecodeToken: a token is user input; decoding must never panic, and
// what decodes re-encodes to the same bytes.
func FuzzDecodeToken(f *testing.F) {
	f.Add(encodeToken(token{table: "t", exclusive: true, key: Key("a", Integer(5))}))
	f.Add([]byte{1, 0, 1, 't', 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, err := decodeCanonicalToken(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v is not ErrInvalidArgument", err)
			}
			return
		}
		if string(encodeToken(tk)) != string(b) {
			t.Fatalf("token %x decodes to %+v which re-encodes differently", b, tk)
		}
	})
}

type nativeErr struct{ code string }

func (e *nativeErr) Error() string { return "native " + e.code }

func TestErrorWrapping(t *testing.T) {
	native := &nativeErr{"X"}
	err := annotate(WrapError(ErrConditionFailed, native, "column %q", "c"), "PutRow", "orders")
	if !errors.Is(err, ErrConditionFailed) || errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("errors.Is wrong for %v", err)
	}
	var n *nativeErr
	if !errors.As(err, &n) || n != native {
		t.Fatalf("errors.As does not reach the native error: %v", err)
	}
	var te *Error
	if !errors.As(err, &te) || te.Op != "PutRow" || te.Table != "orders" {
		t.Fatalf("annotation lost: %+v", te)
	}
	want := `tablekit: PutRow table "orders": condition failed: column "c": native X`
	if err.Error() != want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	pk := annotate(Errorf(ErrInvalidPrimaryKey, "bad"), "GetRow", "t")
	if !errors.Is(pk, ErrInvalidArgument) || !errors.Is(pk, ErrInvalidPrimaryKey) {
		t.Fatalf("ErrInvalidPrimaryKey must match both: %v", pk)
	}
	if got := annotate(context.Canceled, "GetRow", "t"); got != context.Canceled {
		t.Fatalf("context error changed to %v", got)
	}
}

func TestCompareKeysInfinity(t *testing.T) {
	a := Key("a", String("x")).Add("b", InfMin).Add("c", Integer(9))
	b := Key("a", String("x")).Add("b", InfMin).Add("c", Integer(1))
	if CompareKeys(a, b) != 0 {
		t.Fatal("bounds with the same infinity must be equal whatever follows")
	}
	real := Key("a", String("x")).Add("b", Integer(math.MinInt64)).Add("c", Integer(0))
	if CompareKeys(a, real) >= 0 || CompareKeys(real, Key("a", String("x")).Add("b", InfMax).Add("c", InfMin)) >= 0 {
		t.Fatal("InfMin/InfMax must sort around every value")
	}
}

func TestWriteOptionsCombine(t *testing.T) {
	f1 := SingleColumnValue("a", Equal, Integer(1))
	f2 := SingleColumnValue("b", Equal, Integer(2))
	c := writeCondition([]WriteOption{ExpectExist, Condition{Column: f1}})
	if c.Row != ExpectExist || c.Column == nil {
		t.Fatalf("a Condition option erased the row expectation: %+v", c)
	}
	c = writeCondition([]WriteOption{IfMatch(f1), IfMatch(f2)})
	if cf, ok := c.Column.(CompositeFilter); !ok || cf.Op != LogicAnd || len(cf.Filters) != 2 {
		t.Fatalf("two IfMatch options must AND: %+v", c.Column)
	}
	c = writeCondition([]WriteOption{ExpectExist, ExpectNotExist})
	m := &TableMeta{Name: "t", Key: KeySchema{{Name: "k", Type: TypeString}}}
	if err := checkCondition(m, c); err == nil || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("contradicting expectations accepted: %v", err)
	}
}

func TestOptionBounds(t *testing.T) {
	for _, o := range []TableOptions{
		{TTL: (MaxOptionValue + 1) * time.Second, MaxVersions: 1, MaxVersionOffset: 1 * time.Second},
		{TTL: math.MaxInt64 / time.Second * time.Second, MaxVersions: 1, MaxVersionOffset: 1 * time.Second},
		{TTL: NoExpiry, MaxVersions: 1, MaxVersionOffset: (MaxOptionValue + 1) * time.Second},
		{TTL: NoExpiry, MaxVersions: MaxOptionValue + 1, MaxVersionOffset: 1 * time.Second},
		{TTL: -1, MaxVersions: 1, MaxVersionOffset: 1 * time.Second}, // -1 ns, not NoExpiry
	} {
		if err := checkOptions(o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if err := checkOptions(TableOptions{TTL: MaxOptionValue * time.Second, MaxVersions: MaxOptionValue, MaxVersionOffset: MaxOptionValue * time.Second}); err != nil {
		t.Errorf("largest options refused: %v", err)
	}
}
