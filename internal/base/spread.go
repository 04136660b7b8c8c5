package base

// Spreading keys over n buckets: the one hash behind the DynamoDB
// adapter's shard placement (scheme 1, part of its storage format), the
// engines' lock stripes and the fault injector's draws.

import "math/bits"

// FNV1a64 returns the 64-bit FNV-1a hash of b (hash/fnv's New64a, without
// its allocation). Its low bits are a weak function of the input: bit i
// of the result depends only on bits 0..i of b's bytes (bit 0 is the
// parity of their low bits), so it must not be reduced by its low bits;
// [Spread] finishes it with [Mix64] first.
func FNV1a64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// Mix64 is splitmix64's finalizer: a bijection of uint64 in which every
// output bit depends on every input bit (an avalanche).
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Reduce maps h to [0, n) by multiply-shift: the high word of h·n, so
// that the high bits of h choose (n < 1 gives 0).
func Reduce(h uint64, n int) int {
	if n <= 1 {
		return 0
	}
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// Spread returns the bucket of b among n: Reduce(Mix64(FNV1a64(b)), n).
// Every bucket gets a fair share of any set of distinct keys, those
// whose bytes repeat a pattern included (TestSpreadFair). It is the
// DynamoDB adapter's shard placement for tables created with scheme 1
// (backend/awsdynamodb, metaPlacement): changing it would lose their
// rows, so TestSpreadPinned pins its values.
func Spread(b []byte, n int) int { return Reduce(Mix64(FNV1a64(b)), n) }
