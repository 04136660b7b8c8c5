package driver

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/scheme"
)

// A URLOpener opens a tablekit.Backend from a URL whose scheme it was
// registered for with [RegisterScheme]; tablekit.OpenBackend calls it only
// for URLs that passed its credential rule. It must refuse, with an
// ErrInvalidArgument *tablekit.Error naming it, any query parameter it does
// not know ([URLParams] does), and never put a secret in an error or a log
// line.
type URLOpener interface {
	OpenBackendURL(ctx context.Context, u *url.URL) (tablekit.Backend, error)
}

// URLOpenerFunc adapts a function to [URLOpener].
type URLOpenerFunc func(ctx context.Context, u *url.URL) (tablekit.Backend, error)

// OpenBackendURL calls f(ctx, u).
func (f URLOpenerFunc) OpenBackendURL(ctx context.Context, u *url.URL) (tablekit.Backend, error) {
	return f(ctx, u)
}

// RegisterScheme makes o the opener of URLs with the given scheme (lower
// case, without "://") for tablekit.Open and tablekit.OpenBackend. An
// adapter calls it from its init function, in the manner of database/sql
// drivers and gocloud.dev's URL openers; it panics if the scheme is
// already registered or o is nil, as database/sql.Register does.
func RegisterScheme(name string, o URLOpener) {
	var op scheme.Opener
	if o != nil {
		op = func(ctx context.Context, u *url.URL) (any, error) {
			b, err := o.OpenBackendURL(ctx, u)
			if err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	scheme.Register(name, op)
}

// ShowURL returns u as an error message may show it: scheme, host and
// path only. User information and the query are left out, so that a
// credential put in a URL by mistake never reaches an error or a log line.
func ShowURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

// URLParams is a helper for [URLOpener] implementations: it hands
// out a URL's query parameters one by one and reports, in
// [URLParams.Done], the ones nobody asked for. (The credential rule,
// that no URL holds user information, a fragment or a parameter named
// like a secret, is tablekit.OpenBackend's, for every scheme.)
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

// Done returns the first error met, or an ErrInvalidArgument error naming
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

func invalid(format string, args ...any) error {
	return tablekit.Errorf(tablekit.ErrInvalidArgument, format, args...)
}
