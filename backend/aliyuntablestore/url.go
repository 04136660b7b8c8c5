package aliyuntablestore

import (
	"context"
	"net/url"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

// Scheme is the URL scheme this package registers with
// driver.RegisterScheme when it is imported:
//
//	tablestore://INSTANCE?endpoint=https://INSTANCE.cn-hangzhou.ots.aliyuncs.com
//	tablestore://INSTANCE?region=cn-hangzhou   (the same endpoint)
//	tablestore://INSTANCE?endpoint=http://127.0.0.1:8801   (an emulator)
//
// opens [Open] on that instance. Exactly one of endpoint and region is
// required. The credentials come only from the environment variables
// TABLESTORE_ACCESS_KEY_ID and TABLESTORE_ACCESS_KEY_SECRET, with the
// optional TABLESTORE_SECURITY_TOKEN ([EnvAccessKeyID], [EnvAccessKeySecret],
// [EnvSecurityToken]), never from the URL: user information, and a query
// parameter whose name looks like a credential, are refused with an
// ErrInvalidArgument error that does not repeat the value. No error the
// opener returns contains a credential.
const Scheme = "tablestore"

func init() { driver.RegisterScheme(Scheme, driver.URLOpenerFunc(openURL)) }

func openURL(ctx context.Context, u *url.URL) (tablekit.Backend, error) {
	p := driver.NewURLParams(u)
	endpoint := p.String("endpoint", "")
	region := p.String("region", "")
	if err := p.Done(); err != nil {
		return nil, err
	}
	shown := driver.ShowURL(u)
	if u.Host == "" || u.Port() != "" || (u.Path != "" && u.Path != "/") {
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument,
			"tablestore URL %s: want tablestore://INSTANCE?endpoint=URL (or ?region=R)", shown)
	}
	switch {
	case endpoint != "" && region != "":
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "tablestore URL %s: give endpoint or region, not both", shown)
	case region != "":
		if !validRegion(region) {
			return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "tablestore URL %s: parameter \"region\" is %q; want a region id such as cn-hangzhou", shown, region)
		}
		endpoint = "https://" + u.Host + "." + region + ".ots.aliyuncs.com"
	case endpoint == "":
		return nil, tablekit.Errorf(tablekit.ErrInvalidArgument, "tablestore URL %s: parameter \"endpoint\" (or \"region\") is required", shown)
	}
	return Open(ctx, &Options{Endpoint: endpoint, Instance: u.Host})
}

// validRegion reports whether s looks like a region id: lower-case
// letters, digits and '-'.
func validRegion(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
