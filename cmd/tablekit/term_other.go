//go:build !linux

package main

import "os"

// isTerminal reports whether f is a character device, the closest a
// portable check comes to a terminal (it also says yes for /dev/null).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
