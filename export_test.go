package tablekit

// SetIndexSweep turns the index reads' sweep of stale entries on or off
// (index_read.go), for the benchmark that compares both.
func SetIndexSweep(on bool) { sweepOff = !on }
