package tablekit_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/localengine"
)

// ruleOpened counts the calls of the "ruletest" opener, which checks
// nothing itself, as a careless third-party opener would.
var ruleOpened atomic.Int64

func init() {
	driver.RegisterScheme("ruletest", driver.URLOpenerFunc(func(context.Context, *url.URL) (tablekit.Backend, error) {
		ruleOpened.Add(1)
		return localengine.New(), nil
	}))
}

// OpenBackend applies the credential rule for every scheme, before the
// opener runs: an opener that forgets it cannot let a secret through.
func TestOpenBackendAppliesURLRule(t *testing.T) {
	const secret = "hunter2"
	for _, raw := range []string{
		"ruletest://u:" + secret + "@h/p",
		"ruletest://h/p?password=" + secret,
		"ruletest://h/p?access_key_secret=" + secret,
		"ruletest://h/p?AccessKeyID=" + secret,
		"ruletest://h/p?security-token=" + secret,
		"ruletest://h/p?X-Amz-Signature=" + secret,
		"ruletest://h/p?auth=" + secret,
		"ruletest://h/p#" + secret,
		"ruletest:" + secret,
		"ruletest://h/p?a=%zz" + secret,
	} {
		_, err := tablekit.OpenBackend(context.Background(), raw)
		if !errors.Is(err, tablekit.ErrInvalidArgument) || strings.Contains(err.Error(), secret) {
			t.Errorf("OpenBackend(%s) = %v, want ErrInvalidArgument without the secret", raw, err)
		}
	}
	if n := ruleOpened.Load(); n != 0 {
		t.Fatalf("the opener ran %d times for URLs the rule refuses", n)
	}
	for _, raw := range []string{"ruletest://h/p?region=r&endpoint=x&shards=2&app_profile=a", "ruletest://h"} {
		b, err := tablekit.OpenBackend(context.Background(), raw)
		if err != nil {
			t.Fatalf("OpenBackend(%s) = %v", raw, err)
		}
		b.Close()
	}
	if n := ruleOpened.Load(); n != 2 {
		t.Fatalf("the opener ran %d times for 2 good URLs", n)
	}
}
