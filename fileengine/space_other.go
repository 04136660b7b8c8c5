//go:build !linux

package fileengine

// freeSpace is not known on this platform.
func freeSpace(string) (int64, bool) { return 0, false }
