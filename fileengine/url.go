package fileengine

import (
	"context"
	"net/url"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Scheme is the URL scheme of the durable engine. "file:///var/lib/app/db"
// (or "file://localhost/var/lib/app/db", RFC 8089) opens (creating it if
// needed) the store in that directory; "file://./data" and "file://../data"
// name a directory relative to the working directory. Any other host, as
// in "file://data/x", is refused: it reads as a relative path to some and
// as a host to others, so the URL says which. Query parameters: nosync=true ([Options.NoSync]),
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
	var dir string
	switch u.Host {
	case "", "localhost": // file:///abs, file://localhost/abs
		dir = u.Path
	case ".", "..": // file://./rel, file://../rel
		dir = u.Host + u.Path
	case driveLetter(u.Host): // file://C:/dir, as filepath.ToSlash writes it
		dir = u.Host + u.Path
	default:
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"file URL %s: %q is read as a host, not a directory; write file:///%s%s for the absolute path /%s%s or file://./%s%s for a path relative to the working directory",
			driver.ShowURL(u), u.Host, u.Host, u.EscapedPath(), u.Host, u.Path, u.Host, u.EscapedPath())
	}
	if dir == "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "file URL %s names no directory", driver.ShowURL(u))
	}
	return Open(dir, opts)
}

// driveLetter returns host when it is a Windows drive ("C:"), else "".
func driveLetter(host string) string {
	if len(host) == 2 && host[1] == ':' && (host[0]|0x20) >= 'a' && (host[0]|0x20) <= 'z' {
		return host
	}
	return ""
}
