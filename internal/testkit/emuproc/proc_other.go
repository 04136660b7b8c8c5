//go:build !unix

package emuproc

import (
	"os"
	"syscall"
)

// Process groups and node_modules/.bin shell shims are Unix-only here.
const supported = false

func sysProcAttr() *syscall.SysProcAttr { return nil }

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
