package gcpbigtable

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Scheme is the URL scheme this package registers with
// driver.RegisterScheme when it is imported:
//
//	bigtable://PROJECT/INSTANCE?app_profile=P&gc=versions
//	bigtable:///INSTANCE?project=example.com:PROJECT
//
// opens [Open] on that instance with application-default credentials (or,
// when BIGTABLE_EMULATOR_HOST is set, on that emulator without any).
// A domain-scoped project id (example.com:PROJECT) cannot be a URL's host,
// so it goes in the project parameter, with the host left empty.
// Parameters, all optional: app_profile ([Options.AppProfile]); gc, one of
// full, versions or off ([Options.GC]: GCFull, GCVersionsOnly, GCOff);
// gc_margin, a Go duration such as 48h ([Options.GCMargin]); meta_table
// ([Options.MetaTable]); concurrency ([Options.Concurrency]). Anything
// else, user information, and a port are ErrInvalidArgument errors.
const Scheme = "bigtable"

func init() { driver.RegisterScheme(Scheme, driver.URLOpenerFunc(openURL)) }

// gcModes are the values of the gc parameter.
var gcModes = map[string]GCMode{"full": GCFull, "versions": GCVersionsOnly, "off": GCOff}

func openURL(ctx context.Context, u *url.URL) (tablekit.Backend, error) {
	p := driver.NewURLParams(u)
	opts := &Options{
		AppProfile:  p.String("app_profile", ""),
		MetaTable:   p.String("meta_table", ""),
		Concurrency: p.Int("concurrency", 0, 1, 1024),
	}
	project := p.String("project", "")
	gc := p.String("gc", "full")
	margin := p.String("gc_margin", "")
	if err := p.Done(); err != nil {
		return nil, err
	}
	mode, ok := gcModes[gc]
	if !ok {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "bigtable URL: parameter \"gc\" is %q; it must be full, versions or off", gc)
	}
	opts.GC = mode
	if margin != "" {
		d, err := time.ParseDuration(margin)
		if err != nil || d <= 0 {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "bigtable URL: parameter \"gc_margin\" is %q; it must be a positive duration such as 48h", margin)
		}
		opts.GCMargin = d
	}
	shown := driver.ShowURL(u)
	if u.Port() != "" {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "bigtable URL %s: a port is not accepted (want bigtable://PROJECT/INSTANCE; set BIGTABLE_EMULATOR_HOST for an emulator)", shown)
	}
	opts.Project = u.Host
	if project != "" {
		if u.Host != "" {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "bigtable URL %s: the project is both the host and the project parameter; give it once", shown)
		}
		opts.Project = project
	}
	opts.Instance = strings.TrimPrefix(u.Path, "/")
	if opts.Project == "" || opts.Instance == "" || strings.Contains(opts.Instance, "/") {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "bigtable URL %s: want bigtable://PROJECT/INSTANCE (or bigtable:///INSTANCE?project=PROJECT)", shown)
	}
	return Open(ctx, opts)
}
