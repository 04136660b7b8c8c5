// Package scheme is the registry of backend URL schemes: package
// backend/driver registers adapters' openers in it, and tablekit.OpenBackend
// looks them up. It lives below both so that neither imports the other for
// it.
package scheme

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Opener opens a backend (a tablekit.Backend) from a URL.
type Opener func(ctx context.Context, u *url.URL) (any, error)

var schemes struct {
	sync.RWMutex
	m map[string]Opener
}

// Register makes o the opener of name. It panics if name is empty, not lower
// case or already registered, or o is nil, as database/sql.Register does.
func Register(name string, o Opener) {
	if o == nil {
		panic("tablekit: RegisterScheme of a nil opener for " + name)
	}
	if name == "" || name != strings.ToLower(name) {
		panic("tablekit: RegisterScheme: scheme must be non-empty lower case: " + name)
	}
	schemes.Lock()
	defer schemes.Unlock()
	if _, dup := schemes.m[name]; dup {
		panic("tablekit: RegisterScheme called twice for " + name)
	}
	if schemes.m == nil {
		schemes.m = map[string]Opener{}
	}
	schemes.m[name] = o
}

// Lookup returns the opener of name, or nil.
func Lookup(name string) Opener {
	schemes.RLock()
	defer schemes.RUnlock()
	return schemes.m[name]
}

// Names returns the registered schemes, sorted.
func Names() []string {
	schemes.RLock()
	defer schemes.RUnlock()
	out := make([]string, 0, len(schemes.m))
	for s := range schemes.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
