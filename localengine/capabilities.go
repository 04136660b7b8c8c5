package localengine

import "github.com/tablekit/tablekit"

// What the engine is to the Client: the interfaces it implements (its
// capabilities, tablekit.CapabilitiesOf) and what it declares besides.

var (
	_ tablekit.Backend            = (*Engine)(nil)
	_ tablekit.BatchReader        = (*Engine)(nil) // batchget.go
	_ tablekit.RangeScanner       = (*Engine)(nil) // walk.go
	_ tablekit.AtomicWriter       = (*Engine)(nil) // atomic.go
	_ tablekit.ChangeFeeder       = (*Engine)(nil) // feed.go
	_ tablekit.FeedCreator        = (*Engine)(nil) // feed.go
	_ tablekit.FeedWaiter         = (*Engine)(nil) // feed.go
	_ tablekit.IndexWriter        = (*Engine)(nil) // index.go
	_ tablekit.SystemNamer        = (*Engine)(nil)
	_ tablekit.CapabilityDeclarer = (*Engine)(nil)
	_ tablekit.NativeAccessor     = (*sharedHandle)(nil) // url.go
)

// Capabilities implements tablekit.CapabilityDeclarer: what the engine's
// methods show, and auto-increment key columns (autoinc.go).
func (e *Engine) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

// SystemName is the store's OpenTelemetry db.system.name, "tablekit.local"
// (tablekit.SystemNamer).
func (e *Engine) SystemName() string { return "tablekit.local" }
