package aliyuntablestore_test

// The change feed (SPEC §15) through Tablestore Stream, on tsemu over the
// local engine and over the file engine (nosync), through the adapter and
// the SDK over HTTP, side by side in one run:
//
//	go test -run '^$' -bench FeedTstest -benchtime 5000x -count 3 ./backend/aliyuntablestore/
//
// Write/<engine> and Read/<engine> are internal/testkit/feedbench's (the
// reader's pages are GetStreamRecord pages of 1000).

import (
	"path/filepath"
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/fileengine"
	"github.com/tablekit/tablekit/internal/testkit/feedbench"
	"github.com/tablekit/tablekit/localengine"
	"github.com/tablekit/tablekit/tsemu"
)

func feedBenchClient(b *testing.B, engine string) *tablekit.Client {
	var backend tablekit.Backend = localengine.New()
	if engine == "file" {
		fe, err := fileengine.Open(filepath.Join(b.TempDir(), "db"), &fileengine.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { fe.Close() })
		backend = fe
	}
	srv, err := tsemu.NewServer(tsemu.Options{Backend: backend})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	return tablekit.NewClient(openAt(b, srv, srv.Endpoint(), nil))
}

func BenchmarkFeedTstest(b *testing.B) {
	for _, engine := range []string{"local", "file"} {
		b.Run("Write/"+engine, func(b *testing.B) { feedbench.Write(b, feedBenchClient(b, engine)) })
		b.Run("Read/"+engine, func(b *testing.B) { feedbench.Read(b, feedBenchClient(b, engine)) })
	}
}
