//go:build !unix

package aliyuntablestore_test

import "time"

// processCPU is not measured on this platform (the figures read 0).
func processCPU() time.Duration { return 0 }
