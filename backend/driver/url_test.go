package driver_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

func TestShowURL(t *testing.T) {
	u, _ := url.Parse("s://h/p?region=r")
	if got := driver.ShowURL(u); got != "s://h/p" {
		t.Errorf("ShowURL = %q", got)
	}
}

func TestURLParams(t *testing.T) {
	u, _ := url.Parse("s://h?a=x&n=7&b=true")
	p := driver.NewURLParams(u)
	if p.String("a", "") != "x" || p.Int("n", 0, 1, 10) != 7 || !p.Bool("b", false) || p.String("absent", "d") != "d" {
		t.Fatal("URLParams read wrong values")
	}
	if err := p.Done(); err != nil {
		t.Fatalf("Done = %v", err)
	}
	for raw, mention := range map[string]string{
		"s://h?zz=1&yy=2": "unknown parameter(s) yy, zz",
		"s://h?a=1&a=2":   `"a" given 2 times`,
		"s://h?n=11":      "[1, 10]",
		"s://h?b=maybe":   "true or false",
	} {
		u, _ := url.Parse(raw)
		p := driver.NewURLParams(u)
		p.String("a", "")
		p.Int("n", 0, 1, 10)
		p.Bool("b", false)
		err := p.Done()
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), mention) {
			t.Errorf("%s: Done = %v, want ErrInvalidArgument mentioning %q", raw, err, mention)
		}
	}
}
