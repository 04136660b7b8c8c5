//go:build unix

package emuproc

import "syscall"

const supported = true

// killGroup SIGKILLs the server's process group (its pgid is its pid, see
// sysProcAttr).
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
