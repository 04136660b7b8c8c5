package gcpbigtable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// TestCodeOf checks the SPEC §12 mapping of gRPC codes: credentials are
// ErrPermissionDenied, a message over gRPC's size limit is
// ErrInvalidArgument (a retry sends the same message), other exhaustion is
// ErrThrottled, and only transient codes are ErrUnavailable.
func TestCodeOf(t *testing.T) {
	cases := []struct {
		err       error
		want      error
		retryable bool
	}{
		{status.Error(codes.Unauthenticated, "request had invalid authentication credentials"), tablekit.ErrPermissionDenied, false},
		{status.Error(codes.PermissionDenied, "missing bigtable.tables.readRows"), tablekit.ErrPermissionDenied, false},
		{status.Error(codes.ResourceExhausted, "grpc: received message larger than max (5000000 vs. 4194304)"), tablekit.ErrInvalidArgument, false},
		{status.Error(codes.ResourceExhausted, "grpc: trying to send message larger than max (300000000 vs. 268435456)"), tablekit.ErrInvalidArgument, false},
		{status.Error(codes.ResourceExhausted, "Quota exceeded for quota metric 'Read requests'"), tablekit.ErrThrottled, true},
		{status.Error(codes.NotFound, "table not found"), tablekit.ErrTableNotFound, false},
		{status.Error(codes.AlreadyExists, "table exists"), tablekit.ErrAlreadyExists, false},
		{status.Error(codes.InvalidArgument, "bad"), tablekit.ErrInvalidArgument, false},
		{status.Error(codes.FailedPrecondition, "bad"), tablekit.ErrInvalidArgument, false},
		{status.Error(codes.OutOfRange, "bad"), tablekit.ErrInvalidArgument, false},
		{status.Error(codes.Unimplemented, "no"), tablekit.ErrUnimplemented, false},
		{status.Error(codes.Unavailable, "connection refused"), tablekit.ErrUnavailable, true},
		{status.Error(codes.Aborted, "aborted"), tablekit.ErrUnavailable, true},
		{status.Error(codes.Internal, "RST_STREAM"), tablekit.ErrUnavailable, true},
		{status.Error(codes.DeadlineExceeded, "server deadline"), tablekit.ErrUnavailable, true},
		{errors.New("transport is closing"), tablekit.ErrUnavailable, true},
		// No credentials, or credentials refused: as on every backend.
		{errors.New("factory dial failed: credentials: could not find default credentials. See https://cloud.google.com/docs/authentication/external/set-up-adc for more information"), tablekit.ErrPermissionDenied, false},
		{status.Error(codes.Unavailable, `transport: per-RPC creds failed due to error: oauth2: "invalid_grant" "Bad Request"`), tablekit.ErrPermissionDenied, false},
	}
	for _, c := range cases {
		err := wrap(context.Background(), c.err, "reading key %v", tablekit.Key("k", tablekit.String("a")))
		if !errors.Is(err, c.want) {
			t.Errorf("%v: got %v, want %v", c.err, err, c.want)
		}
		if got := driver.Retryable(err); got != c.retryable {
			t.Errorf("%v: driver.Retryable = %v, want %v", c.err, got, c.retryable)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%v: the native error is not reachable in %v", c.err, err)
		}
	}
	// A cancelled context wins over the native error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := wrap(ctx, status.Error(codes.Canceled, "context canceled"), "x"); err != context.Canceled {
		t.Errorf("wrap with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestMessagesQuoteShortPrefixes checks that errors about a long key or
// cell name no more than a short prefix of it (SPEC §12).
func TestMessagesQuoteShortPrefixes(t *testing.T) {
	long := strings.Repeat("k", 3000)
	key := tablekit.Key("a", tablekit.String(long)).Add("b", tablekit.String(long))
	_, err := rowKey(key)
	if !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Fatalf("rowKey of a 6 KB key: %v, want ErrInvalidArgument", err)
	}
	if msg := err.Error(); len(msg) > 400 || strings.Contains(msg, strings.Repeat("k", 100)) {
		t.Errorf("rowKey's error is %d bytes: %.200s…", len(msg), msg)
	}
	werr := wrap(context.Background(), status.Error(codes.Unavailable, "down"), "writing key %v", tablekit.Key("a", tablekit.String(long)))
	if msg := werr.Error(); len(msg) > 400 {
		t.Errorf("wrap's message is %d bytes: %.200s…", len(msg), msg)
	}
	_, err = decodeValue([]byte("i" + strings.Repeat("9", 4000)))
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("decodeValue of a 4 KB malformed Integer: %.300v", err)
	}
	for _, raw := range []string{strings.Repeat("\x00\xff", 2000), "short"} {
		if got := quoteBytes(raw); len(got) > 120 {
			t.Errorf("quoteBytes(%d bytes) = %d bytes", len(raw), len(got))
		}
	}
}
