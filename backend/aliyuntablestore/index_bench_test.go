package aliyuntablestore_test

import (
	"net/http"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/testkit/indexbench"
)

// BenchmarkIndex: SPEC §16's figures on the emulator in memory
// (internal/testkit/indexbench), with the HTTP requests the adapter sends
// counted (wire/write, wire/read).
func BenchmarkIndex(b *testing.B) {
	srv := newServer(b)
	ct := &countingTransport{base: http.DefaultTransport} // contract_test.go
	indexbench.RunWire(b, func(b *testing.B) tablekit.Backend {
		cfg := tablestore.NewDefaultTableStoreConfig()
		cfg.Transport = ct
		return openAt(b, srv, srv.Endpoint(), cfg)
	}, ct.n.Load)
}
