//go:build unix

package indexbench

import (
	"syscall"
	"time"
)

// processCPU is the process's CPU time so far (user and system, every
// thread: the garbage collector's work included), or 0 if unknown.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
