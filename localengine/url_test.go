package localengine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/urltest"
	"github.com/tablekit/tablekit/localengine"
)

func TestOpenURL(t *testing.T) {
	ctx := context.Background()
	meta := tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "id", Type: tablekit.TypeString}}}

	a, err := tablekit.Open(ctx, "mem://shared-url-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateTable(ctx, meta); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := tablekit.Open(ctx, "mem://shared-url-test")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.DescribeTable(ctx, "t"); err != nil {
		t.Fatalf("a named engine must outlive a closed client: %v", err)
	}
	var e *localengine.Engine
	if !b.As(&e) || e == nil {
		t.Fatal("As(**Engine) = false on a named engine")
	}

	fresh, err := tablekit.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if names, err := fresh.ListTables(ctx); err != nil || len(names) != 0 {
		t.Fatalf("mem:// must be a new engine: %v %v", names, err)
	}

	urltest.Refused(t, "secretpw", "mem://x?cache=1", "mem://x/path", "mem://u:secretpw@x", "mem://x:80", "mem://x?password=secretpw")
}

func TestOpenURLErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ url, want string }{
		{"", "empty backend URL"},
		{"no-scheme", "has no scheme"},
		{"nosuch://x", `no opener for scheme "nosuch"`},
		{"nosuch://x", "mem"},
		{"%zz://", "malformed"},
	} {
		_, err := tablekit.Open(ctx, tc.url)
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want ErrInvalidArgument containing %q", tc.url, err, tc.want)
		}
	}
}
