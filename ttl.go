package tablekit

// Visible is SPEC §6's visibility rule for one cell: a cell of version
// (milliseconds) is visible at nowMs iff TTL is NoExpiry or
// floor(version/1000) + TTL > floor(nowMs/1000). Every engine and adapter
// uses this one function (or an exact translation of it into a native
// predicate, documented where it is built).
func Visible(ttl, version, nowMs int64) bool {
	return ttl == NoExpiry || Seconds(version)+ttl > Seconds(nowMs)
}

// OldestVisible returns the smallest version (milliseconds) that is visible
// at nowMs under ttl, or minInt64 when nothing expires. Adapters turn it into
// a native timestamp-range predicate: version >= OldestVisible(...) is
// exactly Visible(...).
func OldestVisible(ttl, nowMs int64) int64 {
	if ttl == NoExpiry {
		return -1 << 63
	}
	// v_s + ttl > now_s  <=>  v_s >= now_s - ttl + 1  <=>  v >= (now_s - ttl + 1) * 1000
	return (Seconds(nowMs) - ttl + 1) * 1000
}
