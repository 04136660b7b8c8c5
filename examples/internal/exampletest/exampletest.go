// Package exampletest is for the examples' tests only: it runs the examples
// on every backend, each on its emulator: bttest in process, dynalite
// (internal/testkit/dynalitetest), the Tablestore emulator (tsemu), plus
// the in-memory and file engines. Only the examples' tests import it, so the
// example programs link none of the emulators.
package exampletest

import (
	"path/filepath"
	"testing"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/internal/testkit/urltest"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// Backend starts a fresh emulator (or store) for t and returns its URL.
type Backend struct {
	Name string
	URL  func(t *testing.T) string
}

// Backends are the backends every example runs on.
var Backends = []Backend{
	{"mem", func(*testing.T) string { return "mem://" }},
	{"file", func(t *testing.T) string { return "file://" + filepath.ToSlash(t.TempDir()) + "?nosync=true" }},
	{"bigtable", func(t *testing.T) string {
		srv, err := bttest.NewServer("localhost:0")
		if err != nil {
			t.Fatalf("starting bttest: %v", err)
		}
		t.Cleanup(srv.Close)
		t.Setenv("BIGTABLE_EMULATOR_HOST", srv.Addr)
		return "bigtable://proj/inst"
	}},
	{"dynamodb", func(t *testing.T) string {
		ep := dynalitetest.Start(t) // skips when dynalite is not installed; fails under CI=true
		urltest.AWSEnv(t)
		return "dynamodb://?region=" + dynalitetest.Region + "&endpoint=" + ep + "&shards=2"
	}},
	{"tablestore", func(t *testing.T) string {
		srv, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New()})
		if err != nil {
			t.Fatalf("starting tsemu: %v", err)
		}
		t.Cleanup(srv.Close)
		t.Setenv(aliyuntablestore.EnvAccessKeyID, srv.AccessKeyID())
		t.Setenv(aliyuntablestore.EnvAccessKeySecret, srv.AccessKeySecret())
		t.Setenv(aliyuntablestore.EnvSecurityToken, "")
		return "tablestore://" + srv.InstanceName() + "?endpoint=" + srv.Endpoint()
	}},
}

// Everywhere runs an example on every backend, one subtest each, twice on
// the same store: the second run checks that the example dropped its
// tables and runs again unchanged.
func Everywhere(t *testing.T, run exampledb.RunFunc) {
	for _, b := range Backends {
		t.Run(b.Name, func(t *testing.T) {
			u := b.URL(t)
			exampledb.Run(t, u, run)
			exampledb.Run(t, u, run)
		})
	}
}
