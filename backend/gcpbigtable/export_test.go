package gcpbigtable

import "github.com/tablekit/tablekit"

// SetAfterOptimisticRead makes f run after every read of the optimistic
// write path, before the write that relies on it, until restore is called.
func SetAfterOptimisticRead(f func()) (restore func()) {
	old := afterOptimisticRead.Swap(&f)
	return func() { afterOptimisticRead.Store(old) }
}

// SetAfterConfirmGeneration makes f run after the metadata check of a
// write that could reveal a hidden version, before that write, until
// restore is called.
func SetAfterConfirmGeneration(f func()) (restore func()) {
	old := afterConfirmGeneration.Swap(&f)
	return func() { afterConfirmGeneration.Store(old) }
}

// SetMaxRangeColumns sets how many projected columns a read selects by
// column ranges (more use a regex), until restore is called.
func SetMaxRangeColumns(n int) (restore func()) {
	old := maxRangeColumns
	maxRangeColumns = n
	return func() { maxRangeColumns = old }
}

// Pushdown reports how a range read of spec on a table with opts at now
// pushes its filter down: not at all, as a pre-filter, or exactly.
func Pushdown(opts tablekit.TableOptions, spec *tablekit.ReadSpec, now int64) (pushed, exact bool) {
	_, mode := predicate(opts, spec, now)
	return mode != pushNone, mode == pushExact
}

// PushValues are values of every type with the edges of each order.
var PushValues = pushValues

// SetPushdown turns the pushing down of range filters on or off, until
// restore is called.
func SetPushdown(on bool) (restore func()) {
	old := maxPushLeaves
	maxPushLeaves = 0
	if on {
		maxPushLeaves = old
	}
	return func() { maxPushLeaves = old }
}
