package localengine

import (
	"context"
	"net/url"
	"sync"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Scheme is the URL scheme of the local engine: "mem://" opens a new,
// empty engine; "mem://NAME" opens the engine called NAME, created on first
// use and shared by every later open of the same name in this process, so
// that two parts of a program (or a test and the code under test) see the
// same tables. A named engine lives until the process ends: closing a
// client opened on it releases that client only.
const Scheme = "mem"

func init() { driver.RegisterScheme(Scheme, driver.URLOpenerFunc(openURL)) }

var named struct {
	sync.Mutex
	m map[string]*Engine
}

func openURL(_ context.Context, u *url.URL) (tablekit.Backend, error) {
	if err := driver.NewURLParams(u).Done(); err != nil {
		return nil, err
	}
	if u.Port() != "" || (u.Path != "" && u.Path != "/") {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"mem URL %s: only mem:// or mem://NAME is accepted", driver.ShowURL(u))
	}
	if u.Host == "" {
		return New(), nil
	}
	named.Lock()
	defer named.Unlock()
	e := named.m[u.Host]
	if e == nil {
		if named.m == nil {
			named.m = map[string]*Engine{}
		}
		e = New()
		named.m[u.Host] = e
	}
	return &sharedHandle{Engine: e}, nil
}

// sharedHandle is one opener's view of a named engine: its Close leaves
// the engine to the others.
type sharedHandle struct{ *Engine }

// Close releases nothing: the named engine stays for later opens.
func (h *sharedHandle) Close() error { return nil }

// As sets *target to the shared *Engine when target is a **Engine.
func (h *sharedHandle) As(target any) bool {
	if p, ok := target.(**Engine); ok {
		*p = h.Engine
		return true
	}
	return false
}
