// Package benchstat holds the arithmetic that the interleaved benchmarks
// report with: one copy, for every package that compares two sides call
// by call.
package benchstat

import (
	"slices"
	"time"
)

// Median returns the median of d (the upper one of an even count), or 0
// for none; d is not modified. Interleaved benchmarks report medians
// because a shared machine's noise comes in spikes that swamp a mean.
func Median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
