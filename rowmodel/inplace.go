package rowmodel

import "github.com/tablekit/tablekit"

// InPlace reports whether an update of changes to a stored row of shape s
// may be applied by replacing cells, without Update: the table keeps one
// version of a column (MaxVersions 1), every cell of the row is visible at
// now (so Update's start, the visible cells, is the row as stored), every
// change is a Put of a distinct column at a visible version. Then, when
// each changed column has a cell in the row (of a version no later than
// the change's: the caller checks both while it finds the cells), Update
// returns the row's cells in their order, with each changed column's one
// cell replaced by the change's (its value and version), and no increments;
// the row's marker is kept. A store that keeps rows packed can so rewrite
// the changed cells alone and copy the others as they are. When a changed
// column has no cell, or a later one, the store applies Update instead.
//
// It is Update's rules for one case, not a second set of rules: the tests
// of this package check it against Update.
func InPlace(s Shape, opts *tablekit.TableOptions, changes []tablekit.Change, now int64) bool {
	if opts.MaxVersions != 1 || s.Versions != 1 || len(changes) == 0 {
		return false
	}
	oldest := OldestVisible(*opts, now)
	if s.Oldest < oldest {
		return false
	}
	for i := range changes {
		ch := &changes[i]
		if ch.Kind != tablekit.ChangePut || ch.Version < oldest {
			return false
		}
		for j := range i {
			if changes[j].Column == ch.Column {
				return false
			}
		}
	}
	return true
}
