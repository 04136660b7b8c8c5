package enginekit

import (
	"slices"
	"sync"
)

// LockStripes locks the locks of stripes at the indexes held (any order,
// repeats allowed) in ascending index order, so that writers of several
// rows never deadlock, and returns their unlock, which does nothing when
// called again. held is sorted and compacted in place.
func LockStripes[S any, L interface {
	*S
	sync.Locker
}](stripes []S, held []int) (unlock func()) {
	slices.Sort(held)
	held = slices.Compact(held)
	for _, s := range held {
		L(&stripes[s]).Lock()
	}
	return func() {
		for _, s := range held {
			L(&stripes[s]).Unlock()
		}
		held = nil
	}
}
