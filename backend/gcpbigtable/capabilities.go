package gcpbigtable

import (
	"cloud.google.com/go/bigtable"

	"github.com/tablekit/tablekit"
)

// What the backend is to the Client: the interfaces it implements (its
// capabilities, tablekit.CapabilitiesOf) and what it declares besides.

var (
	_ tablekit.Backend            = (*Backend)(nil)
	_ tablekit.BatchReader        = (*Backend)(nil) // read.go
	_ tablekit.BatchWriter        = (*Backend)(nil) // write.go
	_ tablekit.NativeAccessor     = (*Backend)(nil)
	_ tablekit.SystemNamer        = (*Backend)(nil)
	_ tablekit.CapabilityDeclarer = (*Backend)(nil)
)

// Capabilities implements tablekit.CapabilityDeclarer: what the methods
// show (batch reads and writes), and auto-increment key columns
// (autoinc.go). No atomic writes (Bigtable is atomic within one row only,
// so the Client refuses them, SPEC §13) and no change feed.
func (b *Backend) Capabilities(shown tablekit.Capabilities) tablekit.Capabilities {
	shown.AutoIncrement = true
	return shown
}

// As offers the native clients to tablekit.Client.As: target may be a
// **bigtable.Client (the data client) or a **bigtable.AdminClient (the
// admin client, when there is one).
func (b *Backend) As(target any) bool {
	switch t := target.(type) {
	case **bigtable.Client:
		*t = b.client
		return true
	case **bigtable.AdminClient:
		if b.admin == nil {
			return false
		}
		*t = b.admin
		return true
	}
	return false
}

// SystemName is the store's OpenTelemetry db.system.name, "tablekit.bigtable"
// (tablekit.SystemNamer).
func (b *Backend) SystemName() string { return "tablekit.bigtable" }
