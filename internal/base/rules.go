package base

// SPEC.md's arithmetic that both the root package and the packages beside
// it need (names, the write window, visibility), in terms of plain
// integers. The root package validates with it; package rowmodel exports
// it, in terms of TableOptions, for adapters.

import "fmt"

// NoExpiry is the TTL of a table whose cells never expire.
const NoExpiry = -1

// ValidName reports whether name is a valid table or column name (SPEC §1):
// 1-255 bytes of [A-Za-z_][A-Za-z0-9_]*.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Seconds returns floor(ms/1000), the second SPEC §5 and §6 compare in, so
// that versions before 1970 fall in the right second.
func Seconds(ms int64) int64 {
	q := ms / 1000
	if ms%1000 != 0 && ms < 0 {
		q--
	}
	return q
}

// Visible is SPEC §6's rule for one cell: visible at nowMs iff ttl is
// NoExpiry or floor(version/1000) + ttl > floor(nowMs/1000).
func Visible(ttl, version, nowMs int64) bool {
	return ttl == NoExpiry || Seconds(version)+ttl > Seconds(nowMs)
}

// OldestVisible returns the smallest version visible at nowMs under ttl,
// or minInt64 when nothing expires: version >= OldestVisible(ttl, now) is
// exactly Visible(ttl, version, now).
func OldestVisible(ttl, nowMs int64) int64 {
	if ttl == NoExpiry {
		return -1 << 63
	}
	// v_s + ttl > now_s  <=>  v_s >= now_s - ttl + 1  <=>  v >= (now_s - ttl + 1) * 1000
	return (Seconds(nowMs) - ttl + 1) * 1000
}

// CheckVersion applies SPEC §5's write window to one version: with now_s =
// floor(now/1000) and v_s = floor(version/1000), it requires
// now_s - offset <= v_s < now_s + offset and, when ttl is not NoExpiry,
// v_s + ttl > now_s. It returns a description of the violated bound, or "".
// A version given in seconds rather than milliseconds is named as such.
func CheckVersion(ttl, offset, version, nowMs int64) string {
	nowS, vS := Seconds(nowMs), Seconds(version)
	switch {
	case version < 0:
		return fmt.Sprintf("version %d is negative", version)
	case vS < nowS-offset:
		why := fmt.Sprintf("version %d is more than MaxVersionOffset %ds before now (%d)", version, offset, nowMs)
		if s := version - nowMs/1000; s > -offset && s < offset {
			why += "; versions are milliseconds since the Unix epoch, and this one looks like seconds"
		}
		return why
	case vS >= nowS+offset:
		return fmt.Sprintf("version %d is MaxVersionOffset %ds or more after now (%d)", version, offset, nowMs)
	case ttl != NoExpiry && vS+ttl <= nowS:
		return fmt.Sprintf("version %d is already expired under TTL %ds at now (%d)", version, ttl, nowMs)
	}
	return ""
}
