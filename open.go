package tablekit

import (
	"context"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// EnvURL is the environment variable that, by convention, holds the URL of
// the backend a program runs on:
//
//	db, err := tablekit.Open(ctx, os.Getenv(tablekit.EnvURL))
const EnvURL = "TABLEKIT_URL"

// A URLOpener opens a [Backend] from a URL whose scheme it was registered
// for with [RegisterScheme]. Each adapter package registers its schemes when
// it is imported, in the manner of database/sql drivers and gocloud.dev's
// URL openers:
//
//	import _ "github.com/tablekit/tablekit/backend/gcpbigtable" // bigtable://
//
// OpenBackendURL must refuse, with an [ErrInvalidArgument] *Error naming
// it, any query parameter it does not know, and must never put a secret in
// an error or a log line.
type URLOpener interface {
	OpenBackendURL(ctx context.Context, u *url.URL) (Backend, error)
}

// URLOpenerFunc adapts a function to [URLOpener].
type URLOpenerFunc func(ctx context.Context, u *url.URL) (Backend, error)

// OpenBackendURL calls f(ctx, u).
func (f URLOpenerFunc) OpenBackendURL(ctx context.Context, u *url.URL) (Backend, error) {
	return f(ctx, u)
}

var schemes struct {
	sync.RWMutex
	m map[string]URLOpener
}

// RegisterScheme makes o the opener of URLs with the given scheme (lower
// case, without "://"). It is meant to be called from an adapter's init
// function and panics if the scheme is already registered or o is nil, as
// [database/sql.Register] does.
func RegisterScheme(scheme string, o URLOpener) {
	if o == nil {
		panic("tablekit: RegisterScheme of a nil opener for " + scheme)
	}
	if scheme == "" || scheme != strings.ToLower(scheme) {
		panic("tablekit: RegisterScheme: scheme must be non-empty lower case: " + scheme)
	}
	schemes.Lock()
	defer schemes.Unlock()
	if _, dup := schemes.m[scheme]; dup {
		panic("tablekit: RegisterScheme called twice for " + scheme)
	}
	if schemes.m == nil {
		schemes.m = map[string]URLOpener{}
	}
	schemes.m[scheme] = o
}

// Schemes returns the registered URL schemes, sorted.
func Schemes() []string {
	schemes.RLock()
	defer schemes.RUnlock()
	out := make([]string, 0, len(schemes.m))
	for s := range schemes.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// OpenBackend opens the [Backend] that rawURL names, through the opener
// registered for its scheme. An empty URL, one without a scheme and one
// whose scheme nobody registered are [ErrInvalidArgument] errors; the last
// lists the registered schemes. Errors never show the URL's user
// information or query, where a credential might have been put.
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
	schemes.RLock()
	o := schemes.m[strings.ToLower(u.Scheme)]
	schemes.RUnlock()
	if o == nil {
		return nil, invalid("backend URL: no opener for scheme %q (registered: %s; import the adapter package to register its scheme)",
			u.Scheme, schemeList())
	}
	b, err := o.OpenBackendURL(ctx, u)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Open opens the backend that rawURL names and returns a [Client] on it;
// Close the client to release the backend. See [OpenBackend] for errors.
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

// URLParams is a helper for [URLOpener] implementations: it hands out a
// URL's query parameters one by one and reports, in [URLParams.Done], the
// ones nobody asked for.
type URLParams struct {
	scheme string
	q      url.Values
	err    error
}

// NewURLParams returns the parameters of u.
func NewURLParams(u *url.URL) *URLParams {
	return &URLParams{scheme: u.Scheme, q: u.Query()}
}

// String returns the value of parameter name, or def when it is absent, and
// removes it from the set still to be consumed. A parameter given twice is
// an error.
func (p *URLParams) String(name, def string) string {
	vs, ok := p.q[name]
	if !ok {
		return def
	}
	delete(p.q, name)
	if len(vs) != 1 && p.err == nil {
		p.err = invalid("%s URL: parameter %q given %d times", p.scheme, name, len(vs))
	}
	return vs[0]
}

// Int returns parameter name parsed as a decimal integer in [lo, hi], or
// def when it is absent.
func (p *URLParams) Int(name string, def, lo, hi int) int {
	s := p.String(name, "")
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		if p.err == nil {
			p.err = invalid("%s URL: parameter %q is %q; it must be an integer in [%d, %d]", p.scheme, name, s, lo, hi)
		}
		return def
	}
	return n
}

// Bool returns parameter name parsed as true/false/1/0, or def when absent.
func (p *URLParams) Bool(name string, def bool) bool {
	switch s := p.String(name, ""); s {
	case "":
		return def
	case "true", "1":
		return true
	case "false", "0":
		return false
	default:
		if p.err == nil {
			p.err = invalid("%s URL: parameter %q is %q; it must be true or false", p.scheme, name, s)
		}
		return def
	}
}

// Done returns the first error met, or an [ErrInvalidArgument] error naming
// the parameters that were not consumed, or nil.
func (p *URLParams) Done() error {
	if p.err != nil {
		return p.err
	}
	if len(p.q) > 0 {
		names := make([]string, 0, len(p.q))
		for n := range p.q {
			names = append(names, n)
		}
		slices.Sort(names)
		return invalid("%s URL: unknown parameter(s) %s", p.scheme, strings.Join(names, ", "))
	}
	return nil
}
