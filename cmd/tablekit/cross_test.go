package main

import (
	"strings"
	"testing"

	"cloud.google.com/go/bigtable/bttest"

	"github.com/tablekit/tablekit/backend/aliyuntablestore"
	"github.com/tablekit/tablekit/internal/testkit/dynalitetest"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

// The seeded table travels file:// → tablestore:// (the Tablestore test
// server) → dynamodb:// (dynalite) → bigtable:// (bttest) → file://, each
// copy verified row by row by the command itself; the last store's export
// is byte for byte the first's: every version, type and option survived
// each backend.
func TestCopyAcrossBackends(t *testing.T) {
	t.Parallel()
	ts, err := tsemu.NewServer(tsemu.Options{Backend: localengine.New(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	bt, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	dynamo := dynalitetest.Start(t)
	env := []string{
		aliyuntablestore.EnvAccessKeyID + "=" + tsemu.DefaultAccessKeyID,
		aliyuntablestore.EnvAccessKeySecret + "=" + tsemu.DefaultAccessKeySecret,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"BIGTABLE_EMULATOR_HOST=" + bt.Addr,
	}
	chain := []string{
		seededURL(t),
		"tablestore://" + tsemu.DefaultInstanceName + "?endpoint=" + ts.Endpoint(),
		"dynamodb://?region=us-east-1&endpoint=" + dynamo,
		"bigtable://proj/inst",
		fileURL(t),
	}
	want := ok(t, chain[0], "export", "t")
	for i := 0; i+1 < len(chain); i++ {
		r := tkEnv(t, env, "", "", "copy", chain[i], chain[i+1], "--table", "t")
		if r.code != 0 || !strings.Contains(r.stdout, "t: 6 rows copied and verified") {
			t.Fatalf("copy %s → %s: exit %d\nstdout: %s\nstderr: %s", chain[i], chain[i+1], r.code, r.stdout, r.stderr)
		}
		got := tkEnv(t, env, chain[i+1], "", "export", "t")
		if got.code != 0 || got.stdout != want {
			t.Fatalf("export of %s differs (exit %d, %s):\n%s\nwant\n%s", chain[i+1], got.code, got.stderr, got.stdout, want)
		}
	}
}
