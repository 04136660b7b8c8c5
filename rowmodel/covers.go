package rowmodel

import (
	"slices"

	"github.com/tablekit/tablekit"
)

// Covers reports whether names (a ReadSpec.Columns) names the column of
// every one of cells, in stored order: then Project keeps them all, and a
// read of the row returns what the same read without its projection
// returns. An engine that reads a row whole when its shape allows (a
// [WholeRead] of the spec without Columns) can so serve a read naming every
// column, as YCSB's reads do, without evaluating it cell by cell.
func Covers(names []string, cells []tablekit.Column) bool {
	if names == nil { // no projection: every column
		return true
	}
	if len(names) == len(cells) { // the usual case: one cell of each column named, in order
		i := 0
		for i < len(cells) && cells[i].Name == names[i] {
			i++
		}
		if i == len(cells) {
			return true
		}
	}
	if !slices.IsSorted(names) { // not from a Client
		for i := range cells {
			if !slices.Contains(names, cells[i].Name) {
				return false
			}
		}
		return true
	}
	j := 0
	for i := range cells {
		for j < len(names) && names[j] < cells[i].Name {
			j++
		}
		if j == len(names) || names[j] != cells[i].Name {
			return false
		}
	}
	return true
}

// MayCover reports whether a stored row of n cells may be covered by
// spec's projection (Covers) and read whole: such a row has at most
// spec.MaxVersions cells of each column named, so one of more cells is
// not, and an engine need not decode it to find out. A spec without a
// projection covers every row.
func MayCover(spec *tablekit.ReadSpec, n int) bool {
	return spec.Columns == nil || n <= len(spec.Columns)*spec.MaxVersions
}
