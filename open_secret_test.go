package tablekit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
)

// A URL the root cannot hand to an opener (malformed, no scheme, unknown
// scheme) is refused without quoting any part of it that may be a secret.
func TestOpenBackendHidesSecrets(t *testing.T) {
	const secret = "s3cr3tvalue"
	for _, u := range []string{
		"http://id:" + secret + "/x",                   // the password parses as an invalid port
		"id:" + secret + "@host",                       // scheme "id", opaque secret
		"nosuch://id:" + secret + "@host",              // unknown scheme with user information
		"nosuch://host?key=" + secret,                  // unknown scheme with a query
		"//host/?secret=" + secret,                     // no scheme
		"tablestor://inst?access_key_secret=" + secret, // a typo in the scheme
		"%zz" + secret,
	} {
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
