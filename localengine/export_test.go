package localengine

// NewWithSpanRows returns an empty engine whose tables split a span beyond
// n entries (span.go), for tests of span boundaries.
func NewWithSpanRows(n int) *Engine {
	e := New()
	e.spanRows = n
	return e
}
