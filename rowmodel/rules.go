package rowmodel

import (
	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/base"
)

// Seconds returns floor(ms/1000), the second SPEC §5 and §6 compare in
// (versions before 1970 fall in the right second).
func Seconds(ms int64) int64 { return base.Seconds(ms) }

// CellVisible is SPEC §6's visibility rule for one cell: a cell of version
// (milliseconds) is visible at now iff the table's TTL is NoExpiry or
// floor(version/1000) + TTL > floor(now/1000). Every engine and adapter
// uses this one function, or a translation of it into a native predicate
// built with [OldestVisible].
func CellVisible(opts tablekit.TableOptions, version, now int64) bool {
	return base.Visible(opts.TTLSeconds(), version, now)
}

// OldestVisible returns the smallest version (milliseconds) visible at now
// under opts' TTL, or minInt64 when nothing expires: version >=
// OldestVisible(opts, now) is exactly CellVisible(opts, version, now).
func OldestVisible(opts tablekit.TableOptions, now int64) int64 {
	return base.OldestVisible(opts.TTLSeconds(), now)
}

// CheckVersion applies SPEC §5's write window to one version. It returns a
// description of the violated bound, or "". The Client checks every version
// it sends; a backend needs it only to check versions of its own (the
// Tablestore test server checks what its clients send).
func CheckVersion(opts tablekit.TableOptions, version, now int64) string {
	return base.CheckVersion(opts.TTLSeconds(), opts.MaxVersionOffsetSeconds(), version, now)
}
