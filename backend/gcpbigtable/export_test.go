package gcpbigtable

// SetAfterOptimisticRead makes f run after every read of the optimistic
// write path, before the write that relies on it, until restore is called.
func SetAfterOptimisticRead(f func()) (restore func()) {
	old := afterOptimisticRead.Swap(&f)
	return func() { afterOptimisticRead.Store(old) }
}
