package fileengine

import (
	"context"
	"net/url"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Scheme is the URL scheme of the durable engine. "file:///var/lib/app/db"
// opens (creating it if needed) the store in that directory;
// "file://./data" and "file://data" name a directory relative to the
// working directory. Query parameters: nosync=true ([Options.NoSync]),
// mustexist=true ([Options.MustExist]) and cache=BYTES
// ([Options.CacheSize]).
const Scheme = "file"

func init() { driver.RegisterScheme(Scheme, driver.URLOpenerFunc(openURL)) }

func openURL(_ context.Context, u *url.URL) (tablekit.Backend, error) {
	p := driver.NewURLParams(u)
	opts := &Options{
		NoSync:    p.Bool("nosync", false),
		MustExist: p.Bool("mustexist", false),
		CacheSize: int64(p.Int("cache", 0, 0, 1<<40)),
	}
	if err := p.Done(); err != nil {
		return nil, err
	}
	if u.Port() != "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "file URL %s: want file:///ABS/DIR or file://REL/DIR", driver.ShowURL(u))
	}
	dir := u.Host + u.Path // file://data/x is the relative path data/x
	if dir == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "file URL %s names no directory", driver.ShowURL(u))
	}
	return Open(dir, opts)
}
