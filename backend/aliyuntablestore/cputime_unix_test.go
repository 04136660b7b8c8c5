//go:build unix

package aliyuntablestore_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far (user and
// system, every thread): the in-process server's work counts as well as
// the client's, the same for both sides of a comparison, while other
// processes on the machine do not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
