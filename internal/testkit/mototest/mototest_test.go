//go:build unix

package mototest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/testkit/emuproc"
)

// TestStart starts moto, checks that it answers, and that the cleanup
// kills it.
func TestStart(t *testing.T) {
	var endpoint string
	t.Run("server", func(t *testing.T) {
		endpoint = Start(t)
		if err := emuproc.ProbeDynamoDB(context.Background(), endpoint, Region); err != nil {
			t.Fatal(err)
		}
	})
	if endpoint == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := emuproc.ProbeDynamoDB(ctx, endpoint, Region); err == nil {
		t.Errorf("moto at %s still answers after the test's cleanup", endpoint)
	}
}

func TestLaunchStop(t *testing.T) {
	ep, stop, err := Launch()
	if err != nil {
		Missing(t)
		t.Fatal(err)
	}
	stop()
	stop() // idempotent
	if err := emuproc.ProbeDynamoDB(context.Background(), ep, Region); err == nil {
		t.Errorf("moto at %s still answers after stop", ep)
	}
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci       string
		wantFail bool
	}{{"true", true}, {"", false}} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			f := &fakeTB{TB: t}
			Missing(f)
			msg := f.skipped
			if tc.wantFail {
				msg = f.failed
			}
			if msg == "" || (f.failed != "") != tc.wantFail {
				t.Fatalf("failed=%q skipped=%q; want failure=%v", f.failed, f.skipped, tc.wantFail)
			}
			if !strings.Contains(msg, "pip install 'moto[server]'") {
				t.Errorf("message %q does not name the install command", msg)
			}
		})
	}
}

// TestNotFound checks that an empty PATH is reported as not installed.
func TestNotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := command(); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("command() with an empty PATH = %v, want ErrNotInstalled", err)
	}
}

type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Skip(args ...any)  { f.skipped = fmt.Sprint(args...) }
func (f *fakeTB) Fatal(args ...any) { f.failed = fmt.Sprint(args...) }
