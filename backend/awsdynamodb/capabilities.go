package awsdynamodb

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablekit/tablekit"
)

// What the backend is to the Client: the interfaces it implements (its
// capabilities, tablekit.CapabilitiesOf) and what it declares besides.

var (
	_ tablekit.Backend            = (*Backend)(nil)
	_ tablekit.BatchReader        = (*Backend)(nil) // read.go
	_ tablekit.BatchWriter        = (*Backend)(nil) // write.go
	_ tablekit.AtomicWriter       = (*Backend)(nil) // atomic.go
	_ tablekit.ChangeFeeder       = (*Backend)(nil) // feed.go
	_ tablekit.FeedCreator        = (*Backend)(nil) // feed.go
	_ tablekit.NativeAccessor     = (*Backend)(nil)
	_ tablekit.SystemNamer        = (*Backend)(nil)
	_ tablekit.CapabilityDeclarer = (*Backend)(nil)
)

// Capabilities implements tablekit.CapabilityDeclarer: what the methods
// show, auto-increment key columns (autoinc.go), and, as the store may
// lack them, atomic writes withheld with Options.NoTransactions and the
// change feed with Options.NoStreams (then AtomicWrite and the feed's
// methods answer tablekit.ErrSkip).
func (b *Backend) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	shown.AtomicWrite = shown.AtomicWrite && !b.opts.noTransactions
	shown.ChangeFeed = shown.ChangeFeed && !b.opts.noStreams
	return shown
}

// As offers the native client to tablekit.Client.As: with target a
// **dynamodb.Client it sets *target to the client and returns true; any
// other target is left alone and As returns false.
func (b *Backend) As(target any) bool {
	if p, ok := target.(**dynamodb.Client); ok && p != nil {
		*p = b.client
		return true
	}
	return false
}

// SystemName is the store's OpenTelemetry db.system.name, "aws.dynamodb"
// (tablekit.SystemNamer).
func (b *Backend) SystemName() string { return "aws.dynamodb" }
