package driver_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

func TestCheckURL(t *testing.T) {
	for name, want := range map[string]bool{
		"access_key_secret": true, "AccessKeyID": true, "security-token": true, "password": true,
		"X-Amz-Signature": true, "auth": true, "region": false, "endpoint": false, "shards": false, "app_profile": false,
	} {
		if got := driver.SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
	for _, raw := range []string{"s://u:hunter2@h/p", "s://h/p?password=hunter2", "s://h/p#hunter2", "s:hunter2", "s://h/p?a=%zzhunter2"} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		err = driver.CheckURL(u, "use the environment")
		if !errors.Is(err, tablekit.ErrInvalidArgument) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckURL(%s) = %v, want ErrInvalidArgument without the secret", raw, err)
		}
	}
	u, _ := url.Parse("s://h/p?region=r")
	if err := driver.CheckURL(u, ""); err != nil {
		t.Errorf("CheckURL(%s) = %v", u, err)
	}
	if got := driver.ShowURL(u); got != "s://h/p" {
		t.Errorf("ShowURL = %q", got)
	}
}
