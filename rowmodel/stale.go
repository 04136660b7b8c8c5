package rowmodel

import (
	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/internal/base"
)

// Stale options (SPEC §3 and §5). A Client may write with options older
// than the table's. Two rules keep such a write harmless on a store that
// applies options on the client side (trims versions as it writes, hides
// them as it reads):
//
//   - It never removes a version written under newer options: a row
//     carries the Generation it was last written under, and [ApplyTo]
//     refuses to rewrite a row newer than the request.
//   - It never reveals a version newer options hide. Lowering MaxVersions
//     hides a column's older versions without rewriting any row, so the
//     row keeps the Generation of its last write, the stale request's
//     own; and a write that removes a stored version of a column while
//     keeping an older one ([Reveals]) would bring that older one into
//     view. Such a write is exact only under the table's current options:
//     the backend confirms that the store's Generation is still the
//     request's ([CheckGeneration]) before it commits it.
//
// A backend whose store applies the current options itself (the local and
// file engines, Tablestore) needs neither.

// CheckGeneration returns nil when a request built from meta may be
// applied to a table whose current options Generation is current, and
// otherwise the error that makes the Client read the table again and
// retry (it matches driver.ErrStaleMeta and tablekit.ErrUnavailable).
// A current Generation of 0 (a store that counts none) never refuses.
func CheckGeneration(meta *tablekit.TableMeta, current int64) error {
	if current <= meta.Generation {
		return nil
	}
	return tablekit.WrapError(tablekit.ErrUnavailable, base.ErrStaleMeta,
		"table %q: the options are at generation %d, the request has %d", meta.Name, current, meta.Generation)
}

// Reveals reports whether the write that turns the stored row old into
// next (what [Apply] returned; nil for none) removes a stored version of a
// column while keeping an older stored version of the same column. Under
// options that hide more versions than the request's (a MaxVersions
// lowered since the request's Meta was read), that older version may be
// hidden, and the write would bring it back into view (SPEC §5): a
// backend that applies options on the client side applies such a write
// only after [CheckGeneration] against the store's current Generation.
// Only an UpdateRow's DeleteVersion does this; a PutRow replaces every
// stored version, and trimming removes the oldest ones.
func Reveals(w *tablekit.WriteRequest, old, next *Row) bool {
	if w.Kind != tablekit.WriteUpdate || old == nil || next == nil {
		return false
	}
	deletes := false
	for i := range w.Changes {
		if w.Changes[i].Kind == tablekit.ChangeDeleteVersion {
			deletes = true
			break
		}
	}
	if !deletes {
		return false
	}
	// Stored order: per column, newest first. A column reveals when one of
	// its stored versions is gone from next and a stored version older
	// than it is still in next.
	for i := 0; i < len(old.Cells); {
		name := old.Cells[i].Name
		j := i
		for j < len(old.Cells) && old.Cells[j].Name == name {
			j++
		}
		removed := false
		for _, c := range old.Cells[i:j] { // newest first
			_, kept := findCell(next.Cells, c.Name, c.Version)
			if !kept {
				removed = true
			} else if removed {
				return true
			}
		}
		i = j
	}
	return false
}
