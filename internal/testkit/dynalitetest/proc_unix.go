//go:build unix && !linux

package dynalitetest

import "syscall"

// sysProcAttr puts dynalite in its own process group so stop can kill the
// whole group. Without Linux's Pdeathsig, a test binary killed before its
// cleanups run leaves dynalite running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
