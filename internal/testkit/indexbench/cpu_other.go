//go:build !unix

package indexbench

import "time"

// processCPU is unknown here: cpu-ns/op is not reported.
func processCPU() time.Duration { return 0 }
