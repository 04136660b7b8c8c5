package main

import (
	"time"

	"github.com/tablekit/tablekit"
)

// The one place that converts table options to and from the tool's
// units (seconds), so a change of TableOptions' field types stays here.

func optionsToJSON(o tablekit.TableOptions) jsonOptions {
	return jsonOptions{TTL: o.TTLSeconds(), MaxVersions: o.MaxVersions, MaxVersionOffset: o.MaxVersionOffsetSeconds()}
}

func (j jsonOptions) options() tablekit.TableOptions {
	return tablekit.TableOptions{TTL: time.Duration(j.TTL) * time.Second, MaxVersions: j.MaxVersions, MaxVersionOffset: time.Duration(j.MaxVersionOffset) * time.Second}
}

// copyOptions are the options a table is written with while copy or import
// fills it: nothing expires and any version is accepted, so every version
// that was visible at the source can be written. The table's own options
// are set once the rows are in.
func copyOptions(final tablekit.TableOptions) tablekit.TableOptions {
	return tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: final.MaxVersions, MaxVersionOffset: tablekit.MaxOptionValue * time.Second}
}
