package aliyuntablestore

import (
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/tablekit/tablekit"
)

// What the backend is to the Client: the interfaces it implements (its
// capabilities, tablekit.CapabilitiesOf) and what it declares besides.

var (
	_ tablekit.Backend            = (*Backend)(nil)
	_ tablekit.BatchReader        = (*Backend)(nil) // read.go
	_ tablekit.BatchWriter        = (*Backend)(nil) // batch.go
	_ tablekit.AtomicWriter       = (*Backend)(nil) // atomic.go
	_ tablekit.ChangeFeeder       = (*Backend)(nil) // feed.go
	_ tablekit.FeedCreator        = (*Backend)(nil) // backend.go
	_ tablekit.NativeAccessor     = (*Backend)(nil)
	_ tablekit.SystemNamer        = (*Backend)(nil)
	_ tablekit.CapabilityDeclarer = (*Backend)(nil)
)

// Capabilities implements tablekit.CapabilityDeclarer: what the methods
// show (batches, atomic writes, the change feed, also created with its
// table), and Tablestore's auto-increment key columns (autoinc.go).
func (b *Backend) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

// As offers the native SDK client to tablekit.Client.As: when target is a
// **tablestore.TableStoreClient it sets *target to [Backend.Client] and
// returns true; any other target gives false.
func (b *Backend) As(target any) bool {
	if p, ok := target.(**tablestore.TableStoreClient); ok && p != nil {
		*p = b.c
		return true
	}
	return false
}

// SystemName is the store's OpenTelemetry db.system.name, "tablekit.tablestore"
// (tablekit.SystemNamer).
func (b *Backend) SystemName() string { return "tablekit.tablestore" }
