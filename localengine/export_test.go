package localengine

import "github.com/tablekit/tablekit"

// NewWithSpanRows returns an empty engine whose tables split a span beyond
// n entries (span.go), for tests of span boundaries.
func NewWithSpanRows(n int) *Engine {
	e := New()
	e.spanRows = n
	return e
}

// PlantSpanMutant plants the span bug of mutant.go until the returned
// function is called (not concurrently with other tests of the package).
func PlantSpanMutant() (undo func()) {
	spanMutant = true
	return func() { spanMutant = false }
}

// NewGeneral returns an empty engine that applies every update with
// rowmodel's Update, never in place (update.go): the baseline of the
// in-place update's benchmarks and tests.
func NewGeneral() *Engine {
	e := New()
	e.general = true
	return e
}

// SetAfterAssign sets the hook run between assigning an auto-increment
// value (and storing the entries, in WriteIndexed) and writing its row
// (nil: none; not concurrently with other tests of the package).
func SetAfterAssign(f func(tablekit.PrimaryKey)) { afterAssign = f }
