package fileengine

import (
	"github.com/cockroachdb/pebble/v2"

	"github.com/tablekit/tablekit"
)

// What the engine is to the Client: the interfaces it implements (its
// capabilities, tablekit.CapabilitiesOf) and what it declares besides.

var (
	_ tablekit.Backend            = (*Engine)(nil)
	_ tablekit.BatchReader        = (*Engine)(nil) // batchget.go
	_ tablekit.BatchWriter        = (*Engine)(nil) // engine.go
	_ tablekit.RangeScanner       = (*Engine)(nil) // range.go
	_ tablekit.AtomicWriter       = (*Engine)(nil) // atomic.go
	_ tablekit.ChangeFeeder       = (*Engine)(nil) // feed.go
	_ tablekit.FeedCreator        = (*Engine)(nil) // feed.go
	_ tablekit.FeedWaiter         = (*Engine)(nil) // feed.go
	_ tablekit.IndexWriter        = (*Engine)(nil) // index.go
	_ tablekit.NativeAccessor     = (*Engine)(nil)
	_ tablekit.SystemNamer        = (*Engine)(nil)
	_ tablekit.CapabilityDeclarer = (*Engine)(nil)
)

// Capabilities implements tablekit.CapabilityDeclarer: what the engine's
// methods show, and auto-increment key columns (autoinc.go).
func (e *Engine) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

// SystemName is the store's OpenTelemetry db.system.name, "tablekit.file"
// (tablekit.SystemNamer).
func (e *Engine) SystemName() string { return "tablekit.file" }

// As offers the engine's *pebble.DB to tablekit.Client.As: a **pebble.DB
// target gets it (for metrics and tools; writing to it bypasses the
// engine's rules).
func (e *Engine) As(target any) bool {
	switch p := target.(type) {
	case **pebble.DB:
		*p = e.db
		return true
	case **Engine:
		*p = e
		return true
	}
	return false
}
