package tablekit

import (
	"fmt"
	"sync"
	"time"
)

// Clock tells the engine's time. Versions written without one, the version
// window and TTL all read it. [SystemClock] is the default; tests inject a
// [ManualClock] so that TTL and versions are deterministic.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when told to. It is safe for
// concurrent use. The zero ManualClock reads the Unix epoch.
type ManualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewManualClock returns a ManualClock reading t.
func NewManualClock(t time.Time) *ManualClock { return &ManualClock{t: t} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.UnixMilli(0)
	}
	return c.t
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Advance moves the clock forward by d and returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		c.t = time.UnixMilli(0)
	}
	c.t = c.t.Add(d)
	return c.t
}

// NowMillis returns the clock's time in milliseconds since the Unix epoch.
func NowMillis(c Clock) int64 { return c.Now().UnixMilli() }

// floorDiv is division rounding toward negative infinity, so that versions
// before 1970 fall in the right second.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Seconds returns floor(ms/1000), the second SPEC §5 compares in.
func Seconds(ms int64) int64 { return floorDiv(ms, 1000) }

// CheckVersion applies SPEC §5's write window to one version: with now_s =
// floor(now/1000) and v_s = floor(version/1000), it requires
// now_s - offset <= v_s < now_s + offset and, when TTL is not NoExpiry,
// v_s + TTL > now_s. It returns a description of the violated bound, or "".
func CheckVersion(opts TableOptions, version, nowMs int64) string {
	nowS, vS := Seconds(nowMs), Seconds(version)
	off := opts.MaxVersionOffset
	switch {
	case version < 0:
		return fmt.Sprintf("version %d is negative", version)
	case vS < nowS-off:
		return fmt.Sprintf("version %d is more than MaxVersionOffset %ds before now (%d)", version, off, nowMs)
	case vS >= nowS+off:
		return fmt.Sprintf("version %d is MaxVersionOffset %ds or more after now (%d)", version, off, nowMs)
	case opts.TTL != NoExpiry && vS+opts.TTL <= nowS:
		return fmt.Sprintf("version %d is already expired under TTL %ds at now (%d)", version, opts.TTL, nowMs)
	}
	return ""
}

// TimeRange selects versions in [Start, End) milliseconds.
type TimeRange struct {
	Start int64 // inclusive
	End   int64 // exclusive
}

// Contains reports whether version v lies in the range.
func (r TimeRange) Contains(v int64) bool { return v >= r.Start && v < r.End }
