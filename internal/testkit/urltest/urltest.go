// Package urltest is for tablekit's own URL-opener tests only: it holds
// what they share: the check that
// bad URLs are refused with typed errors that hide secrets, and an AWS
// environment that keeps the default credential chain off the developer's
// files.
package urltest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// Refused checks that opening each URL fails with ErrInvalidArgument and an
// error that does not contain secret.
func Refused(t *testing.T, secret string, urls ...string) {
	t.Helper()
	for _, u := range urls {
		_, err := tablekit.OpenBackend(context.Background(), u)
		if !errors.Is(err, tablekit.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", u, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the secret: %v", u, err)
		}
	}
}

// AWSEnv gives the default AWS credential chain static test keys from the
// environment and no shared files or region, for the rest of the test.
func AWSEnv(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  "",
		"AWS_DEFAULT_REGION":          "",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
	} {
		t.Setenv(k, v)
	}
}
