package rowmodel

import "github.com/tablekit/tablekit"

// Reads is what a write must learn about the stored row before it can be
// applied exactly (SPEC §7–9): the answer every adapter's choice of write
// path starts from. A store may need more than SPEC does (one that keeps a
// row as one record rewrites it whole, one with bookkeeping cells must not
// leave them alone), never less.
type Reads uint8

const (
	// ReadsNothing: what the write leaves visible does not depend on the
	// stored row: an unconditional PutRow or DeleteRow, or an unconditional
	// UpdateRow of Puts and DeleteColumns only (on a store that hides the
	// versions beyond MaxVersions when it reads, which an unconditional
	// write never needs to know).
	ReadsNothing Reads = iota
	// ReadsExistence: only whether the row exists (SPEC §7): the writes of
	// ReadsNothing under a row-existence condition with no column filter.
	ReadsExistence
	// ReadsRow: the row's visible cells: a column condition, an Increment
	// (its base is the latest visible value), or a DeleteVersion (which
	// versions stay visible after it).
	ReadsRow
)

// WriteReads returns what w must read first. It allocates nothing.
func WriteReads(w *tablekit.WriteRequest) Reads {
	if w.Condition.Column != nil {
		return ReadsRow
	}
	if w.Kind == tablekit.WriteUpdate {
		for i := range w.Changes {
			switch w.Changes[i].Kind {
			case tablekit.ChangeIncrement, tablekit.ChangeDeleteVersion:
				return ReadsRow
			}
		}
	}
	if w.Condition.Row != tablekit.Ignore {
		return ReadsExistence
	}
	return ReadsNothing
}
