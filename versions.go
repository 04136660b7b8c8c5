package tablekit

import (
	"sync"
	"time"
)

// Clock is the time that versions and TTL follow (default: [SystemClock]).
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a concurrency-safe Clock moved only by hand (zero: the epoch).
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

// TimeRange selects versions in [Start, End) milliseconds.
type TimeRange struct {
	Start int64 // inclusive
	End   int64 // exclusive
}

// Contains reports whether version v lies in the range.
func (r TimeRange) Contains(v int64) bool { return v >= r.Start && v < r.End }

// VersionAt returns t's version: Unix milliseconds, the unit of all versions.
func VersionAt(t time.Time) int64 { return t.UnixMilli() }

// VersionTime returns the time of version v (Unix milliseconds).
func VersionTime(v int64) time.Time { return time.UnixMilli(v) }
