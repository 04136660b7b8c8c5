package benchstat

import (
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	in := []time.Duration{5, 1, 4, 2}
	for _, c := range []struct {
		d    []time.Duration
		want time.Duration
	}{{nil, 0}, {[]time.Duration{3}, 3}, {[]time.Duration{9, 1, 5}, 5}, {in, 4}} {
		if got := Median(c.d); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.d, got, c.want)
		}
	}
	if in[0] != 5 || in[3] != 2 {
		t.Errorf("Median sorted its argument: %v", in)
	}
}

func TestMedianFloat(t *testing.T) {
	if got := Median([]float64{2.5, -1, 7}); got != 2.5 {
		t.Errorf("Median = %v, want 2.5", got)
	}
}

// ProcessCPU grows while the process works, where it is measured.
func TestProcessCPU(t *testing.T) {
	if !HasProcessCPU {
		if ProcessCPU() != 0 {
			t.Fatal("ProcessCPU measured on a platform that says it does not")
		}
		return
	}
	c0 := ProcessCPU()
	x := 0
	for c1 := c0; c1 == c0; c1 = ProcessCPU() {
		for i := range 1_000_000 {
			x += i
		}
	}
	if x == 0 {
		t.Fatal("no work done")
	}
}
