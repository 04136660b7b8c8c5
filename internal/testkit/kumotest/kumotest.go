// Package kumotest is for tablekit's own tests only: it runs kumo
// (github.com/sivchari/kumo), a pure-Go AWS emulator whose DynamoDB has
// TransactWriteItems and DynamoDB Streams, in process, as a third
// DynamoDB target beside dynalite and moto. It needs no Python and no
// Node.
//
// kumo registers every AWS service it emulates, which pulls in most of
// the AWS SDK for Go: kumotest is a module of its own, so that neither
// tablekit's go.mod nor what library users compile depend on it. Its
// tests run from its directory:
//
//	cd internal/testkit/kumotest && go test ./...
package kumotest

import (
	"testing"

	"github.com/sivchari/kumo"
)

// Region is the region clients should use (kumo accepts any).
const Region = "us-east-1"

// Start starts an in-process kumo server for tb, closed when tb's
// cleanups run, and returns its endpoint ("http://127.0.0.1:<port>").
// kumo's servers in one process share one store: tests name their
// tables apart.
func Start(tb testing.TB) (endpoint string) {
	tb.Helper()
	srv := kumo.NewServer()
	tb.Cleanup(srv.Close)
	return srv.URL
}

// Launch starts an in-process kumo server not tied to a test, for
// TestMain; stop closes it.
func Launch() (endpoint string, stop func()) {
	srv := kumo.NewServer()
	return srv.URL, srv.Close
}
