//go:build !linux

package s3bench

// cpuSample is not measured outside Linux: phases report no CPU figures.
type cpuSample struct{ busy, ours float64 }

func sampleCPU([]int) cpuSample { return cpuSample{} }

func syncDisks() {}
