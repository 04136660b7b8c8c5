//go:build unix

package benchstat

import (
	"syscall"
	"time"
)

// HasProcessCPU reports whether ProcessCPU measures on this platform.
const HasProcessCPU = true

// ProcessCPU returns the CPU time the process has used (user and system,
// every thread: the garbage collector's workers and an in-process server's
// work included, the same for both sides of a comparison, while other
// processes on the machine do not count), or 0 if it cannot be read.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
