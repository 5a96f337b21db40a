// Package benchstat holds the arithmetic the benchmark commands share:
// their reports give the median of each figure over the rounds.
package benchstat

import "slices"

// Median returns the median of v (the mean of the middle two for an even
// count), or 0 for none. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// MedianOf returns the median of f over rounds.
func MedianOf[T any](rounds []T, f func(T) float64) float64 {
	v := make([]float64, len(rounds))
	for i, r := range rounds {
		v[i] = f(r)
	}
	return Median(v)
}
