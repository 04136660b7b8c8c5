// Package benchstat is for tablekit's own benchmarks only: what the
// interleaved benchmarks measure and report with, one copy for every package
// that compares two sides call by call ([Median], [ProcessCPU]).
package benchstat

import (
	"cmp"
	"slices"
)

// Median returns the median of xs (the upper one of an even count), or the
// zero value for none; xs is not modified. Interleaved benchmarks report
// medians because a shared machine's noise comes in spikes that swamp a
// mean.
func Median[T cmp.Ordered](xs []T) T {
	if len(xs) == 0 {
		var zero T
		return zero
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
