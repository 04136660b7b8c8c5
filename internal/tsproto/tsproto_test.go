package tsproto

import (
	"errors"
	"net/http"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

// checkEnum checks that every column of e names each value once (so each
// direction has one answer) and that every look-up finds its own row.
func checkEnum[K, S, W comparable](t *testing.T, name string, e Enum[K, S, W]) {
	t.Helper()
	kits, sdks, wires := map[K]bool{}, map[S]bool{}, map[W]bool{}
	for _, r := range e {
		if kits[r.Kit] || sdks[r.SDK] || wires[r.Wire] {
			t.Errorf("%s: row %v repeats a value of an earlier row", name, r)
		}
		kits[r.Kit], sdks[r.SDK], wires[r.Wire] = true, true, true
		if s, ok := e.SDK(r.Kit); !ok || s != r.SDK {
			t.Errorf("%s.SDK(%v) = %v, %v; want %v", name, r.Kit, s, ok, r.SDK)
		}
		if w, ok := e.Wire(r.Kit); !ok || w != r.Wire {
			t.Errorf("%s.Wire(%v) = %v, %v; want %v", name, r.Kit, w, ok, r.Wire)
		}
		if k, ok := e.FromSDK(r.SDK); !ok || k != r.Kit {
			t.Errorf("%s.FromSDK(%v) = %v, %v; want %v", name, r.SDK, k, ok, r.Kit)
		}
		if k, ok := e.FromWire(r.Wire); !ok || k != r.Kit {
			t.Errorf("%s.FromWire(%v) = %v, %v; want %v", name, r.Wire, k, ok, r.Kit)
		}
	}
}

func TestEnumsAreOneToOne(t *testing.T) {
	checkEnum(t, "Comparators", Comparators)
	checkEnum(t, "LogicOps", LogicOps)
	checkEnum(t, "RowExistences", RowExistences)
	checkEnum(t, "KeyTypes", KeyTypes)
	checkEnum(t, "DefinedColumnTypes", DefinedColumnTypes)
	checkEnum(t, "ActionTypes", ActionTypes)
}

// TestEnumsCoverTablekit checks that each table has a row for every value
// tablekit defines, and refuses a value it does not.
func TestEnumsCoverTablekit(t *testing.T) {
	for op := tablekit.Equal; op <= tablekit.LessEqual; op++ {
		if _, ok := Comparators.SDK(op); !ok {
			t.Errorf("Comparators has no row for %v", op)
		}
	}
	for _, op := range []tablekit.LogicOp{tablekit.LogicAnd, tablekit.LogicOr, tablekit.LogicNot} {
		if _, ok := LogicOps.SDK(op); !ok {
			t.Errorf("LogicOps has no row for %v", op)
		}
	}
	for _, r := range []tablekit.RowExistence{tablekit.Ignore, tablekit.ExpectExist, tablekit.ExpectNotExist} {
		if _, ok := RowExistences.SDK(r); !ok {
			t.Errorf("RowExistences has no row for %v", r)
		}
	}
	for _, k := range []tablekit.WriteKind{tablekit.WritePut, tablekit.WriteUpdate, tablekit.WriteDelete} {
		if _, ok := ActionTypes.Wire(k); !ok {
			t.Errorf("ActionTypes has no row for %v", k)
		}
	}
	for _, typ := range []tablekit.Type{tablekit.TypeString, tablekit.TypeInteger, tablekit.TypeDouble, tablekit.TypeBoolean, tablekit.TypeBinary} {
		if _, ok := DefinedColumnTypes.Wire(typ); !ok {
			t.Errorf("DefinedColumnTypes has no row for %v", typ)
		}
		if _, ok := KeyTypes.Wire(typ); ok != typ.IsKeyType() {
			t.Errorf("KeyTypes has a row for %v: %v; IsKeyType: %v", typ, ok, typ.IsKeyType())
		}
	}
	if _, ok := Comparators.SDK(tablekit.LessEqual + 1); ok {
		t.Error("Comparators translates a comparison tablekit does not define")
	}
	if _, ok := KeyTypes.FromWire(0); ok {
		t.Error("KeyTypes translates primary-key type 0")
	}
}

// TestEnumsAgreeWithSDK checks the SDK and protobuf columns against the
// SDK's own exported conversions, where it exports one.
func TestEnumsAgreeWithSDK(t *testing.T) {
	for _, r := range Comparators {
		if got := r.SDK.ConvertToPbComparatorType(); got != r.Wire {
			t.Errorf("SDK converts %v to %v; the table says %v", r.SDK, got, r.Wire)
		}
	}
	for _, r := range LogicOps {
		if got := r.SDK.ConvertToPbLoType(); got != r.Wire {
			t.Errorf("SDK converts %v to %v; the table says %v", r.SDK, got, r.Wire)
		}
	}
	for _, r := range DefinedColumnTypes {
		if got := r.SDK.ConvertToPbDefinedColumnType(); got != r.Wire {
			t.Errorf("SDK converts %v to %v; the table says %v", r.SDK, got, r.Wire)
		}
		if got := tablestore.ConvertPbDefinedColumnType(r.Wire); got != r.SDK {
			t.Errorf("SDK converts %v to %v; the table says %v", r.Wire, got, r.SDK)
		}
	}
}

func TestErrOf(t *testing.T) {
	for _, c := range []struct {
		code   string
		status int
		want   error
	}{
		{"OTSConditionCheckFail", http.StatusForbidden, tablekit.ErrConditionFailed},
		{"OTSObjectNotExist", http.StatusNotFound, tablekit.ErrTableNotFound},
		{"OTSServerBusy", http.StatusServiceUnavailable, tablekit.ErrThrottled},
		{"OTSAuthFailed", http.StatusForbidden, tablekit.ErrPermissionDenied},
		{"OTSUnsupportOperation", http.StatusBadRequest, tablekit.ErrUnimplemented},
		// Codes the table does not know map by their status.
		{"OTSSomethingNew", http.StatusTooManyRequests, tablekit.ErrThrottled},
		{"OTSSomethingNew", http.StatusNotFound, tablekit.ErrTableNotFound},
		{"OTSSomethingNew", http.StatusBadRequest, tablekit.ErrInvalidArgument},
		{"OTSSomethingNew", http.StatusBadGateway, tablekit.ErrUnavailable},
		{"OTSSomethingNew", 0, tablekit.ErrUnavailable},
	} {
		if got := ErrOf(c.code, c.status); !errors.Is(got, c.want) {
			t.Errorf("ErrOf(%q, %d) = %v; want %v", c.code, c.status, got, c.want)
		}
	}
}
