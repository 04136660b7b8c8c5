//go:build unix

package localengine

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (user and system,
// every thread: the garbage collector's workers included).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
