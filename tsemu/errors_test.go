package tsemu

import (
	"context"
	"errors"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/tsproto"
)

// TestErrorCodesRoundTrip checks the emulator's answers against the one
// table of Tablestore error codes the adapter reads them with
// (internal/tsproto): a tablekit error the emulator answers comes back to
// a program over the adapter as the same sentinel, except ErrUnimplemented,
// which the service (and so the emulator) answers OTSParameterInvalid.
func TestErrorCodesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		err  error
		want error
	}{
		{tablekit.Errorf(tablekit.ErrConditionFailed, "x"), tablekit.ErrConditionFailed},
		{tablekit.Errorf(tablekit.ErrTableNotFound, "x"), tablekit.ErrTableNotFound},
		{tablekit.Errorf(tablekit.ErrAlreadyExists, "x"), tablekit.ErrAlreadyExists},
		{tablekit.Errorf(tablekit.ErrInvalidPrimaryKey, "x"), tablekit.ErrInvalidPrimaryKey},
		{tablekit.Errorf(tablekit.ErrInvalidArgument, "x"), tablekit.ErrInvalidArgument},
		{tablekit.Errorf(tablekit.ErrThrottled, "x"), tablekit.ErrThrottled},
		{tablekit.Errorf(tablekit.ErrUnavailable, "x"), tablekit.ErrUnavailable},
		{tablekit.Errorf(tablekit.ErrUnimplemented, "x"), tablekit.ErrInvalidArgument},
		{context.DeadlineExceeded, tablekit.ErrUnavailable},
		{errAuth, tablekit.ErrPermissionDenied},
		{errNoTable, tablekit.ErrTableNotFound},
		{errors.New("a Backend's own failure"), tablekit.ErrUnavailable},
	} {
		oe := toOTS(c.err)
		if got := tsproto.ErrOf(oe.code, oe.status); got != c.want {
			t.Errorf("%v: the emulator answers %d %s, which reads back as %v; want %v", c.err, oe.status, oe.code, got, c.want)
		}
	}
	for code, oe := range faultErrors {
		if got := tsproto.ErrOf(oe.code, oe.status); got != tablekit.ErrThrottled && got != tablekit.ErrUnavailable {
			t.Errorf("fault %s reads back as %v, not as an error a retry may cure", code, got)
		}
	}
}
