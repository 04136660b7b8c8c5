package localengine

// A test hook, and nothing else: a bug that can be planted in the span
// code, to show that the differential test (package conformance, against
// its plain reference) catches a bug in this engine's optimised paths.
// Only a test sets it (PlantSpanMutant, export_test.go); see
// TestSpanMutantCaught.

// spanMutant, when set, makes a forward range walk skip the first row of
// every span after the one it starts in: the off-by-one of a walk that
// resumes in the next span "after" its lower bound.
var spanMutant bool

// planted returns iter, the walk of one span's rows; with spanMutant set,
// for a span the walk entered from the one before (next), one that drops
// the span's first row.
func planted(iter func(entry) bool, next bool) func(entry) bool {
	if !spanMutant || !next {
		return iter
	}
	skipped := false
	return func(ent entry) bool {
		if !skipped {
			skipped = true
			return true
		}
		return iter(ent)
	}
}
