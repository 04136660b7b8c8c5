//go:build !unix

package benchstat

import "time"

// HasProcessCPU reports whether ProcessCPU measures on this platform.
const HasProcessCPU = false

// ProcessCPU is not measured on this platform: it returns 0, and benchmarks
// report no CPU figures.
func ProcessCPU() time.Duration { return 0 }
