package enginekit_test

import (
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/enginekit"
)

// TestLockStripes: the stripes named (repeats allowed) are locked, the
// others not; unlock releases each once, and a second unlock does nothing.
func TestLockStripes(t *testing.T) {
	var locks [4]sync.Mutex
	unlock := enginekit.LockStripes(locks[:], []int{2, 0, 2})
	for i := range locks {
		if got := locks[i].TryLock(); got != (i == 1 || i == 3) {
			t.Errorf("stripe %d: TryLock %v while held", i, got)
		} else if got {
			locks[i].Unlock()
		}
	}
	unlock()
	unlock() // nothing: a second Unlock of a Mutex would panic
	for i := range locks {
		if !locks[i].TryLock() {
			t.Errorf("stripe %d still locked after unlock", i)
		}
	}
}
