//go:build unix && !linux

package emuproc

import "syscall"

// sysProcAttr puts the server in its own process group so stop can kill the
// whole group. Without Linux's Pdeathsig, a test binary killed before its
// cleanups run leaves the server running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
