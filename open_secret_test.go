package tablekit_test

import (
	"testing"

	"github.com/tablekit/tablekit/internal/testkit/urltest"
)

// A URL the root cannot hand to an opener (malformed, no scheme, unknown
// scheme) is refused without quoting any part of it that may be a secret.
func TestOpenBackendHidesSecrets(t *testing.T) {
	const secret = "s3cr3tvalue"
	urltest.Refused(t, secret,
		"http://id:"+secret+"/x",                     // the password parses as an invalid port
		"id:"+secret+"@host",                         // scheme "id", opaque secret
		"nosuch://id:"+secret+"@host",                // unknown scheme with user information
		"nosuch://host?key="+secret,                  // unknown scheme with a query
		"//host/?secret="+secret,                     // no scheme
		"tablestor://inst?access_key_secret="+secret, // a typo in the scheme
		"%zz"+secret,
	)
}
