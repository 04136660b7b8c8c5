package driver

import (
	"net/url"
	"strings"

	"github.com/tablekit/tablekit"
)

// ShowURL returns u as an error message may show it: scheme, host and
// path only. User information and the query are left out, so that a
// credential put in a URL by mistake never reaches an error or a log line.
func ShowURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// CheckURL refuses, with an ErrInvalidArgument *tablekit.Error, what no
// adapter URL may hold: user information, a fragment, an opaque part, and
// a query parameter whose name looks like a credential (secret, password,
// token, access key…). Credentials never travel in a URL; credHint says
// where the adapter takes them from and ends the message. No message
// quotes the refused value.
func CheckURL(u *url.URL, credHint string) error {
	shown := ShowURL(u)
	if u.User != nil {
		return tablekit.Errorf(tablekit.ErrInvalidArgument,
			"%s URL %s: user information is not accepted (credentials never go in a URL; %s)", u.Scheme, shown, credHint)
	}
	if u.Opaque != "" {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "%s URL: want %s://…, not %s:…", u.Scheme, u.Scheme, u.Scheme)
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "%s URL %s: a fragment (#…) is not accepted", u.Scheme, shown)
	}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		return tablekit.Errorf(tablekit.ErrInvalidArgument, "%s URL %s: malformed query", u.Scheme, shown)
	}
	for name := range u.Query() {
		if SecretName(name) {
			return tablekit.Errorf(tablekit.ErrInvalidArgument,
				"%s URL %s: parameter %q looks like a credential and is refused (credentials never go in a URL; %s)",
				u.Scheme, shown, name, credHint)
		}
	}
	return nil
}

// SecretName reports whether a parameter name looks like it holds a
// credential.
func SecretName(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "", ".", "").Replace(name))
	for _, w := range []string{"secret", "password", "passwd", "pwd", "token", "credential", "accesskey", "apikey", "privatekey", "auth", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
