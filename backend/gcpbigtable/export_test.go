package gcpbigtable

// SetAfterOptimisticRead makes f run after every read of the optimistic
// write path, before the write that relies on it, until restore is called.
func SetAfterOptimisticRead(f func()) (restore func()) {
	old := afterOptimisticRead.Swap(&f)
	return func() { afterOptimisticRead.Store(old) }
}

// SetMaxRangeColumns sets how many projected columns a read selects by
// column ranges (more use a regex), until restore is called.
func SetMaxRangeColumns(n int) (restore func()) {
	old := maxRangeColumns
	maxRangeColumns = n
	return func() { maxRangeColumns = old }
}
