package tablekit

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/tablekit/tablekit/internal/base"
	"github.com/tablekit/tablekit/internal/scheme"
)

// EnvURL names the variable that holds a program's backend URL, for Open.
const EnvURL = "TABLEKIT_URL"

// Schemes returns the registered URL schemes, sorted.
func Schemes() []string { return scheme.Names() }

// OpenBackend opens the [Backend] rawURL names, via its adapter package.
// ErrInvalidArgument: no or an unknown scheme, user information, a fragment
// or a credential-like parameter; errors never show those or the query.
func OpenBackend(ctx context.Context, rawURL string) (Backend, error) {
	if rawURL == "" {
		return nil, invalid("empty backend URL (set %s, for example to mem://)", EnvURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the URL; rebuild the message without it so
		// that a malformed URL holding a secret does not leak it.
		// The inner error may quote a piece of it too (an "invalid port"
		// that is a password); drop every quoted piece.
		msg := err.Error()
		if ue, ok := err.(*url.Error); ok {
			msg = ue.Err.Error()
		}
		return nil, invalid("malformed backend URL: %s", quotedRE.ReplaceAllString(msg, `"…"`))
	}
	// The URL is not shown below: without a known scheme nobody knows
	// which of its parts is a secret ("id:secret@host" parses as scheme
	// "id").
	if u.Scheme == "" {
		return nil, invalid("backend URL has no scheme (want SCHEME://…; registered: %s)", schemeList())
	}
	o := scheme.Lookup(strings.ToLower(u.Scheme))
	if o == nil {
		return nil, invalid("backend URL: no opener for scheme %q (registered: %s; import the adapter package to register its scheme)",
			u.Scheme, schemeList())
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	v, err := o(ctx, u)
	if err != nil {
		return nil, err
	}
	b, ok := v.(Backend)
	if !ok || b == nil {
		return nil, Errorf(ErrUnavailable, "backend URL: the %s opener returned no backend", u.Scheme)
	}
	return b, nil
}

// Open returns a [Client] on the backend rawURL names ([OpenBackend]).
func Open(ctx context.Context, rawURL string, opts ...ClientOption) (*Client, error) {
	b, err := OpenBackend(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return NewClient(b, opts...), nil
}

var quotedRE = regexp.MustCompile(`"[^"]*"`)

func schemeList() string {
	s := Schemes()
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// checkURL is the rule every backend URL obeys, whatever its scheme (it
// runs before any opener): no user information, no fragment, no opaque
// part, a well-formed query, and no query parameter whose name looks like
// a credential (secret, password, token, access key…). Credentials never
// travel in a URL. No message quotes the refused value.
func checkURL(u *url.URL) error {
	const hint = "credentials never go in a URL: the adapter's package doc says where it takes them from"
	shown := u.Scheme + "://" + u.Host + u.EscapedPath()
	switch {
	case u.User != nil:
		return invalid("%s URL %s: user information is not accepted (%s)", u.Scheme, shown, hint)
	case u.Opaque != "":
		return invalid("%s URL: want %s://…, not %s:…", u.Scheme, u.Scheme, u.Scheme)
	case u.Fragment != "" || u.RawFragment != "":
		return invalid("%s URL %s: a fragment (#…) is not accepted", u.Scheme, shown)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return invalid("%s URL %s: malformed query", u.Scheme, shown)
	}
	for name := range q {
		if base.SecretName(name) {
			return invalid("%s URL %s: parameter %q looks like a credential and is refused (%s)", u.Scheme, shown, name, hint)
		}
	}
	return nil
}
