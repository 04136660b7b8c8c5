package aliyuntablestore_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/testkit/urltest"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

const urlSecret = "S3cr3t-Never-Shown-0123456789"

// captureLog sends the standard logger's output to a buffer for the rest
// of the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(flags) })
	return &buf
}

// TestURL opens tablestore:// on tsemu with the credentials in the
// environment and makes a round trip; with a wrong secret in the
// environment every call fails with ErrPermissionDenied, and neither the
// errors nor the log show the secret.
func TestURL(t *testing.T) {
	ctx := context.Background()
	srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), InstanceName: "urlinst", AccessKeyID: "url-id", AccessKeySecret: urlSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	logged := captureLog(t)
	t.Setenv(aliyuntablestore.EnvAccessKeyID, "url-id")
	t.Setenv(aliyuntablestore.EnvAccessKeySecret, urlSecret)
	t.Setenv(aliyuntablestore.EnvSecurityToken, "")
	u := "tablestore://urlinst?endpoint=" + srv.Endpoint()
	db, err := tablekit.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateTable(ctx, tablekit.TableMeta{Name: "t", Key: tablekit.KeySchema{{Name: "pk", Type: tablekit.TypeString}}}); err != nil {
		t.Fatal(err)
	}
	k := tablekit.Key("pk", tablekit.String("a"))
	if err := db.Table("t").PutRow(ctx, k, []tablekit.Column{{Name: "c", Value: tablekit.Binary([]byte{0, 1})}}); err != nil {
		t.Fatal(err)
	}
	row, ok, err := db.Table("t").GetRow(ctx, k)
	if err != nil || !ok {
		t.Fatalf("GetRow = %v, %v", ok, err)
	}
	if v, _ := row.Get("c"); !v.Equal(tablekit.Binary([]byte{0, 1})) {
		t.Errorf("c = %v", v)
	}
	var c *tablestore.TableStoreClient
	if !db.As(&c) {
		t.Error("no native client")
	}

	// A wrong secret: typed errors that never show it.
	wrong := urlSecret + "-wrong"
	t.Setenv(aliyuntablestore.EnvAccessKeySecret, wrong)
	bad, err := tablekit.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	_, _, err = bad.Table("t").GetRow(ctx, k)
	if !errors.Is(err, tablekit.ErrPermissionDenied) {
		t.Errorf("wrong secret: err = %v, want ErrPermissionDenied", err)
	}
	for _, s := range []string{urlSecret, wrong} {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("the error shows the secret: %v", err)
		}
		if strings.Contains(logged.String(), s) {
			t.Errorf("the log shows the secret: %s", logged)
		}
	}

	// No credentials in the environment: refused, naming the variables.
	t.Setenv(aliyuntablestore.EnvAccessKeyID, "")
	t.Setenv(aliyuntablestore.EnvAccessKeySecret, "")
	_, err = tablekit.OpenBackend(ctx, u)
	if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), aliyuntablestore.EnvAccessKeySecret) {
		t.Errorf("no credentials: err = %v, want ErrInvalidArgument naming %s", err, aliyuntablestore.EnvAccessKeySecret)
	}
}

func TestURLRefused(t *testing.T) {
	t.Setenv(aliyuntablestore.EnvAccessKeyID, "id")
	t.Setenv(aliyuntablestore.EnvAccessKeySecret, urlSecret)
	logged := captureLog(t)
	ep := "http://127.0.0.1:1" // never dialled: every URL is refused first
	urltest.Refused(t, urlSecret,
		"tablestore://",
		"tablestore://?endpoint="+ep,
		"tablestore://inst",
		"tablestore://inst/extra?endpoint="+ep,
		"tablestore://inst:80?endpoint="+ep,
		"tablestore://id:"+urlSecret+"@inst?endpoint="+ep,
		"tablestore://inst?endpoint="+ep+"&access_key_secret="+urlSecret,
		"tablestore://inst?endpoint="+ep+"&AccessKeySecret="+urlSecret,
		"tablestore://inst?endpoint="+ep+"&security_token="+urlSecret,
		"tablestore://inst?endpoint="+ep+"&password="+urlSecret,
		"tablestore://inst?endpoint="+ep+"&colour=blue",
		"tablestore://inst?endpoint=ftp://x",
		"tablestore://inst?endpoint=http://id:"+urlSecret+"@127.0.0.1:1",
		"tablestore://inst?endpoint="+ep+"&region=cn-hangzhou",
		"tablestore://inst?region=CN_hangzhou",
		"tablestore://inst?endpoint="+ep+"#"+urlSecret,
		"tablestore:inst",
	)
	if strings.Contains(logged.String(), urlSecret) {
		t.Errorf("the log shows the secret: %s", logged)
	}
	// region=R builds the public endpoint (opening dials nothing).
	b, err := tablekit.OpenBackend(context.Background(), "tablestore://inst?region=cn-hangzhou")
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// New refuses every option: each configures a client Open builds.
func TestNewRefusesOpenOnlyOptions(t *testing.T) {
	c := tablestore.NewClient("http://127.0.0.1:1", "i", "a", "s")
	for name, o := range map[string]*aliyuntablestore.Options{
		"Endpoint":        {Endpoint: "http://127.0.0.1:2"},
		"Instance":        {Instance: "j"},
		"AccessKeyID":     {AccessKeyID: "x"},
		"AccessKeySecret": {AccessKeySecret: urlSecret},
		"SecurityToken":   {SecurityToken: urlSecret},
		"Config":          {Config: aliyuntablestore.DefaultConfig()},
	} {
		_, err := aliyuntablestore.New(c, o)
		if !errors.Is(err, tablekit.ErrInvalidArgument) || !strings.Contains(err.Error(), "Options."+name) || strings.Contains(err.Error(), urlSecret) {
			t.Errorf("New with %s: err = %v, want ErrInvalidArgument naming it", name, err)
		}
	}
	if _, err := aliyuntablestore.New(c, &aliyuntablestore.Options{}); err != nil {
		t.Errorf("New with empty options: %v", err)
	}
	if _, err := aliyuntablestore.New(nil, nil); !errors.Is(err, tablekit.ErrInvalidArgument) {
		t.Errorf("New(nil): err = %v", err)
	}
}
