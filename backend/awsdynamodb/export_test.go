package awsdynamodb

// SetEarlierRangeTuning makes range reads size their first Queries and
// bound their parallelism as they did before (true) or as now (false).
func SetEarlierRangeTuning(on bool) { earlierRangeTuning.Store(on) }
