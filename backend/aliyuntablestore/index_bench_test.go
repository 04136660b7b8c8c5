package aliyuntablestore_test

import (
	"testing"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures on the emulator in memory
// (internal/testkit/indexbench).
func BenchmarkIndex(b *testing.B) {
	srv := newServer(b)
	indexbench.Run(b, func(b *testing.B) tablekit.Backend { return openAt(b, srv, srv.Endpoint(), nil) })
}
