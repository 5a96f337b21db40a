package benchstat

import "testing"

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		v    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		in := append([]float64(nil), tt.v...)
		if got := Median(tt.v); got != tt.want {
			t.Errorf("Median(%v): got %v, want %v", tt.v, got, tt.want)
		}
		for i := range in {
			if in[i] != tt.v[i] {
				t.Errorf("Median(%v) reordered its input", in)
			}
		}
	}
	type round struct{ x float64 }
	if got := MedianOf([]round{{5}, {1}, {3}}, func(r round) float64 { return r.x }); got != 3 {
		t.Errorf("MedianOf: got %v, want 3", got)
	}
}
