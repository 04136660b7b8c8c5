package emuproc

import "syscall"

// sysProcAttr puts the server in its own process group (so stop can kill the
// whole group) and has the kernel SIGKILL it if the test binary dies without
// running cleanups (go test -timeout panic, SIGKILL, ...).
//
// Pdeathsig fires when the OS thread that started the child exits; the Go
// runtime only retires threads of goroutines that exit while locked with
// runtime.LockOSThread, so do not call Start from such a goroutine.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
