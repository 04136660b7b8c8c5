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
