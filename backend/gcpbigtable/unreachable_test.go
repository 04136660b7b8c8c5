package gcpbigtable_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"google.golang.org/api/option"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/gcpbigtable"
)

// TestUnreachableEmulatorFails: a BIGTABLE_EMULATOR_HOST where nothing
// listens (a loopback port just closed) makes Open, and the URL opener,
// fail with ErrUnavailable naming the variable, where it used to hang the
// first call for ever (issue 19 item 6). The context given has no
// deadline: the bound is the adapter's own (EmulatorConnectTimeout at
// most; a refused connection fails at once). The test never measures how
// long it took: if the bound were missing, it would hang, and the test
// binary's own timeout would report it.
func TestUnreachableEmulatorFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, tablekit.ErrUnavailable) {
			t.Errorf("%s: got %v, want ErrUnavailable", what, err)
		} else if !strings.Contains(err.Error(), "BIGTABLE_EMULATOR_HOST") {
			t.Errorf("%s: %q does not name BIGTABLE_EMULATOR_HOST", what, err)
		}
	}
	b, err := gcpbigtable.Open(ctx, &gcpbigtable.Options{Project: "p", Instance: "i"})
	if err == nil {
		b.Close()
	}
	check("Open", err)
	db, err := tablekit.Open(ctx, "bigtable://p/i")
	if err == nil {
		db.Close()
	}
	check("tablekit.Open", err)

	// An endpoint the Bigtable client dials itself fails Open too.
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	b, err = gcpbigtable.Open(ctx, &gcpbigtable.Options{Project: "p", Instance: "i",
		ClientOptions: []option.ClientOption{option.WithEndpoint(addr), option.WithoutAuthentication()}})
	if err == nil {
		b.Close()
	}
	if !errors.Is(err, tablekit.ErrUnavailable) {
		t.Errorf("Open with a closed endpoint: %v, want ErrUnavailable", err)
	}
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)

	// A context that ends first wins, as itself.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := gcpbigtable.Open(cctx, &gcpbigtable.Options{Project: "p", Instance: "i"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestMissingCredentials: with no credentials anywhere (no
// GOOGLE_APPLICATION_CREDENTIALS, a HOME without gcloud's, no emulator),
// Open fails with ErrPermissionDenied, as the other backends do (issue 19
// item 8), not ErrUnavailable.
func TestMissingCredentials(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	b, err := gcpbigtable.Open(context.Background(), &gcpbigtable.Options{Project: "p", Instance: "i"})
	if err == nil {
		b.Close()
		t.Skip("this machine has credentials (it runs on Google Cloud): nothing to test")
	}
	if !errors.Is(err, tablekit.ErrPermissionDenied) {
		t.Errorf("Open without credentials: %v, want ErrPermissionDenied", err)
	}
}
