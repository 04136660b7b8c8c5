package main

import (
	"fmt"
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
// that was visible at the source can be written. fillTable sets the
// table's own options back on every way out (success, error, interrupt).
//
// The widened MaxVersionOffset is one second short of the maximum
// (widenedOffset): a value no one picks, so that a table left widened by a
// killed run (SIGKILL, power loss: nothing can restore it then) is
// recognised later by widened, instead of being taken for the table's real
// options and carried on by the next import or copy.
func copyOptions(final tablekit.TableOptions) tablekit.TableOptions {
	return tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: final.MaxVersions, MaxVersionOffset: widenedOffset}
}

// widenedOffset is the MaxVersionOffset of copyOptions.
const widenedOffset = (tablekit.MaxOptionValue - 1) * time.Second

// widened reports whether o are copyOptions: the options a killed import
// or copy left behind.
func widened(o tablekit.TableOptions) bool {
	return o.TTL == tablekit.NoExpiry && o.MaxVersionOffset == widenedOffset
}

// widenedHelp says what to do about a table left widened.
func widenedHelp(table string) string {
	return fmt.Sprintf("table %q has the temporary options (ttl -1, max-version-offset %d) that an import or copy killed before it finished leaves behind; "+
		"its own options are not known: run that import or copy again to the end, or set them with tablekit alter %s --ttl SECONDS --max-version-offset SECONDS",
		table, int64(widenedOffset/time.Second), shellQuote(table))
}

// overlay is base with the non-zero fields of req (TableOptions' rule for
// UpdateTable); req nil is base.
func overlay(base tablekit.TableOptions, req *tablekit.TableOptions) tablekit.TableOptions {
	if req == nil {
		return base
	}
	if req.TTL != 0 {
		base.TTL = req.TTL
	}
	if req.MaxVersions != 0 {
		base.MaxVersions = req.MaxVersions
	}
	if req.MaxVersionOffset != 0 {
		base.MaxVersionOffset = req.MaxVersionOffset
	}
	return base
}

// defaultOptions are a new table's options where CreateTable is given none.
var defaultOptions = tablekit.TableOptions{TTL: tablekit.NoExpiry, MaxVersions: tablekit.DefaultMaxVersions, MaxVersionOffset: tablekit.DefaultMaxVersionOffset}

// alterCommand is the command that sets a table's options to o.
func alterCommand(table string, o tablekit.TableOptions) string {
	j := optionsToJSON(o)
	return fmt.Sprintf("tablekit alter %s --ttl %d --max-versions %d --max-version-offset %d", shellQuote(table), j.TTL, j.MaxVersions, j.MaxVersionOffset)
}
