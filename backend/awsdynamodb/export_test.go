package awsdynamodb

import "time"

// SetEarlierRangeTuning makes range reads size their first Queries and
// bound their parallelism as they did before (true) or as now (false).
func SetEarlierRangeTuning(on bool) { earlierRangeTuning.Store(on) }

// SetIterMaxAge sets how long a kept shard iterator is used and returns
// a function restoring the previous age.
func SetIterMaxAge(d time.Duration) (restore func()) {
	prev := iterMaxAge
	iterMaxAge = d
	return func() { iterMaxAge = prev }
}

// KeptShardPolls returns how many shards b keeps polling state for.
func KeptShardPolls(b *Backend) int { return b.polls.len() }

// SetMaxOCCAttempts sets how many rounds an optimistic write takes at
// most and returns a function restoring the previous limit.
func SetMaxOCCAttempts(n int) (restore func()) {
	prev := maxOCCAttempts
	maxOCCAttempts = n
	return func() { maxOCCAttempts = prev }
}

// SetLegacyPlacement makes CreateTable make tables as the adapter did
// before placements were recorded (FNV-1a mod N, no placement attribute)
// and returns a function restoring the current placement.
func SetLegacyPlacement() (restore func()) {
	legacyPlacement.Store(true)
	return func() { legacyPlacement.Store(false) }
}
