//go:build unix

package dynalitetest

import "syscall"

const supported = true

// killGroup SIGKILLs dynalite's process group (its pgid is its pid, see
// sysProcAttr).
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
