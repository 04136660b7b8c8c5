//go:build !unix

package gcpbigtable_test

import "time"

// processCPU is not measured on this platform; pair then reports no CPU ratio.
func processCPU() time.Duration { return 0 }
